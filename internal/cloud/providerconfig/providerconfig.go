// Package providerconfig resolves a managed resource's providerConfigRef to the
// settings and credentials the cloud clients need: the config's provider,
// region, endpoint and cluster identity, and credentials from a Secret, the
// SDK's default chain (environment, pod or instance identity) or none.
//
// Credentials are read at connect time and never logged: Config redacts them
// in every fmt verb and in structured logs.
//
// A tenant's ProviderConfig that breaks the tenant rules (internal/tenancy)
// resolves to ErrNotAllowed, so no cloud client is ever built from it.
package providerconfig

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// Errors a caller maps to a stable condition reason.
var (
	// ErrNotFound: the referenced config does not exist.
	ErrNotFound = errors.New("provider config not found")
	// ErrWrongProvider: the config is for another cloud than the resource needs.
	ErrWrongProvider = errors.New("provider config is for another cloud")
	// ErrCredentials: the credentials Secret is missing or incomplete.
	ErrCredentials = errors.New("provider config credentials unavailable")
	// ErrInvalidRef: the reference cannot be used by this resource.
	ErrInvalidRef = errors.New("invalid provider config reference")
	// ErrNotAllowed: a tenant's ProviderConfig breaks the tenant rules (the
	// manager's identity, a clusterIdentity, an endpoint the admin does not
	// allow).
	ErrNotAllowed = errors.New("provider config not allowed for a tenant")
)

// Option changes how Resolve judges a config.
type Option func(*options)

type options struct {
	tenants tenancy.Policy
}

// WithTenancy judges ProviderConfigs by p (the manager's --tenant-endpoints).
// Without it a ProviderConfig may use no endpoint override.
func WithTenancy(p tenancy.Policy) Option { return func(o *options) { o.tenants = p } }

// DefaultRef is the config a managed resource uses when it names none.
func DefaultRef() xpv2.ProviderConfigReference {
	return xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: cloudv1alpha1.DefaultProviderConfigName}
}

// Config is a resolved ProviderConfig or ClusterProviderConfig.
type Config struct {
	// Ref is the config it was resolved from.
	Ref xpv2.ProviderConfigReference
	// Namespace is the config's namespace (empty for a ClusterProviderConfig).
	Namespace string

	Provider        cloudv1alpha1.Provider
	Region          string
	Endpoint        string
	ClusterIdentity string

	source cloudv1alpha1.CredentialsSource
	secret map[string][]byte
}

// String describes the config without its credentials.
func (c Config) String() string {
	return fmt.Sprintf("%s %s/%s (%s, %s, credentials from %s)", c.Ref.Kind, c.Namespace, c.Ref.Name, c.Provider, c.Region, c.source)
}

// GoString keeps credentials out of %#v.
func (c Config) GoString() string { return "providerconfig.Config{" + c.String() + "}" }

// Format keeps credentials out of every other verb (%v, %+v, %s, ...).
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = fmt.Fprint(f, c.GoString())
		return
	}
	_, _ = fmt.Fprint(f, c.String())
}

// LogValue keeps credentials out of structured logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", c.Ref.Kind), slog.String("namespace", c.Namespace),
		slog.String("name", c.Ref.Name), slog.String("provider", string(c.Provider)),
		slog.String("region", c.Region), slog.String("credentials", string(c.source)))
}

