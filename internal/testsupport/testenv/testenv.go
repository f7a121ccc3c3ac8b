// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest, on the binaries `make k8s-bin` builds) with every edgeplane CRD
// installed, for integration tests.
//
// A package's tests share one API server: call Main from TestMain, then use
// Env in the tests. Setting EDGEPLANE_TESTENV_KEEP=1 leaves the server running
// and prints a kubeconfig, for poking at a failed test with kubectl;
// EDGEPLANE_TESTENV_PROFILING=1 serves the API server's /debug/pprof (the
// AnycastIPBinding benchmark saves a CPU profile with AIA_BENCH_APIPROF).
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Env is a running API server with edgeplane's CRDs.
type Env struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// Client talks to the API server directly (no cache), so a test reads
	// exactly what was written.
	Client client.Client
	// Scheme knows the built-in kinds and every edgeplane kind.
	Scheme *runtime.Scheme
	// Webhooks, when started with StartWithWebhooks, is where the API server
	// sends admission requests: serve them on its LocalServingHost and
	// LocalServingPort with the certificate in LocalServingCertDir.
	Webhooks *envtest.WebhookInstallOptions

	env *envtest.Environment
}

// Start starts an API server and etcd and installs the CRDs from config/crd/bases.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWithWebhooks is Start plus edgeplane's admission webhook
// configurations (config/webhook), pointed at a local server; see Env.Webhooks.
func StartWithWebhooks() (*Env, error) { return StartWith(Options{Webhooks: true}) }

// Options say what StartWith starts besides the API server and etcd, and
// whether it installs the CRDs.
type Options struct {
	// Webhooks installs edgeplane's admission webhook configurations
	// (config/webhook), pointed at a local server; see Env.Webhooks.
	Webhooks bool
	// APIServerFlags are extra kube-apiserver flags, by name without the
	// dashes (e.g. "tracing-config-file").
	APIServerFlags map[string]string
	// WithoutCRDs starts the API server without edgeplane's CRDs, for tests
	// of an installer that creates them itself (the Helm chart's release).
	WithoutCRDs bool
}

