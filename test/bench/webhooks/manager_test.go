package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/runtime/admissionbody"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
	"github.com/edgeplane/edgeplane/test/bench/scale"
)

// managerSpecEnv, when set (to a managerSpec in JSON), makes this test
// binary the benchmark's manager process (runManager) instead of running
// benchmarks.
//
// Why a process of its own: in one process, the benchmark's 200 client
// goroutines (encoding, HTTP/2, TLS), the span sink and the test binary's
// collector (GOGC 100 on a small heap: 42 collections in one 2-round run)
// competed with the handlers for the same GOMAXPROCS, which no production
// webhook server suffers. A runtime/trace of the single-process benchmark
// showed the slowest handler goroutines spending 0.3 ms running and 300 ms
// runnable, waiting for a P. The manager process here is the one the
// manager binary would be for these controllers: the same controllers and
// webhook server, the manager's Go runtime settings (manager.Manager.Start),
// its own GOMAXPROCS; only the recorder in front of its webhook mux and the
// no-op handler are the benchmark's.
const managerSpecEnv = "EDGEPLANE_WEBHOOK_BENCH_MANAGER"

// managerTraceEnv, when set to a file path, makes the manager process write
// a runtime/trace of its whole run there.
const managerTraceEnv = "EDGEPLANE_WEBHOOK_BENCH_MANAGER_TRACE"

// managerProfileEnv, when set to a file path prefix, makes the manager
// process write a CPU profile of its whole run to <prefix>.cpu and, as it
// exits, its allocation and heap profiles to <prefix>.allocs and
// <prefix>.heap (go tool pprof -sample_index=alloc_space).
const managerProfileEnv = "EDGEPLANE_WEBHOOK_BENCH_MANAGER_PROFILE"

// managerAPICountEnv, when set to a file path, makes the manager process
// count its Kubernetes API requests by verb and resource
// (internal/testsupport/apicount) and write them there as it exits: what
// its controllers asked of the API server during the run.
const managerAPICountEnv = "EDGEPLANE_WEBHOOK_BENCH_MANAGER_APICOUNT"

// managerSpec tells the manager process where to find the API server and
// where to serve.
type managerSpec struct {
	Kubeconfig string
	// CertDir, Host and Port are where the API server calls the webhooks
	// (envtest's local serving options).
	CertDir string
	Host    string
	Port    int
	// Control is the loopback address of the recorder's control endpoint
	// (GET /recorded: the handler times so far, reset; GET /readyz).
	Control string
}

// runManager is the manager process: it runs until SIGTERM or its parent's
// death (Pdeathsig) and returns the exit code.
func runManager(raw string) int {
	var spec managerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "manager spec:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// A runtime/trace of the manager process, to see what its handler
	// goroutines wait for (go tool trace; -pprof=sched).
	if path := os.Getenv(managerTraceEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "manager trace:", err)
			return 2
		}
		defer func() { _ = f.Close() }()
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "manager trace:", err)
			return 2
		}
		defer trace.Stop()
	}
	if prefix := os.Getenv(managerProfileEnv); prefix != "" {
		stopProfiles, err := startProfiles(prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "manager profiles:", err)
			return 2
		}
		defer stopProfiles()
	}
	if err := serveManager(ctx, spec); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return 0
}

// startProfiles starts the CPU profile of managerProfileEnv; the returned
// function stops it and writes the allocation and heap profiles.
func startProfiles(prefix string) (func(), error) {
	cpu, err := os.Create(prefix + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		_ = cpu.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = cpu.Close()
		for _, name := range []string{"allocs", "heap"} {
			f, err := os.Create(prefix + "." + name)
			if err != nil {
				fmt.Fprintln(os.Stderr, "manager profiles:", err)
				continue
			}
			_ = pprof.Lookup(name).WriteTo(f, 0)
			_ = f.Close()
		}
	}, nil
}

func serveManager(ctx context.Context, spec managerSpec) error {
	ctrl.SetLogger(logr.Discard())
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", spec.Kubeconfig, err)
	}
	scheme, err := edgescheme.New()
	if err != nil {
		return err
	}
	// The manager's own client limits (--kube-api-qps/--kube-api-burst), not
	// client-go's 5/10: a webhook that reads live would be throttled here
	// as it is not in the manager.
	defaults := manager.DefaultOptions()
	clientlimit.Apply(cfg, defaults.KubeAPIQPS, defaults.KubeAPIBurst)
	if path := os.Getenv(managerAPICountEnv); path != "" {
		counter := apicount.New()
		cfg.Wrap(counter.Wrap)
		defer func() {
			if err := os.WriteFile(path, []byte(counter.String()), 0o600); err != nil {
				fmt.Fprintln(os.Stderr, "manager API counts:", err)
			}
		}()
	}

	// Every controller that serves webhooks registers them on mux, exactly
	// as in the manager; the recorder serves mux where the API server calls
	// (the manager's own webhook server listens elsewhere, unused).
	mux := http.NewServeMux()
	port, err := freePort()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: admissionbody.Server(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: spec.CertDir, WebhookMux: mux})),
	})
	if err != nil {
		return err
	}
	all := manager.Controllers()
	fs := pflag.NewFlagSet("controllers", pflag.ContinueOnError)
	manager.BindControllerFlags(fs, all)
	if err := fs.Parse([]string{"--floatippool-extender-address=", "--floatippool-api-address=", "--floatippool-migrate-galaxy=false"}); err != nil {
		return err
	}
	for _, c := range all {
		if !c.ServesWebhooks {
			continue
		}
		if err := c.Setup(ctx, mgr, setup.Config{ClusterName: "bench"}); err != nil {
			return fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	// manager.Manager's Start applies the manager binary's Go runtime
	// settings (GOGC 40 and the heap-following pacer) before starting.
	started := make(chan error, 1)
	go func() { started <- (&manager.Manager{Manager: mgr}).Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the cache did not sync")
	}

	// The API server calls controller-runtime's own webhook server, as in
	// the manager (the same TLS settings, HTTP/2, timeouts), whose one
	// handler is the recorder in front of the manager's mux.
	mux.HandleFunc(noopPath, noopWebhook)
	rec := &recorder{next: mux, d: map[string][]time.Duration{}}
	front := http.NewServeMux()
	front.Handle("/", rec)
	srv := webhook.NewServer(webhook.Options{Host: spec.Host, Port: spec.Port, CertDir: spec.CertDir, WebhookMux: front})
	go func() { started <- srv.Start(ctx) }()

	control := http.NewServeMux()
	control.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	control.HandleFunc("/gc", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(readGCStats())
	})
	control.HandleFunc("/recorded", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec.reset())
	})
	l, err := net.Listen("tcp", spec.Control)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", spec.Control, err)
	}
	cs := &http.Server{Handler: control, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = cs.Close() }()
	go func() { _ = cs.Serve(l) }()
	select {
	case err := <-started:
		if ctx.Err() == nil {
			return fmt.Errorf("the manager or its webhook server stopped: %w", err)
		}
	case <-ctx.Done():
	}
	return nil
}

