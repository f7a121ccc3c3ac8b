package tencentcloud

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tag "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// CredentialsSource says where credentials come from.
type CredentialsSource string

const (
	// CredentialsStatic uses SecretID/SecretKey (and Token for temporary
	// credentials), typically from a Secret.
	CredentialsStatic CredentialsSource = "Static"
	// CredentialsDefaultChain uses the SDK's providers in order: environment
	// (TENCENTCLOUD_SECRET_ID/KEY), the profile file, TKE pod identity (OIDC
	// role, when its environment is present), then the CVM instance role.
	CredentialsDefaultChain CredentialsSource = "DefaultChain"
	// CredentialsNone is for the local emulator. The SDK always signs, so
	// "none" means the emulator's built-in test keys (EmulatorSecretID/Key).
	CredentialsNone CredentialsSource = "None"
)

// The emulator's built-in test keys (internal/cloudsim/core uses the same
// literals). They are not secrets.
const (
	EmulatorSecretID  = "AKIDedgeplaneEmulator0000000000000"
	EmulatorSecretKey = "edgeplaneEmulatorSecretKey0000000"
)

// Credentials select and carry credentials; String, GoString and LogValue
// redact the secrets.
type Credentials struct {
	Source    CredentialsSource
	SecretID  string
	SecretKey string
	Token     string
}

// String redacts secrets.
func (c Credentials) String() string {
	return fmt.Sprintf("{Source:%s SecretID:%s SecretKey:%s Token:%s}", c.Source, redact(c.SecretID), redact(c.SecretKey), redact(c.Token))
}

// GoString redacts secrets in %#v.
func (c Credentials) GoString() string { return "tencentcloud.Credentials" + c.String() }

// LogValue redacts secrets in structured logs.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("source", string(c.Source)), slog.Bool("hasSecretID", c.SecretID != ""))
}

func redact(s string) string {
	if s == "" {
		return `""`
	}
	return "<redacted>"
}

// RateLimits are the client-side per-action buckets. Tencent publishes a
// requests-per-second limit per action; the bucket holds one second's
// worth. Actions missing from PerAction use DefaultRateLimits'.
type RateLimits struct {
	Disabled  bool
	PerAction map[string]cloud.RateLimit
}

// DefaultRateLimits are Tencent's documented per-action limits (writes
// 10/s, DescribeAddresses and DescribeTaskResult 20/s, cvm
// DescribeInstances 40/s, DescribeNetworkInterfaces and tag
// DescribeResourcesByTags 100/s, tag ModifyResourceTags 20/s).
func DefaultRateLimits() RateLimits {
	perSecond := func(n int) cloud.RateLimit { return cloud.RateLimit{QPS: float64(n), Burst: n} }
	return RateLimits{PerAction: map[string]cloud.RateLimit{
		"AllocateAddresses":   perSecond(10),
		"AssociateAddress":    perSecond(10),
		"DisassociateAddress": perSecond(10),
		"ReleaseAddresses":    perSecond(10),
		"DescribeAddresses":   perSecond(20),
		"DescribeTaskResult":  perSecond(20),
		// https://www.tencentcloud.com/document/api/215/15817
		"DescribeNetworkInterfaces": perSecond(100),
		"DescribeInstances":         perSecond(40),
		"DescribeResourcesByTags":   perSecond(100),
		// Tag write actions: 20/s (https://www.tencentcloud.com/document/api/651/33003).
		"ModifyResourceTags": perSecond(20),
	}}
}

// Interval is the time between two tokens of action's bucket (0 when the
// limits are off): how long a caller batching that action's look-ups
// should collect them so each batch costs at most one token.
func (l RateLimits) Interval(action string) time.Duration {
	if l.Disabled {
		return 0
	}
	rl := l.PerAction[action].Or(DefaultRateLimits().PerAction[action])
	if rl.QPS <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / rl.QPS)
}

// Scaled returns Tencent's documented limits (DefaultRateLimits) with
// every action's rate and bucket multiplied by s (a bucket holds one
// second's worth): an account with raised limits, or an emulator whose
// rate limits run on a faster clock. s <= 0 or 1: the defaults. It is
// aws.Scaled's twin; both scale through cloud.RateLimit.Scale.
func Scaled(s float64) RateLimits {
	def := DefaultRateLimits()
	if s <= 0 || s == 1 {
		return def
	}
	for k, v := range def.PerAction {
		def.PerAction[k] = v.Scale(s, s)
	}
	return def
}

// RetryOptions configure the SDK's built-in retries.
type RetryOptions struct {
	// RateLimitMaxRetries: retries after RequestLimitExceeded (default 10;
	// negative: none).
	RateLimitMaxRetries int
	// NetworkFailureMaxRetries: retries after a network failure or timeout
	// (default 3; negative: none). The SDK only does this for requests with
	// a ClientToken field (AllocateAddresses), where the token makes it safe.
	NetworkFailureMaxRetries int
	// BaseDelay is the first backoff step (default 500ms), doubling per
	// retry with full jitter, capped at MaxBackoff (default 20s).
	BaseDelay  time.Duration
	MaxBackoff time.Duration
}

