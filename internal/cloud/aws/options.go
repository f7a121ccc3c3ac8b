package aws

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// CredentialsSource says where credentials come from.
type CredentialsSource string

const (
	// CredentialsStatic uses the access key in Credentials (from a Secret).
	CredentialsStatic CredentialsSource = "Static"
	// CredentialsDefaultChain uses the SDK's default chain: environment,
	// shared config, web identity (IRSA), EKS Pod Identity / container
	// credentials, then the instance role (IMDS).
	CredentialsDefaultChain CredentialsSource = "DefaultChain"
	// CredentialsNone is for the local emulator, which checks SigV4 like
	// EC2 does: "none" means signing with the emulator's well-known key
	// pair (EmulatorAccessKeyID/EmulatorSecretAccessKey), never an
	// unsigned request.
	CredentialsNone CredentialsSource = "None"
)

// The emulator's well-known key pair (internal/cloudsim/core uses the same
// literals). They are not secrets.
const (
	EmulatorAccessKeyID     = "AKIAEDGEPLANESIM0000"
	EmulatorSecretAccessKey = "edgeplaneEmulatorSecretAccessKey00000000"
)

// Credentials select and carry credentials. The secret fields never appear
// in logs or fmt output: String, GoString and LogValue redact them.
type Credentials struct {
	Source          CredentialsSource
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// String redacts secrets.
func (c Credentials) String() string {
	return fmt.Sprintf("{Source:%s AccessKeyID:%s SecretAccessKey:%s SessionToken:%s}",
		c.Source, redact(c.AccessKeyID), redact(c.SecretAccessKey), redact(c.SessionToken))
}

// GoString redacts secrets in %#v.
func (c Credentials) GoString() string { return "aws.Credentials" + c.String() }

// LogValue redacts secrets in structured logs.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("source", string(c.Source)), slog.Bool("hasAccessKey", c.AccessKeyID != ""))
}

func redact(s string) string {
	if s == "" {
		return `""`
	}
	return "<redacted>"
}

// RateLimits are the client-side token buckets. EC2 evaluates each API
// separately, so there is one bucket per action, sized by the action's
// category. Zero-valued fields take DefaultRateLimits' values.
type RateLimits struct {
	// Disabled switches client-side limiting off (the server still
	// throttles; the retryer handles that).
	Disabled bool
	// Mutating: AllocateAddress, AssociateAddress, DisassociateAddress,
	// ReleaseAddress (EC2 default 50 burst, 5/s).
	Mutating cloud.RateLimit
	// NonMutating: DescribeAddresses, filtered or paginated
	// DescribeNetworkInterfaces (100 burst, 20/s).
	NonMutating cloud.RateLimit
	// UnfilteredNonMutating: DescribeNetworkInterfaces with neither filter
	// nor pagination (50 burst, 10/s).
	UnfilteredNonMutating cloud.RateLimit
	// Tags: CreateTags, DeleteTags (100 burst, 10/s).
	Tags cloud.RateLimit
	// PerAction overrides the bucket of one action, keyed by operation name
	// ("AllocateAddress").
	PerAction map[string]cloud.RateLimit
}

// DefaultRateLimits are EC2's documented default buckets.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		Mutating:              cloud.RateLimit{QPS: 5, Burst: 50},
		NonMutating:           cloud.RateLimit{QPS: 20, Burst: 100},
		UnfilteredNonMutating: cloud.RateLimit{QPS: 10, Burst: 50},
		Tags:                  cloud.RateLimit{QPS: 10, Burst: 100},
	}
}

// RetryOptions configure the SDK's standard retryer.
type RetryOptions struct {
	// MaxAttempts per call, first attempt included (default 10, as the AWS
	// Load Balancer Controller uses; the SDK default of 3 gives up too fast
	// under throttling).
	MaxAttempts int
	// BaseDelay is the first backoff step (default 500ms); backoff doubles
	// per attempt with full jitter.
	BaseDelay time.Duration
	// MaxBackoff caps one backoff (default 20s, the SDK default).
	MaxBackoff time.Duration
}

// Options configure the EC2 client. The CRD glue fills these from a
// ProviderConfig; nothing here depends on Kubernetes types.
type Options struct {
	// Region is required.
	Region string
	// Endpoint overrides the EC2 endpoint (for example the emulator at
	// http://127.0.0.1:4566). Empty uses the SDK's endpoint resolution.
	Endpoint string
	// Credentials select the credential source.
	Credentials Credentials
	// RateLimits are the client-side buckets.
	RateLimits RateLimits
	// Retry configures the standard retryer.
	Retry RetryOptions
	// HTTPClient is optional; its Transport is reused.
	HTTPClient *http.Client
	// Timeout bounds each HTTP attempt (default 10s). The call as a whole is
	// bounded by the caller's context.
	Timeout time.Duration
	// CredentialBackoff bounds the calls of an account whose credentials
	// EC2 rejects (see cloud.CredentialGate).
	CredentialBackoff cloud.CredentialBackoff
	// Clock is the credential gate's clock (nil: the real clock), for tests.
	Clock clock.PassiveClock
	// Gate is the account's credential gate; nil: a new one.
	Gate *cloud.CredentialGate
}

// Scaled returns EC2's default buckets with their refill rates multiplied
// by s (bucket sizes stay): an account with raised refill rates, or an
// emulator whose rate limits run on a faster clock. s <= 0 or 1: the
// defaults.
func Scaled(s float64) RateLimits {
	def := DefaultRateLimits()
	if s <= 0 || s == 1 {
		return def
	}
	scale := func(r cloud.RateLimit) cloud.RateLimit { return r.Scale(s, 1) }
	return RateLimits{Mutating: scale(def.Mutating), NonMutating: scale(def.NonMutating),
		UnfilteredNonMutating: scale(def.UnfilteredNonMutating), Tags: scale(def.Tags)}
}

