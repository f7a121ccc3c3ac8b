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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/k8sbin"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
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
func Start() (*Env, error) { return start(false) }

// StartWithWebhooks is Start plus edgeplane's admission webhook
// configurations (config/webhook), pointed at a local server; see Env.Webhooks.
func StartWithWebhooks() (*Env, error) { return start(true) }

func start(webhooks bool) (*Env, error) {
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
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
		// Two cores shared by parallel test packages: give the API server time.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	if webhooks {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")}, IgnoreErrorIfPathMissing: false,
		}
	}
	if os.Getenv("EDGEPLANE_TESTENV_PROFILING") != "" {
		env.ControlPlane.GetAPIServer().Configure().Set("profiling", "true")
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