// managerProc is the manager process as the benchmark sees it: its handler
// times (remote recorder) and its CPU.
type managerProc struct {
	p       *localcluster.Process
	control string
	http    *http.Client
}

// startManagerProc starts this test binary as the manager process against
// the API server of kubeconfig, serving the webhooks where the API server's
// configurations point (host:port, certificates in certDir).
func startManagerProc(ctx context.Context, dir, kubeconfig, certDir, host string, port int) (*managerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	control := l.Addr().String()
	_ = l.Close()
	spec, err := json.Marshal(managerSpec{Kubeconfig: kubeconfig, CertDir: certDir, Host: host, Port: port, Control: control})
	if err != nil {
		return nil, err
	}
	p, err := localcluster.StartProcess("manager", self, nil, []string{managerSpecEnv + "=" + string(spec)}, dir)
	if err != nil {
		return nil, err
	}
	m := &managerProc{p: p, control: control, http: &http.Client{Timeout: 30 * time.Second}}
	if err := testbin.WaitHTTPOK(ctx, "http://"+control+"/readyz", 3*time.Minute, p.Exited); err != nil {
		_ = p.Kill()
		tail, _ := os.ReadFile(p.LogPath())
		return nil, fmt.Errorf("the manager process never became ready: %w\n%s", err, lastLines(string(tail), 30))
	}
	return m, nil
}

// reset returns the handler times recorded since the last call, by URL
// path, and starts a new record.
func (m *managerProc) reset() map[string][]time.Duration {
	resp, err := m.http.Get("http://" + m.control + "/recorded")
	if err != nil {
		panic(fmt.Sprintf("reading the manager's recorder: %v", err))
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string][]time.Duration{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(fmt.Sprintf("decoding the manager's recorder: %v", err))
	}
	return out
}

// gcStats is what the manager process's collector has done so far.
type gcStats struct {
	Cycles uint64
	// Assist is the CPU the collector took from allocating goroutines
	// (handlers included): their mark assists.
	Assist time.Duration
	// Pause is the total of its stop-the-world pauses, as the runtime
	// estimates it.
	Pause time.Duration
}

func (s gcStats) sub(t gcStats) gcStats {
	return gcStats{Cycles: s.Cycles - t.Cycles, Assist: s.Assist - t.Assist, Pause: s.Pause - t.Pause}
}

// readGCStats reads gcStats from runtime/metrics (in the manager process).
func readGCStats() gcStats {
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}, {Name: "/cpu/classes/gc/pause:cpu-seconds"}}
	metrics.Read(m)
	secs := func(v metrics.Value) time.Duration {
		if v.Kind() != metrics.KindFloat64 {
			return 0
		}
		return time.Duration(v.Float64() * float64(time.Second))
	}
	var s gcStats
	if m[0].Value.Kind() == metrics.KindUint64 {
		s.Cycles = m[0].Value.Uint64()
	}
	s.Assist, s.Pause = secs(m[1].Value), secs(m[2].Value)
	return s
}

// gc reads the manager process's gcStats.
func (m *managerProc) gc() gcStats {
	resp, err := m.http.Get("http://" + m.control + "/gc")
	if err != nil {
		return gcStats{}
	}
	defer func() { _ = resp.Body.Close() }()
	var s gcStats
	_ = json.NewDecoder(resp.Body).Decode(&s)
	return s
}

// cpu is the CPU time the manager process has used so far.
func (m *managerProc) cpu() time.Duration {
	d, err := scale.ReadCPU(m.p.Pid())
	if err != nil {
		return 0
	}
	return d
}

func (m *managerProc) stop() {
	if err := m.p.Stop(10 * time.Second); err != nil {
		_ = m.p.Kill()
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// servedWebhooks names the controllers that serve webhooks (the manager
// process sets up those).
func servedWebhooks() []string {
	var out []string
	for _, c := range manager.Controllers() {
		if c.ServesWebhooks {
			out = append(out, c.Name)
		}
	}
	return out
}