func (o *Options) defaults() {
	def := DefaultRateLimits()
	o.RateLimits.Mutating = o.RateLimits.Mutating.Or(def.Mutating)
	o.RateLimits.NonMutating = o.RateLimits.NonMutating.Or(def.NonMutating)
	o.RateLimits.UnfilteredNonMutating = o.RateLimits.UnfilteredNonMutating.Or(def.UnfilteredNonMutating)
	o.RateLimits.Tags = o.RateLimits.Tags.Or(def.Tags)
	if o.Retry.MaxAttempts == 0 {
		o.Retry.MaxAttempts = 10
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
}

func (o *Options) validate() error {
	if o.Region == "" {
		return fmt.Errorf("region is required")
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint %q must be an absolute http(s) URL", o.Endpoint)
		}
	}
	switch o.Credentials.Source {
	case CredentialsStatic:
		if o.Credentials.AccessKeyID == "" || o.Credentials.SecretAccessKey == "" {
			return fmt.Errorf("static credentials need an access key ID and a secret access key")
		}
	case CredentialsDefaultChain, CredentialsNone:
	default:
		return fmt.Errorf("unknown credentials source %q", o.Credentials.Source)
	}
	return nil
}

// NewEC2API builds the aws-sdk-go-v2 EC2 client edgeplane uses: credentials
// from opts, the endpoint override, the standard retryer without its retry
// quota, the per-action client-side token buckets and the call metrics.
func NewEC2API(ctx context.Context, opts Options) (*ec2.Client, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("configuring EC2 client: %w", err)
	}
	creds, err := credentialsProvider(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("configuring EC2 credentials: %w", err)
	}
	var base http.RoundTripper
	if opts.HTTPClient != nil {
		base = opts.HTTPClient.Transport
	}
	httpClient := &http.Client{Transport: cloud.AttemptTimeout(base, opts.Timeout)}
	cfg := awssdk.Config{
		Region:      opts.Region,
		Credentials: creds,
		HTTPClient:  httpClient,
		Retryer:     func() awssdk.Retryer { return newRetryer(opts.Retry) },
	}
	th := newThrottler(opts.RateLimits)
	gate := opts.Gate
	if gate == nil {
		gate = cloud.NewCredentialGate(opts.CredentialBackoff, opts.Clock)
	}
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = awssdk.String(opts.Endpoint)
		}
		// The gate goes last so that it runs first: a call it blocks
		// never reaches the metrics, the buckets or the network.
		o.APIOptions = append(o.APIOptions, th.addMiddleware, addMetricsMiddleware, gateMiddleware(gate))
	}), nil
}

func credentialsProvider(ctx context.Context, opts Options) (awssdk.CredentialsProvider, error) {
	switch opts.Credentials.Source {
	case CredentialsStatic:
		c := opts.Credentials
		return awssdk.NewCredentialsCache(credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)), nil
	case CredentialsNone:
		return credentials.NewStaticCredentialsProvider(EmulatorAccessKeyID, EmulatorSecretAccessKey, ""), nil
	default:
		// Only the credential chain is taken from the shared configuration;
		// endpoint, retries and HTTP settings stay ours.
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(opts.Region))
		if err != nil {
			return nil, fmt.Errorf("loading the default credential chain: %w", err)
		}
		return cfg.Credentials, nil
	}
}

// newRetryer is the SDK's standard retryer with the client-side retry quota
// disabled: the quota is a 500-token bucket that a burst of throttling
// drains, after which calls fail without even trying (the reason the AWS
// Load Balancer Controller and the Terraform provider disable it too).
// Throttling is instead handled by the per-action token buckets and by
// backing off on RequestLimitExceeded.
func newRetryer(o RetryOptions) awssdk.Retryer {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = o.MaxAttempts
		so.MaxBackoff = o.MaxBackoff
		so.RateLimiter = ratelimit.None
		so.Backoff = jitterBackoff{base: o.BaseDelay, max: o.MaxBackoff}
	})
}

// jitterBackoff is exponential backoff with full jitter:
// rand[0, min(max, base*2^attempt)).
type jitterBackoff struct {
	base, max time.Duration
}

func (b jitterBackoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return fullJitter(b.base, b.max, attempt, rand.Float64()), nil
}

// fullJitter is the pure part of jitterBackoff, for tests.
func fullJitter(base, maxDelay time.Duration, attempt int, r float64) time.Duration {
	ceiling := maxDelay
	if attempt < 32 {
		if d := base << uint(attempt); d > 0 && d < maxDelay {
			ceiling = d
		}
	}
	return time.Duration(r * float64(ceiling))
}

// throttleOnlyRetryer retries only throttling errors. It is used for
// AllocateAddress: after a timeout or a 5xx the address may have been
// created, and a blind retry would leak a second one.
type throttleOnlyRetryer struct {
	awssdk.Retryer
}

func (r throttleOnlyRetryer) IsErrorRetryable(err error) bool {
	return IsThrottled(err) && r.Retryer.IsErrorRetryable(err)
}

func (r throttleOnlyRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(awssdk.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.Retryer.GetInitialToken(), nil
}

// retryOnlyThrottling is a per-call option installing throttleOnlyRetryer.
func retryOnlyThrottling(o *ec2.Options) {
	o.Retryer = throttleOnlyRetryer{Retryer: o.Retryer}
}