// StartWith starts an API server and etcd with the CRDs (unless
// o.WithoutCRDs) and what o asks for.
func StartWith(o Options) (*Env, error) {
	webhooks := o.Webhooks
	dir, err := k8sbin.Dir()
	if err != nil {
		return nil, err
	}
	root, err := k8sbin.RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme, err := edgescheme.New()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		Scheme:                scheme,
		// Two cores shared by parallel test packages: give the API server time.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	if !o.WithoutCRDs {
		env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases")}
		env.ErrorIfCRDPathMissing = true
	}
	if webhooks {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")}, IgnoreErrorIfPathMissing: false,
		}
	}
	if os.Getenv("EDGEPLANE_TESTENV_PROFILING") != "" {
		env.ControlPlane.GetAPIServer().Configure().Set("profiling", "true")
	}
	for name, value := range o.APIServerFlags {
		env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest from %s: %w", dir, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	e := &Env{Config: cfg, Client: c, Scheme: scheme, env: env}
	if webhooks {
		e.Webhooks = &env.WebhookInstallOptions
	}
	return e, nil
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error {
	if os.Getenv("EDGEPLANE_TESTENV_KEEP") != "" {
		return nil
	}
	return e.env.Stop()
}

// Main starts one Env for a test package, runs its tests, and stops the Env.
// Use it from TestMain: `func TestMain(m *testing.M) { testenv.Main(m, &env) }`.
func Main(m *testing.M, env **Env) {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
	*env = e
	code := m.Run()
	if os.Getenv("EDGEPLANE_TESTENV_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "testenv: API server left running at %s\n", e.Config.Host)
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Context returns a context for one test that ends with it.
func Context(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// WriteKubeconfig writes a kubeconfig for the API server's administrator, so a
// test can drive it with kubectl.
func (e *Env) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData, Token: e.Config.BearerToken,
	}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	cfg.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// CreateReadyNode creates n with the taints it asks for only. The API
// server adds node.kubernetes.io/not-ready to a new node, which the node
// lifecycle controller (not running here) removes once its kubelet reports
// Ready; until then nothing may be bound to it that does not tolerate the
// taint (the float-IP extender's bind checks, as kube-scheduler does).
func (e *Env) CreateReadyNode(ctx context.Context, n *corev1.Node) error {
	taints := n.Spec.Taints
	if err := e.Client.Create(ctx, n); err != nil {
		return fmt.Errorf("creating node %s: %w", n.Name, err)
	}
	n.Spec.Taints = taints
	if err := e.Client.Update(ctx, n); err != nil {
		return fmt.Errorf("making node %s ready: %w", n.Name, err)
	}
	return nil
}

// ExpectCreate creates obj and checks the API server's verdict: accepted when
// wantErr is empty, otherwise rejected with an error containing wantErr. It is
// the assertion of every CEL and schema rule test.
func (e *Env) ExpectCreate(t *testing.T, obj client.Object, wantErr string) {
	t.Helper()
	err := e.Client.Create(Context(t), obj)
	if wantErr == "" {
		if err != nil {
			t.Fatalf("valid object rejected: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("invalid object accepted; want an error containing %q", wantErr)
	}
	if !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("error %q does not contain %q", err, wantErr)
	}
}

// CreateBypassingRules stores obj as if it had been created before its CRD
// gained the x-kubernetes-validations rules whose message contains one of
// messages: it drops those rules from the CRD, creates obj, and puts the
// CRD back, waiting each time until the API server enforces the schema it
// was given. It is for tests of what a controller does with a stored
// object that breaks a newer rule. Tests of the package must not run in
// parallel with it: for a moment the rules are off for everyone.
func (e *Env) CreateBypassingRules(t *testing.T, obj client.Object, messages ...string) {
	t.Helper()
	ctx := Context(t)
	gvk, err := e.Client.GroupVersionKindFor(obj)
	if err != nil {
		t.Fatalf("kind of %T: %v", obj, err)
	}
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(e.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		t.Fatalf("listing CRDs: %v", err)
	}
	var crd *apiextensionsv1.CustomResourceDefinition
	for i := range crds.Items {
		if d := &crds.Items[i]; d.Spec.Group == gvk.Group && d.Spec.Names.Kind == gvk.Kind {
			crd = d
		}
	}
	if crd == nil {
		t.Fatalf("no CRD for %s", gvk)
	}
	original := crd.Spec.DeepCopy()
	dropped := 0
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil && v.OpenAPIV3Schema != nil {
			dropped += dropRules(v.OpenAPIV3Schema, messages)
		}
	}
	if dropped == 0 {
		t.Fatalf("CRD %s has no rule with a message containing any of %q", crd.Name, messages)
	}
	setSpec := func(spec apiextensionsv1.CustomResourceDefinitionSpec) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, cur); err != nil {
				return err
			}
			cur.Spec = spec
			return c.Update(ctx, cur)
		})
		if err != nil {
			t.Fatalf("updating CRD %s: %v", crd.Name, err)
		}
	}
	// dryRun is what the API server says now to creating a copy of o.
	dryRun := func(o client.Object) error {
		return e.Client.Create(ctx, o.DeepCopyObject().(client.Object), client.DryRunAll)
	}
	waitFor := func(what string, o client.Object, done func(error) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for err := dryRun(o); !done(err); err = dryRun(o) {
			if time.Now().After(deadline) {
				t.Fatalf("the API server never %s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	setSpec(crd.Spec)
	restored := false
	restore := func() {
		if !restored {
			restored = true
			setSpec(*original)
		}
	}
	t.Cleanup(restore)
	waitFor("dropped the rules", obj, func(err error) bool { return err == nil })
	if err := e.Client.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s without the rules: %v", obj, obj.GetName(), err)
	}
	restore()
	probe := obj.DeepCopyObject().(client.Object)
	probe.SetName(obj.GetName() + "-probe")
	probe.SetResourceVersion("")
	probe.SetUID("")
	waitFor("enforced the rules again", probe, func(err error) bool { return err != nil })
}

// dropRules removes, in s and every schema below it, the CEL rules whose
// message contains one of messages, and returns how many it removed.
func dropRules(s *apiextensionsv1.JSONSchemaProps, messages []string) int {
	n := 0
	kept := s.XValidations[:0]
	for _, r := range s.XValidations {
		if slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(r.Message, m) }) {
			n++
			continue
		}
		kept = append(kept, r)
	}
	s.XValidations = kept
	for k, p := range s.Properties {
		n += dropRules(&p, messages)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		n += dropRules(s.Items.Schema, messages)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		n += dropRules(s.AdditionalProperties.Schema, messages)
	}
	return n
}