// Resolve reads the config that a managed resource in namespace (empty for a
// cluster-scoped resource) refers to with ref (nil: the default
// ClusterProviderConfig). clusterName is the identity used when the config
// sets none. Reads go straight to the reader given, so pass an uncached one:
// the manager must not cache every Secret of the cluster. A ProviderConfig
// that breaks the tenant rules is refused with ErrNotAllowed before its
// Secret is read.
func Resolve(ctx context.Context, r client.Reader, ref *xpv2.ProviderConfigReference, namespace, clusterName string, opts ...Option) (Config, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	use := DefaultRef()
	if ref != nil {
		use = *ref
	}
	if use.Kind == "" {
		use.Kind = cloudv1alpha1.ClusterProviderConfigKind
	}
	cfg := Config{Ref: use}
	var secretKey *types.NamespacedName
	switch use.Kind {
	case cloudv1alpha1.ClusterProviderConfigKind:
		pc := &cloudv1alpha1.ClusterProviderConfig{}
		if err := get(ctx, r, client.ObjectKey{Name: use.Name}, pc, use); err != nil {
			return Config{}, err
		}
		cfg.settings(pc.Spec.CloudSettings, pc.Spec.Credentials.Source)
		if s := pc.Spec.Credentials.SecretRef; s != nil {
			secretKey = &types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
		}
	case cloudv1alpha1.ProviderConfigKind:
		if namespace == "" {
			return Config{}, fmt.Errorf("%w: a cluster-scoped resource can only use a %s, not %s %q",
				ErrInvalidRef, cloudv1alpha1.ClusterProviderConfigKind, use.Kind, use.Name)
		}
		pc := &cloudv1alpha1.ProviderConfig{}
		// A tenant's resource can only use a ProviderConfig of its own namespace.
		if err := get(ctx, r, client.ObjectKey{Namespace: namespace, Name: use.Name}, pc, use); err != nil {
			return Config{}, err
		}
		// Re-checked here, not only by CEL: a config stored before the rules,
		// or with an endpoint the admin does not allow, must never be used.
		if err := o.tenants.Check(&pc.Spec); err != nil {
			return Config{}, fmt.Errorf("%w: %s %s/%s: %w", ErrNotAllowed, use.Kind, namespace, use.Name, err)
		}
		cfg.Namespace = namespace
		cfg.settings(pc.Spec.CloudSettings, pc.Spec.Credentials.Source)
		if s := pc.Spec.Credentials.SecretRef; s != nil {
			secretKey = &types.NamespacedName{Namespace: namespace, Name: s.Name}
		}
	default:
		return Config{}, fmt.Errorf("%w: unknown kind %q (want %s or %s)", ErrInvalidRef, use.Kind,
			cloudv1alpha1.ClusterProviderConfigKind, cloudv1alpha1.ProviderConfigKind)
	}
	if cfg.ClusterIdentity == "" {
		cfg.ClusterIdentity = clusterName
	}
	if cfg.source == cloudv1alpha1.CredentialsSecret {
		if secretKey == nil {
			return Config{}, fmt.Errorf("%w: %s has source Secret but no secretRef", ErrCredentials, cfg)
		}
		s := &corev1.Secret{}
		if err := r.Get(ctx, *secretKey, s); err != nil {
			if apierrors.IsNotFound(err) {
				return Config{}, fmt.Errorf("%w: Secret %s of %s not found", ErrCredentials, secretKey, cfg)
			}
			return Config{}, fmt.Errorf("reading Secret %s of %s: %w", secretKey, cfg, err)
		}
		cfg.secret = s.Data
	}
	return cfg, nil
}

func get(ctx context.Context, r client.Reader, key client.ObjectKey, obj client.Object, ref xpv2.ProviderConfigReference) error {
	if err := r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: %s %s", ErrNotFound, ref.Kind, key)
		}
		return fmt.Errorf("reading %s %s: %w", ref.Kind, key, err)
	}
	return nil
}

func (c *Config) settings(s cloudv1alpha1.CloudSettings, source cloudv1alpha1.CredentialsSource) {
	c.Provider, c.Region, c.Endpoint, c.ClusterIdentity, c.source = s.Provider, s.Region, s.Endpoint, s.ClusterIdentity, source
}

// SecretKey is one credential a Secret holds: under Name, or under one of
// the Legacy names an older controller's Secret used for it.
type SecretKey struct {
	Name   string
	Legacy []string
}

// Value returns the credential from a Secret's data: Name's value, else the
// first non-empty legacy one; nil when the Secret has none.
func (k SecretKey) Value(data map[string][]byte) []byte {
	for _, name := range append([]string{k.Name}, k.Legacy...) {
		if v := data[name]; len(v) > 0 {
			return v
		}
	}
	return nil
}

