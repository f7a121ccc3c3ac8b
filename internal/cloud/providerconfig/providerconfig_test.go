package providerconfig

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/tenancy"
	"github.com/edgeplane/edgeplane/internal/tenancy/tenancytest"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const secretValue = "do-not-print-me-0123456789"

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(testenv.Context(t), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func clusterConfig(name string, provider cloudv1alpha1.Provider, region, endpoint string, creds cloudv1alpha1.ClusterProviderConfigCredentials) *cloudv1alpha1.ClusterProviderConfig {
	return &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: provider, Region: region, Endpoint: endpoint},
			Credentials:   creds,
		},
	}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// TestClientsConnectThroughResolvedConfigs drives the real SDK clients, built
// from resolved configs, against the emulator over HTTP.
func TestClientsConnectThroughResolvedConfigs(t *testing.T) {
	ctx := testenv.Context(t)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1})
	create(t,
		clusterConfig(cloudv1alpha1.DefaultProviderConfigName, cloudv1alpha1.ProviderAWS, "us-east-1", emu.URL(),
			cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}),
		secret("default", "tc-good", map[string]string{
			cloudv1alpha1.SecretKeyTencentSecretID: tencentcloud.EmulatorSecretID, cloudv1alpha1.SecretKeyTencentSecretKey: tencentcloud.EmulatorSecretKey}),
		secret("default", "tc-bad", map[string]string{
			cloudv1alpha1.SecretKeyTencentSecretID: tencentcloud.EmulatorSecretID, cloudv1alpha1.SecretKeyTencentSecretKey: secretValue}),
		clusterConfig("tc-good", cloudv1alpha1.ProviderTencentCloud, "ap-guangzhou", emu.URL(),
			cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.SecretReference{Namespace: "default", Name: "tc-good"}}),
		clusterConfig("tc-bad", cloudv1alpha1.ProviderTencentCloud, "ap-guangzhou", emu.URL(),
			cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.SecretReference{Namespace: "default", Name: "tc-bad"}}),
	)

	// No reference: the default ClusterProviderConfig (credentials None: the emulator's well-known key pair), at the emulator.
	cfg, err := Resolve(ctx, env.Client, nil, "team-a", "cluster-x")
	if err != nil {
		t.Fatalf("resolving the default config: %v", err)
	}
	if cfg.ClusterIdentity != "cluster-x" {
		t.Errorf("cluster identity = %q, want the manager's cluster name when the config sets none", cfg.ClusterIdentity)
	}
	awsOpts, err := cfg.AWS()
	if err != nil {
		t.Fatalf("AWS options: %v", err)
	}
	ec2, err := aws.New(ctx, awsOpts)
	if err != nil {
		t.Fatalf("building the EC2 client: %v", err)
	}
	addr, err := ec2.AllocateAddress(ctx, aws.AllocateRequest{Tags: map[string]string{"edgeplane.io/cluster": "cluster-x"}})
	if err != nil {
		t.Fatalf("allocating through the resolved config: %v", err)
	}
	got, err := ec2.DescribeAddresses(ctx, aws.AddressQuery{Tags: map[string]string{"edgeplane.io/cluster": "cluster-x"}})
	if err != nil || len(got) != 1 || got[0].AllocationID != addr.AllocationID {
		t.Fatalf("describing by tag: %v, %+v; want the one allocated address %s", err, got, addr.AllocationID)
	}

	// Tencent with credentials from a Secret: the emulator checks the TC3
	// signature, so the right keys work and the wrong ones are refused.
	for name, wantAuthError := range map[string]bool{"tc-good": false, "tc-bad": true} {
		ref := &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: name}
		cfg, err := Resolve(ctx, env.Client, ref, "", "cluster-x")
		if err != nil {
			t.Fatalf("%s: resolving: %v", name, err)
		}
		opts, err := cfg.Tencent()
		if err != nil {
			t.Fatalf("%s: Tencent options: %v", name, err)
		}
		tc, err := tencentcloud.New(opts)
		if err != nil {
			t.Fatalf("%s: building the Tencent client: %v", name, err)
		}
		_, err = tc.DescribeAddresses(ctx, tencentcloud.AddressQuery{})
		if wantAuthError {
			if !tencentcloud.IsAuthError(err) {
				t.Errorf("%s: describe with wrong keys: %v, want an AuthFailure", name, err)
			}
		} else if err != nil {
			t.Errorf("%s: describe with the emulator's keys: %v", name, err)
		}
	}
}