// Options configure the Tencent clients. The CRD glue fills these from a
// ProviderConfig; nothing here depends on Kubernetes types.
type Options struct {
	// Region is required (ap-hongkong, …).
	Region string
	// Endpoint overrides every service's endpoint, e.g. the emulator at
	// http://127.0.0.1:8080 (the scheme selects HTTP or HTTPS; a bare
	// host[:port] means HTTPS). Empty uses <service>.tencentcloudapi.com.
	Endpoint string
	// RootDomain replaces tencentcloudapi.com when Endpoint is empty (for
	// example internal.tencentcloudapi.com inside a VPC).
	RootDomain string
	// Credentials select the credential source.
	Credentials Credentials
	// RateLimits are the client-side buckets.
	RateLimits RateLimits
	// Retry configures the SDK's retries.
	Retry RetryOptions
	// HTTPClient is optional; its Transport is reused.
	HTTPClient *http.Client
	// Timeout bounds each HTTP attempt (default 10s).
	Timeout time.Duration
	// TaskPollInterval is how often WaitForTask polls (default 1s).
	TaskPollInterval time.Duration
	// Language of error messages: en-US (default) or zh-CN.
	Language string
	// CredentialBackoff bounds the calls of an account whose credentials
	// Tencent Cloud rejects (see cloud.CredentialGate).
	CredentialBackoff cloud.CredentialBackoff
	// Clock is the credential gate's clock (nil: the real clock), for tests.
	Clock clock.PassiveClock
	// Gate is the account's credential gate; nil: a new one.
	Gate *cloud.CredentialGate
}