// The credentials each provider needs from a Secret.
var (
	awsAccessKeyID     = SecretKey{Name: cloudv1alpha1.SecretKeyAWSAccessKeyID}
	awsSecretAccessKey = SecretKey{Name: cloudv1alpha1.SecretKeyAWSSecretAccessKey}
	tencentSecretID    = SecretKey{Name: cloudv1alpha1.SecretKeyTencentSecretID,
		Legacy: []string{cloudv1alpha1.SecretKeyTencentLegacySecretID}}
	tencentSecretKey = SecretKey{Name: cloudv1alpha1.SecretKeyTencentSecretKey,
		Legacy: []string{cloudv1alpha1.SecretKeyTencentLegacySecretKey}}
)

// RequiredSecretKeys lists the credentials a Secret must hold for provider.
func RequiredSecretKeys(p cloudv1alpha1.Provider) []SecretKey {
	switch p {
	case cloudv1alpha1.ProviderAWS:
		return []SecretKey{awsAccessKeyID, awsSecretAccessKey}
	case cloudv1alpha1.ProviderTencentCloud:
		return []SecretKey{tencentSecretID, tencentSecretKey}
	}
	return nil
}

// key returns a required Secret value.
func (c Config) key(k SecretKey) (string, error) {
	v := k.Value(c.secret)
	if len(v) == 0 {
		return "", fmt.Errorf("%w: the Secret of %s lacks key %s", ErrCredentials, c, k.Name)
	}
	return string(v), nil
}

// AWS returns the options for an EC2 client; rate limits, retries and the HTTP
// client are left for the caller to set.
func (c Config) AWS() (aws.Options, error) {
	if c.Provider != cloudv1alpha1.ProviderAWS {
		return aws.Options{}, fmt.Errorf("%w: %s is for %s, not aws", ErrWrongProvider, c, c.Provider)
	}
	o := aws.Options{Region: c.Region, Endpoint: c.Endpoint}
	switch c.source {
	case cloudv1alpha1.CredentialsSecret:
		id, err := c.key(awsAccessKeyID)
		if err != nil {
			return aws.Options{}, err
		}
		secret, err := c.key(awsSecretAccessKey)
		if err != nil {
			return aws.Options{}, err
		}
		o.Credentials = aws.Credentials{Source: aws.CredentialsStatic, AccessKeyID: id, SecretAccessKey: secret,
			SessionToken: string(c.secret[cloudv1alpha1.SecretKeyAWSSessionToken])}
	case cloudv1alpha1.CredentialsInjectedIdentity:
		o.Credentials = aws.Credentials{Source: aws.CredentialsDefaultChain}
	case cloudv1alpha1.CredentialsNone:
		o.Credentials = aws.Credentials{Source: aws.CredentialsNone}
	default:
		return aws.Options{}, fmt.Errorf("%w: unknown credentials source %q in %s", ErrCredentials, c.source, c)
	}
	return o, nil
}

// Tencent returns the options for the Tencent Cloud clients; rate limits,
// retries and the HTTP client are left for the caller to set.
func (c Config) Tencent() (tencentcloud.Options, error) {
	if c.Provider != cloudv1alpha1.ProviderTencentCloud {
		return tencentcloud.Options{}, fmt.Errorf("%w: %s is for %s, not tencentcloud", ErrWrongProvider, c, c.Provider)
	}
	o := tencentcloud.Options{Region: c.Region, Endpoint: c.Endpoint}
	switch c.source {
	case cloudv1alpha1.CredentialsSecret:
		id, err := c.key(tencentSecretID)
		if err != nil {
			return tencentcloud.Options{}, err
		}
		secret, err := c.key(tencentSecretKey)
		if err != nil {
			return tencentcloud.Options{}, err
		}
		o.Credentials = tencentcloud.Credentials{Source: tencentcloud.CredentialsStatic, SecretID: id, SecretKey: secret,
			Token: string(c.secret[cloudv1alpha1.SecretKeyTencentToken])}
	case cloudv1alpha1.CredentialsInjectedIdentity:
		o.Credentials = tencentcloud.Credentials{Source: tencentcloud.CredentialsDefaultChain}
	case cloudv1alpha1.CredentialsNone:
		o.Credentials = tencentcloud.Credentials{Source: tencentcloud.CredentialsNone}
	default:
		return tencentcloud.Options{}, fmt.Errorf("%w: unknown credentials source %q in %s", ErrCredentials, c.source, c)
	}
	return o, nil
}