func TestResolveTenantConfigAndErrors(t *testing.T) {
	ctx := testenv.Context(t)
	create(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-x"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-y"}},
		secret("tenant-x", "aws", map[string]string{cloudv1alpha1.SecretKeyAWSAccessKeyID: "AKIATENANT",
			cloudv1alpha1.SecretKeyAWSSecretAccessKey: secretValue, cloudv1alpha1.SecretKeyAWSSessionToken: "tok"}),
		secret("tenant-x", "half", map[string]string{cloudv1alpha1.SecretKeyAWSAccessKeyID: "AKIAHALF"}),
		&cloudv1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-x", Name: "own"},
			Spec: cloudv1alpha1.ProviderConfigSpec{
				CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "eu-west-1"},
				Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
					SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "aws"}},
			},
		},
		&cloudv1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-x", Name: "half"},
			Spec: cloudv1alpha1.ProviderConfigSpec{
				CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "eu-west-1"},
				Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
					SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "half"}},
			},
		},
		&cloudv1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-x", Name: "nosecret"},
			Spec: cloudv1alpha1.ProviderConfigSpec{
				CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "eu-west-1"},
				Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
					SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "absent"}},
			},
		},
		clusterConfig("identity", cloudv1alpha1.ProviderTencentCloud, "ap-shanghai", "",
			cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}),
	)
	pcRef := func(name string) *xpv2.ProviderConfigReference {
		return &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: name}
	}

	cfg, err := Resolve(ctx, env.Client, pcRef("own"), "tenant-x", "cluster-x")
	if err != nil {
		t.Fatalf("resolving the tenant's own config: %v", err)
	}
	o, err := cfg.AWS()
	if err != nil {
		t.Fatalf("AWS options: %v", err)
	}
	want := aws.Credentials{Source: aws.CredentialsStatic, AccessKeyID: "AKIATENANT", SecretAccessKey: secretValue, SessionToken: "tok"}
	// A tenant's config always uses the cluster's identity.
	if o.Credentials != want || o.Region != "eu-west-1" || cfg.ClusterIdentity != "cluster-x" {
		t.Errorf("options = %v region %s identity %s; want the tenant's Secret and region, and the cluster's identity", o.Credentials, o.Region, cfg.ClusterIdentity)
	}
	// Nothing that prints or logs the config shows the secret.
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("connecting", "config", cfg)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), logged.String(), fmt.Sprint(o.Credentials)} {
		if strings.Contains(out, secretValue) {
			t.Errorf("credentials leaked into output: %s", out)
		}
	}

	identity, err := Resolve(ctx, env.Client, &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "identity"}, "", "c")
	if err != nil {
		t.Fatalf("resolving an injected-identity config: %v", err)
	}
	if to, err := identity.Tencent(); err != nil || to.Credentials.Source != tencentcloud.CredentialsDefaultChain || to.Endpoint != "" {
		t.Errorf("injected identity: %v, %v; want the default chain and the public endpoint", to.Credentials, err)
	}

	cases := map[string]struct {
		ref       *xpv2.ProviderConfigReference
		namespace string
		use       func(Config) error
		want      error
	}{
		"another tenant's config is not visible":                 {ref: pcRef("own"), namespace: "tenant-y", want: ErrNotFound},
		"a cluster-scoped resource cannot use a tenant's config": {ref: pcRef("own"), want: ErrInvalidRef},
		"unknown kind":           {ref: &xpv2.ProviderConfigReference{Kind: "Other", Name: "x"}, namespace: "tenant-x", want: ErrInvalidRef},
		"missing cluster config": {ref: &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "absent"}, want: ErrNotFound},
		"missing Secret":         {ref: pcRef("nosecret"), namespace: "tenant-x", want: ErrCredentials},
		"Secret without the secret key": {ref: pcRef("half"), namespace: "tenant-x",
			use: func(c Config) error { _, err := c.AWS(); return err }, want: ErrCredentials},
		"an AWS config used for Tencent": {ref: pcRef("own"), namespace: "tenant-x",
			use: func(c Config) error { _, err := c.Tencent(); return err }, want: ErrWrongProvider},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := Resolve(ctx, env.Client, tc.ref, tc.namespace, "c")
			if err == nil && tc.use != nil {
				err = tc.use(cfg)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("the error leaks the secret: %v", err)
			}
		})
	}
}

