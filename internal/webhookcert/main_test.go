package webhookcert

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// One kube-apiserver and etcd, started by the first integration test that
// needs them (the pure unit tests run without), shared by all tests, which
// isolate themselves by namespace and object names.
var (
	envMu      sync.Mutex
	envStarted bool
	env        *envtest.Environment
	envCfg     *rest.Config
	envErr     error
)

func testConfig(t *testing.T) *rest.Config {
	t.Helper()
	envMu.Lock()
	defer envMu.Unlock()
	if !envStarted {
		envStarted = true
		envCfg, envErr = startEnv()
	}
	if envErr != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", envErr)
	}
	return envCfg
}

func startEnv() (*rest.Config, error) {
	dir, err := k8sbin.Dir()
	if err != nil {
		return nil, err
	}
	env = &envtest.Environment{
		BinaryAssetsDirectory: dir,
		// Never attach to whatever cluster USE_EXISTING_CLUSTER points at.
		UseExistingCluster: ptr.To(false),
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	return cfg, nil
}

func stopEnv() {
	envMu.Lock()
	defer envMu.Unlock()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
		env = nil
	}
}

// TestMain stops the control plane after the tests. envtest starts etcd and
// kube-apiserver in their own process group, so they would outlive this
// binary if it died without stopping them: they are also stopped on SIGINT
// and SIGTERM, and shortly before `go test -timeout` would panic (a panic
// skips all cleanup).
func TestMain(m *testing.M) {
	flag.Parse()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		stopEnv()
		fmt.Fprintf(os.Stderr, "received %s, control plane stopped\n", s)
		os.Exit(2)
	}()

	if f := flag.Lookup("test.timeout"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if timeout, ok := g.Get().(time.Duration); ok && timeout > time.Minute {
				time.AfterFunc(timeout-30*time.Second, func() {
					fmt.Fprintln(os.Stderr, "test timeout imminent: stopping the control plane")
					stopEnv()
				})
			}
		}
	}

	code := m.Run()
	stopEnv()
	os.Exit(code)
}