func (o *Options) defaults() {
	def := DefaultRateLimits().PerAction
	merged := make(map[string]cloud.RateLimit, len(def))
	for k, v := range def {
		merged[k] = o.RateLimits.PerAction[k].Or(v)
	}
	for k, v := range o.RateLimits.PerAction {
		if _, ok := merged[k]; !ok {
			merged[k] = v
		}
	}
	o.RateLimits.PerAction = merged
	if o.Retry.RateLimitMaxRetries == 0 {
		o.Retry.RateLimitMaxRetries = 10
	}
	if o.Retry.NetworkFailureMaxRetries == 0 {
		o.Retry.NetworkFailureMaxRetries = 3
	}
	if o.Retry.BaseDelay == 0 {
		o.Retry.BaseDelay = 500 * time.Millisecond
	}
	if o.Retry.MaxBackoff == 0 {
		o.Retry.MaxBackoff = 20 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.TaskPollInterval == 0 {
		o.TaskPollInterval = time.Second
	}
	if o.Language == "" {
		o.Language = "en-US"
	}
}

func (o *Options) validate() error {
	if o.Region == "" {
		return fmt.Errorf("region is required")
	}
	if _, _, err := splitEndpoint(o.Endpoint); err != nil {
		return err
	}
	switch o.Credentials.Source {
	case CredentialsStatic:
		if o.Credentials.SecretID == "" || o.Credentials.SecretKey == "" {
			return fmt.Errorf("static credentials need a SecretId and a SecretKey")
		}
	case CredentialsDefaultChain, CredentialsNone:
	default:
		return fmt.Errorf("unknown credentials source %q", o.Credentials.Source)
	}
	return nil
}

// splitEndpoint turns an endpoint URL into the SDK's HttpProfile.Endpoint
// (host[:port][/path]) and Scheme.
func splitEndpoint(endpoint string) (host, scheme string, err error) {
	if endpoint == "" {
		return "", "HTTPS", nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" || u.User != nil {
		return "", "", fmt.Errorf("endpoint %q must be an http(s) URL or host[:port]", endpoint)
	}
	host = u.Host + strings.TrimSuffix(u.Path, "/")
	return host, strings.ToUpper(u.Scheme), nil
}

func credential(opts Options) (common.CredentialIface, error) {
	switch opts.Credentials.Source {
	case CredentialsStatic:
		c := opts.Credentials
		if c.Token != "" {
			return common.NewTokenCredential(c.SecretID, c.SecretKey, c.Token), nil
		}
		return common.NewCredential(c.SecretID, c.SecretKey), nil
	case CredentialsNone:
		return common.NewCredential(EmulatorSecretID, EmulatorSecretKey), nil
	default:
		providers := []common.Provider{common.DefaultEnvProvider(), common.DefaultProfileProvider()}
		if p, err := common.DefaultTkeOIDCRoleArnProvider(); err == nil {
			providers = append(providers, p)
		}
		providers = append(providers, common.DefaultCvmRoleProvider())
		cred, err := common.NewProviderChain(providers).GetCredential()
		if err != nil {
			return nil, fmt.Errorf("resolving credentials from the default chain: %w", err)
		}
		return cred, nil
	}
}

// clientProfile is the SDK profile: endpoint, the SDK's retries with our
// backoff, no whole-second SDK timeout (the transport bounds each attempt
// precisely instead), no region breaker.
func clientProfile(opts Options) *profile.ClientProfile {
	host, scheme, _ := splitEndpoint(opts.Endpoint) // validated
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = host
	cpf.HttpProfile.Scheme = scheme
	cpf.HttpProfile.RootDomain = opts.RootDomain
	cpf.HttpProfile.ReqTimeout = 0
	cpf.Language = opts.Language
	cpf.DisableRegionBreaker = true
	backoff := func(i int) time.Duration {
		return fullJitter(opts.Retry.BaseDelay, opts.Retry.MaxBackoff, i, rand.Float64())
	}
	cpf.RateLimitExceededMaxRetries = max(opts.Retry.RateLimitMaxRetries, 0)
	cpf.RateLimitExceededRetryDuration = backoff
	cpf.NetworkFailureMaxRetries = max(opts.Retry.NetworkFailureMaxRetries, 0)
	cpf.NetworkFailureRetryDuration = backoff
	return cpf
}

// fullJitter is rand[0, min(max, base*2^attempt)).
func fullJitter(base, maxDelay time.Duration, attempt int, r float64) time.Duration {
	ceiling := maxDelay
	if attempt < 32 {
		if d := base << uint(attempt); d > 0 && d < maxDelay {
			ceiling = d
		}
	}
	return time.Duration(r * float64(ceiling))
}

// APIs are the three configured SDK clients, instrumented with metrics.
type APIs struct {
	VPC VPCAPI
	Tag TagAPI
	CVM CVMAPI
	// Gate is the credential gate the three share (nil for fakes).
	Gate *cloud.CredentialGate
	// Region is the clients' region (tag API resource names carry it).
	Region string
}

// NewAPIs builds the vpc, tag and cvm SDK clients edgeplane uses, sharing
// one rate-limited, per-attempt-timeout transport.
func NewAPIs(opts Options) (*APIs, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("configuring Tencent Cloud clients: %w", err)
	}
	cred, err := credential(opts)
	if err != nil {
		return nil, fmt.Errorf("configuring Tencent Cloud credentials: %w", err)
	}
	var base http.RoundTripper
	if opts.HTTPClient != nil {
		base = opts.HTTPClient.Transport
	}
	transport := newRateLimitedTransport(cloud.AttemptTimeout(base, opts.Timeout), opts.RateLimits)

	v, err := vpc.NewClient(cred, opts.Region, clientProfile(opts))
	if err != nil {
		return nil, fmt.Errorf("creating the VPC client: %w", err)
	}
	v.WithHttpTransport(transport)
	t, err := tag.NewClient(cred, opts.Region, clientProfile(opts))
	if err != nil {
		return nil, fmt.Errorf("creating the tag client: %w", err)
	}
	t.WithHttpTransport(transport)
	c, err := cvm.NewClient(cred, opts.Region, clientProfile(opts))
	if err != nil {
		return nil, fmt.Errorf("creating the CVM client: %w", err)
	}
	c.WithHttpTransport(transport)
	// One gate for the three services: they share the account.
	gate := opts.Gate
	if gate == nil {
		gate = cloud.NewCredentialGate(opts.CredentialBackoff, opts.Clock)
	}
	return &APIs{VPC: instrumentedVPC{api: v, gate: gate}, Tag: instrumentedTag{api: t, gate: gate}, CVM: instrumentedCVM{api: c, gate: gate}, Gate: gate,
		Region: opts.Region}, nil
}

// rateLimitedTransport takes a token from the action's bucket (the
// X-TC-Action header) before every HTTP attempt, the SDK's own retries
// included, as every attempt costs a token on Tencent's side.
type rateLimitedTransport struct {
	base     http.RoundTripper
	limits   RateLimits
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func newRateLimitedTransport(base http.RoundTripper, limits RateLimits) *rateLimitedTransport {
	return &rateLimitedTransport{base: base, limits: limits, limiters: map[string]*rate.Limiter{}}
}

func (t *rateLimitedTransport) limiter(action string) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.limiters[action]
	if !ok {
		rl, known := t.limits.PerAction[action]
		if !known {
			// Unknown actions get the most conservative published limit.
			rl = cloud.RateLimit{QPS: 10, Burst: 10}
		}
		l = rl.ClientSide().NewLimiter()
		t.limiters[action] = l
	}
	return l
}

func (t *rateLimitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.limits.Disabled {
		action := req.Header.Get("X-TC-Action")
		start := time.Now()
		if err := t.limiter(action).Wait(req.Context()); err != nil {
			return nil, fmt.Errorf("waiting for the client-side rate limit of %s: %w", action, err)
		}
		cloud.ObserveRateLimitWait(cloud.ProviderTencentCloud, action, time.Since(start))
	}
	return t.base.RoundTrip(req)
}