// TestResolveRefusesConfigsThatBreakTheTenantRules: a tenant's config that
// uses the manager's identity or a cluster identity (stored before the CEL
// rules existed) or an endpoint the admin does not allow resolves to
// ErrNotAllowed, so no cloud client is built from it; the same endpoint is
// used once the manager's allow-list names it, and a ClusterProviderConfig
// keeps every setting.
func TestResolveRefusesConfigsThatBreakTheTenantRules(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "tenant-rules"
	create(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		secret(ns, "aws", map[string]string{cloudv1alpha1.SecretKeyAWSAccessKeyID: "AKIATENANT", cloudv1alpha1.SecretKeyAWSSecretAccessKey: secretValue}),
		tenancytest.AWSConfig(ns, "endpoint", func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://127.0.0.1:8600" }),
		tenancytest.AWSConfig(ns, "metadata", func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://169.254.169.254/latest" }),
		clusterConfig("admin", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:8600",
			cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}),
	)
	// Stored as if created before the CRD had the tenant rules.
	tenancytest.StoreBroken(t, env, ns, nil)

	emulator, err := tenancy.NewPolicy([]string{"http://127.0.0.1:8600"})
	if err != nil {
		t.Fatal(err)
	}
	pcRef := func(name string) *xpv2.ProviderConfigReference {
		return &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: name}
	}
	cases := map[string]struct {
		ref     *xpv2.ProviderConfigReference
		opts    []Option
		wantErr string // empty: resolves
	}{
		"the manager's identity":                   {ref: pcRef(tenancytest.ManagerIdentity), opts: []Option{WithTenancy(emulator)}, wantErr: "InjectedIdentity"},
		"another cluster's identity":               {ref: pcRef(tenancytest.OtherClusterIdentity), opts: []Option{WithTenancy(emulator)}, wantErr: "clusterIdentity"},
		"an endpoint without an allow-list":        {ref: pcRef("endpoint"), wantErr: "endpoint http://127.0.0.1:8600 is not one the cluster admin allows"},
		"an endpoint outside the allow-list":       {ref: pcRef("metadata"), opts: []Option{WithTenancy(emulator)}, wantErr: "endpoint http://169.254.169.254/latest"},
		"an endpoint the allow-list names":         {ref: pcRef("endpoint"), opts: []Option{WithTenancy(emulator)}},
		"a ClusterProviderConfig keeps everything": {ref: &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "admin"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			namespace := ns
			if tc.ref.Kind == cloudv1alpha1.ClusterProviderConfigKind {
				namespace = ""
			}
			cfg, err := Resolve(ctx, env.Client, tc.ref, namespace, "cluster-x", tc.opts...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("resolving: %v", err)
				}
				if _, err := cfg.AWS(); err != nil {
					t.Fatalf("AWS options: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v; want ErrNotAllowed naming %q", err, tc.wantErr)
			}
			if cfg.Provider != "" || cfg.secret != nil {
				t.Errorf("a refused config resolved to %v", cfg)
			}
		})
	}
}

