package floatippool_test

// The float-IP benchmarks run edgeplane's manager as users run it (every
// controller, default settings, its webhooks called by the API server) in a
// process of its own: this test binary, started again with
// EDGEPLANE_BENCH_FIP_MANAGER set. There it counts its API requests
// (internal/testsupport/apicount) and answers on a loopback address what the
// benchmark reads between phases: its CPU time, those counts and the
// extender's latency histograms; it can also write a CPU profile of itself.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

// Set in the manager process: the loopback address of its stats server and
// the kubeconfig it runs with.
const (
	envBenchManager    = "EDGEPLANE_BENCH_FIP_MANAGER"
	envBenchKubeconfig = "EDGEPLANE_BENCH_FIP_KUBECONFIG"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(envBenchManager); addr != "" {
		if err := runBenchManager(addr, os.Getenv(envBenchKubeconfig), os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// managerStats is what the manager process reports.
type managerStats struct {
	// CPU is the process's user plus system CPU time, in seconds.
	CPU float64 `json:"cpu"`
	// Requests are its API requests so far, by "VERB resource".
	Requests map[string]int `json:"requests"`
	// Latency is the extender's latency histogram by verb.
	Latency map[string]latencies `json:"latency"`
	// GCCycles are the Go garbage collections so far, and HeapLive the heap
	// the last one left (bytes).
	GCCycles uint64 `json:"gcCycles"`
	HeapLive uint64 `json:"heapLive"`
}

// runBenchManager builds the manager from args as cmd/edgeplane-manager
// does, with its requests counted, serves the stats on addr and runs until
// SIGTERM.
func runBenchManager(addr, kubeconfig string, args []string) error {
	all := manager.Controllers()
	opts := manager.DefaultOptions()
	zapOpts := zap.Options{}
	fs := manager.FlagSet("edgeplane-manager", &opts, all, &zapOpts)
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	counter := apicount.New()
	cfg.Wrap(counter.Wrap)
	ctx := ctrl.SetupSignalHandler()
	mgr, err := manager.New(ctx, cfg, opts, all)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: statsHandler(counter), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	return mgr.Start(ctx)
}

// statsHandler serves GET /stats, POST /profile?path=... (start a CPU
// profile into path) and POST /profile/stop.
func statsHandler(counter *apicount.Counter) http.Handler {
	var mu sync.Mutex
	var profile *os.File
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		st := managerStats{
			CPU:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(),
			Requests: counter.Counts(),
			Latency:  extenderHistograms(),
		}
		samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
		metrics.Read(samples)
		if samples[0].Value.Kind() == metrics.KindUint64 {
			st.GCCycles = samples[0].Value.Uint64()
		}
		if samples[1].Value.Kind() == metrics.KindUint64 {
			st.HeapLive = samples[1].Value.Uint64()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("POST /profile", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.Create(r.URL.Query().Get("path"))
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		profile = f
	})
	mux.HandleFunc("POST /profile/stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if profile != nil {
			pprof.StopCPUProfile()
			_ = profile.Close()
			profile = nil
		}
	})
	return mux
}

// benchManager is the manager process, seen from the benchmark.
type benchManager struct {
	proc  *localcluster.Process
	stats string // base URL of its stats server
}

// startBenchManager starts the manager process against kubeconfig with
// args, and waits until it serves its stats.
func startBenchManager(b *testing.B, ctx context.Context, kubeconfig string, args []string, logDir string) *benchManager {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	addr, err := benchFreeAddr()
	if err != nil {
		b.Fatal(err)
	}
	p, err := localcluster.StartProcess("edgeplane-manager", self, args,
		[]string{envBenchManager + "=" + addr, envBenchKubeconfig + "=" + kubeconfig}, logDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Stop(15 * time.Second) })
	m := &benchManager{proc: p, stats: "http://" + addr}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := m.read(ctx); err == nil {
			return m
		} else if p.Exited() || time.Now().After(deadline) {
			b.Fatalf("the manager process does not serve its stats (%v); its log is %s: %v", err, p.LogPath(), p.ExitError())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (m *benchManager) read(ctx context.Context) (managerStats, error) {
	var st managerStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.stats+"/stats", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("stats: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// profile starts (path != "") or stops (path == "") a CPU profile of the
// manager process.
func (m *benchManager) profile(ctx context.Context, path string) error {
	u := m.stats + "/profile/stop"
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		u = m.stats + "/profile?path=" + abs
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return errors.New("profile: " + resp.Status)
	}
	return nil
}

// latencies is one verb's histogram of the extender: cumulative counts by
// upper bound, the sum (seconds) and the count.
type latencies struct {
	Bounds  []float64 `json:"bounds"`
	Buckets []uint64  `json:"buckets"`
	Sum     float64   `json:"sum"`
	Count   uint64    `json:"count"`
}

func (l latencies) meanMS() float64 {
	if l.Count == 0 {
		return 0
	}
	return 1000 * l.Sum / float64(l.Count)
}

// quantileMS is the upper bound of the bucket holding quantile q (+Inf
// past the last bucket).
func (l latencies) quantileMS(q float64) float64 {
	if l.Count == 0 {
		return 0
	}
	for i, c := range l.Buckets {
		if float64(c) >= q*float64(l.Count) {
			return 1000 * l.Bounds[i]
		}
	}
	return math.Inf(1)
}

// minus is the histogram of the observations since before.
func (l latencies) minus(before latencies) latencies {
	d := latencies{Bounds: l.Bounds, Buckets: slices.Clone(l.Buckets), Sum: l.Sum - before.Sum, Count: l.Count - before.Count}
	for i := range d.Buckets {
		if i < len(before.Buckets) {
			d.Buckets[i] -= before.Buckets[i]
		}
	}
	return d
}

// extenderHistograms reads from this process's registry the extender's
// latency histograms by verb (every result together) and the pod webhook's,
// as "webhook".
func extenderHistograms() map[string]latencies {
	out := map[string]latencies{}
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		name := f.GetName()
		if name != "edgeplane_floatip_extender_latency_seconds" && name != "controller_runtime_webhook_latency_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := promtext.Labels(m)
			verb := l["verb"]
			if l["webhook"] == "/mutate-v1-pod-burstpolicy" {
				verb = "webhook"
			}
			if verb == "" {
				continue
			}
			h, cur := m.GetHistogram(), out[verb]
			if cur.Buckets == nil {
				for _, bk := range h.GetBucket() {
					cur.Bounds = append(cur.Bounds, bk.GetUpperBound())
				}
				cur.Buckets = make([]uint64, len(cur.Bounds))
			}
			for i, bk := range h.GetBucket() {
				cur.Buckets[i] += bk.GetCumulativeCount()
			}
			cur.Sum += h.GetSampleSum()
			cur.Count += h.GetSampleCount()
			out[verb] = cur
		}
	}
	return out
}