// Scoped is a provider config with the namespace of a ProviderConfig
// (empty for a ClusterProviderConfig).
type Scoped struct {
	Ref       xpv2.ProviderConfigReference
	Namespace string
}

// List returns every config for provider: the ClusterProviderConfigs and,
// with tenants, the ProviderConfigs of every namespace (the accounts an
// orphan sweep looks at). Sorted by namespace, then name.
func List(ctx context.Context, r client.Reader, provider cloudv1alpha1.Provider, tenants bool) ([]Scoped, error) {
	var out []Scoped
	var cpcs cloudv1alpha1.ClusterProviderConfigList
	if err := r.List(ctx, &cpcs); err != nil {
		return nil, fmt.Errorf("listing ClusterProviderConfigs: %w", err)
	}
	for _, c := range cpcs.Items {
		if c.Spec.Provider == provider {
			out = append(out, Scoped{Ref: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: c.Name}})
		}
	}
	if tenants {
		var pcs cloudv1alpha1.ProviderConfigList
		if err := r.List(ctx, &pcs); err != nil {
			return nil, fmt.Errorf("listing ProviderConfigs: %w", err)
		}
		for _, c := range pcs.Items {
			if c.Spec.Provider == provider {
				out = append(out, Scoped{Ref: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: c.Name}, Namespace: c.Namespace})
			}
		}
	}
	slices.SortFunc(out, func(a, b Scoped) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Ref.Name, b.Ref.Name))
	})
	return out, nil
}

// ResolveAWS resolves ref (as Resolve does) for an EC2 client: the config,
// the client's options and fingerprint (see AWSClient).
func ResolveAWS(ctx context.Context, r client.Reader, ref *xpv2.ProviderConfigReference, namespace, clusterName string,
	tune func(*aws.Options), opts ...Option) (Config, aws.Options, string, error) {
	cfg, err := Resolve(ctx, r, ref, namespace, clusterName, opts...)
	if err != nil {
		return Config{}, aws.Options{}, "", err
	}
	o, fingerprint, err := cfg.AWSClient(tune)
	if err != nil {
		return Config{}, aws.Options{}, "", err
	}
	return cfg, o, fingerprint, nil
}

// AWSClient returns the options of the config's EC2 client — tune sets
// what the kind decides (rate limits, credential backoff, clock) — and the
// fingerprint that names the client in a runtime/clientcache: configs that
// resolve to the same cloud, endpoint, keys and cluster identity share one
// client (its rate-limit buckets and credential gate), and changed keys get
// a new one.
func (c Config) AWSClient(tune func(*aws.Options)) (aws.Options, string, error) {
	o, err := c.AWS()
	if err != nil {
		return aws.Options{}, "", fmt.Errorf("configuring the EC2 client: %w", err)
	}
	if tune != nil {
		tune(&o)
	}
	cr := o.Credentials
	return o, clientcache.Fingerprint(string(c.Provider), o.Region, o.Endpoint, string(cr.Source), cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken,
		c.ClusterIdentity), nil
}

// TencentClient is AWSClient for the Tencent Cloud clients.
func (c Config) TencentClient(tune func(*tencentcloud.Options)) (tencentcloud.Options, string, error) {
	o, err := c.Tencent()
	if err != nil {
		return tencentcloud.Options{}, "", fmt.Errorf("configuring the Tencent Cloud client: %w", err)
	}
	if tune != nil {
		tune(&o)
	}
	cr := o.Credentials
	return o, clientcache.Fingerprint(string(c.Provider), o.Region, o.Endpoint, string(cr.Source), cr.SecretID, cr.SecretKey, cr.Token,
		c.ClusterIdentity), nil
}