// TestLegacyTencentSecretKeys: a Secret written for the legacy Tencent Cloud
// charts (keys secretID / secretKey) connects unchanged; the emulator checks
// the TC3 signature, so the legacy values are really the ones sent. When a
// Secret holds both spellings, edgeplane's own keys win.
func TestLegacyTencentSecretKeys(t *testing.T) {
	ctx := testenv.Context(t)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1})
	good, bad := tencentcloud.EmulatorSecretKey, secretValue
	for name, data := range map[string]map[string]string{
		"legacy":          {"secretID": tencentcloud.EmulatorSecretID, "secretKey": good},
		"legacy-wrong":    {"secretID": tencentcloud.EmulatorSecretID, "secretKey": bad},
		"both-own-wins":   {"secret_id": tencentcloud.EmulatorSecretID, "secret_key": good, "secretID": "AKIDother", "secretKey": bad},
		"both-own-wrong":  {"secret_id": tencentcloud.EmulatorSecretID, "secret_key": bad, "secretID": tencentcloud.EmulatorSecretID, "secretKey": good},
		"legacy-id-only":  {"secretID": tencentcloud.EmulatorSecretID},
		"mixed-spellings": {"secretID": tencentcloud.EmulatorSecretID, "secret_key": good},
	} {
		create(t, secret("default", "legacy-"+name, data),
			clusterConfig("legacy-"+name, cloudv1alpha1.ProviderTencentCloud, "ap-guangzhou", emu.URL(),
				cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
					SecretRef: &cloudv1alpha1.SecretReference{Namespace: "default", Name: "legacy-" + name}}))
	}
	for name, want := range map[string]string{
		"legacy": "", "legacy-wrong": "auth", "both-own-wins": "", "both-own-wrong": "auth",
		"legacy-id-only": "credentials", "mixed-spellings": "",
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Resolve(ctx, env.Client, &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "legacy-" + name}, "", "c")
			if err != nil {
				t.Fatalf("resolving: %v", err)
			}
			opts, err := cfg.Tencent()
			if want == "credentials" {
				if !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), "lacks key secret_key") {
					t.Fatalf("Tencent options: %v, want ErrCredentials naming secret_key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Tencent options: %v", err)
			}
			tc, err := tencentcloud.New(opts)
			if err != nil {
				t.Fatalf("building the Tencent client: %v", err)
			}
			_, err = tc.DescribeAddresses(ctx, tencentcloud.AddressQuery{})
			switch {
			case want == "auth" && !tencentcloud.IsAuthError(err):
				t.Errorf("describe: %v, want an AuthFailure (the wrong key was sent)", err)
			case want == "" && err != nil:
				t.Errorf("describe: %v, want success with the emulator's keys", err)
			}
		})
	}
}

// TestListByProvider lists the configs of one cloud: cluster-wide ones
// always, tenants' only when asked, sorted.
func TestListByProvider(t *testing.T) {
	ctx := testenv.Context(t)
	none := cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
	create(t,
		clusterConfig("list-aws-b", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:1", none),
		clusterConfig("list-aws-a", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:1", none),
		clusterConfig("list-tc", cloudv1alpha1.ProviderTencentCloud, "ap-hongkong", "http://127.0.0.1:1", none),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "list-tenant"}},
		&cloudv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "list-tenant", Name: "mine"},
			Spec: cloudv1alpha1.ProviderConfigSpec{CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
				Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret, SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "keys"}}}},
	)
	names := func(tenants bool) []string {
		got, err := List(ctx, env.Client, cloudv1alpha1.ProviderAWS, tenants)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range got {
			if strings.HasPrefix(s.Ref.Name, "list-") || s.Namespace == "list-tenant" {
				out = append(out, s.Namespace+"/"+s.Ref.Kind+"/"+s.Ref.Name)
			}
		}
		return out
	}
	if got, want := names(false), []string{"/ClusterProviderConfig/list-aws-a", "/ClusterProviderConfig/list-aws-b"}; !slices.Equal(got, want) {
		t.Errorf("cluster configs: %v, want %v", got, want)
	}
	if got, want := names(true), []string{"/ClusterProviderConfig/list-aws-a", "/ClusterProviderConfig/list-aws-b", "list-tenant/ProviderConfig/mine"}; !slices.Equal(got, want) {
		t.Errorf("with tenants: %v, want %v", got, want)
	}
}

// TestResolveAWSFingerprint: one fingerprint for configs that build the
// same client, another once the keys change; tune sees the options.
func TestResolveAWSFingerprint(t *testing.T) {
	ctx := testenv.Context(t)
	creds := func(secret string) cloudv1alpha1.ClusterProviderConfigCredentials {
		return cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
			SecretRef: &cloudv1alpha1.SecretReference{Namespace: "default", Name: secret}}
	}
	keys := map[string]string{cloudv1alpha1.SecretKeyAWSAccessKeyID: "AKIAFINGERPRINT01", cloudv1alpha1.SecretKeyAWSSecretAccessKey: "s1"}
	create(t, secret("default", "fp-keys", keys),
		clusterConfig("fp-a", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:1", creds("fp-keys")),
		clusterConfig("fp-b", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:1", creds("fp-keys")))
	tuned := 0
	fp := func(name string) string {
		t.Helper()
		_, o, f, err := ResolveAWS(ctx, env.Client, &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: name}, "", "c",
			func(o *aws.Options) { tuned++; o.RateLimits = aws.Scaled(10) })
		if err != nil {
			t.Fatal(err)
		}
		if o.RateLimits.Mutating.QPS != 50 || o.Credentials.AccessKeyID != "AKIAFINGERPRINT01" {
			t.Errorf("options %v: tune not applied or keys not read", o)
		}
		return f
	}
	a, b := fp("fp-a"), fp("fp-b")
	if a != b || a == "" || tuned != 2 {
		t.Fatalf("fingerprints %q, %q (tuned %d): want one for the same client", a, b, tuned)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "fp-keys"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data[cloudv1alpha1.SecretKeyAWSSecretAccessKey] = []byte("s2")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if c := fp("fp-a"); c == a {
		t.Error("rotated keys kept the fingerprint")
	}
	if _, _, _, err := ResolveAWS(ctx, env.Client, &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "fp-missing"}, "", "c", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing config: %v, want ErrNotFound", err)
	}
}

// TestClientFingerprintNamesTheCloud: an AWS and a Tencent Cloud config
// with the same region, endpoint, keys and identity need different clients,
// so a kind serving both clouds from one client cache (PodElasticIP) never
// hands one cloud's client to the other's config; tune sees the options.
func TestClientFingerprintNamesTheCloud(t *testing.T) {
	keys := map[string][]byte{
		cloudv1alpha1.SecretKeyAWSAccessKeyID: []byte("KEY"), cloudv1alpha1.SecretKeyAWSSecretAccessKey: []byte("SECRET"),
		cloudv1alpha1.SecretKeyTencentSecretID: []byte("KEY"), cloudv1alpha1.SecretKeyTencentSecretKey: []byte("SECRET"),
	}
	base := Config{Region: "r1", Endpoint: "http://127.0.0.1:1", ClusterIdentity: "c", source: cloudv1alpha1.CredentialsSecret, secret: keys}
	awsCfg, tcCfg := base, base
	awsCfg.Provider, tcCfg.Provider = cloudv1alpha1.ProviderAWS, cloudv1alpha1.ProviderTencentCloud
	_, fa, err := awsCfg.AWSClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	o, ft, err := tcCfg.TencentClient(func(o *tencentcloud.Options) { o.RateLimits = tencentcloud.Scaled(10) })
	if err != nil {
		t.Fatal(err)
	}
	if fa == ft {
		t.Errorf("one fingerprint %q for an AWS and a Tencent Cloud config", fa)
	}
	if o.RateLimits.PerAction["AllocateAddresses"].QPS != 100 || o.Credentials.SecretID != "KEY" {
		t.Errorf("options %v: tune not applied or keys not read", o)
	}
	if _, ft2, _ := tcCfg.TencentClient(nil); ft2 != ft {
		t.Errorf("fingerprint %q then %q for the same config", ft, ft2)
	}
	if _, _, err := tcCfg.AWSClient(nil); !errors.Is(err, ErrWrongProvider) {
		t.Errorf("EC2 options of a Tencent Cloud config: %v, want ErrWrongProvider", err)
	}
}
