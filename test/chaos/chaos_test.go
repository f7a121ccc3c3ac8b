//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

var (
	seedFlag    = flag.Uint64("chaos.seed", 0, "seed of the run's random decisions (default: $CHAOS_SEED, else the clock)")
	profileFlag = flag.String("chaos.profile", "", "profile: ci or full (default: $CHAOS_PROFILE, else full)")
)

// clusterIdentity tags every cloud object the managers create.
const clusterIdentity = "chaos"

// run is the state of one chaos run.
type run struct {
	t       *testing.T
	ctx     context.Context
	prof    Profile
	seed    uint64
	art     string // artifacts: binaries, logs, the cluster's directory
	scheme  *runtime.Scheme
	cluster *localcluster.Cluster
	c       client.Client
	emuURL  string
	emu     *localcluster.Process
	// emuToken is the emulator's admin API token, new for every run.
	emuToken string

	webhookProxy, extenderProxy *Proxy
	replicas                    []*replica
	// extenderCerts are the replicas' extender certificates (one CA, as
	// the self-managed Secret gives every replica) and the scheduler's.
	extenderCerts floatippooltest.Certs

	// probeWindows and probeNodes number the fault windows' probes (the
	// fault actor's alone).
	probeWindows, probeNodes int

	mu        sync.Mutex
	lastFault time.Time
	counts    map[string]int
	tally     Tally    // kills, failovers and fault windows, checked at the end
	problems  []string // failovers that never happened and the like: each fails the run
	events    *os.File
}

// rng returns the random source of one actor of the run: its decisions
// depend only on the seed (the interleaving with the cluster does not).
func (r *run) rng(actor uint64) *rand.Rand { return rand.New(rand.NewPCG(r.seed, actor)) }

// logf records an event of the run in the test log and events.log.
func (r *run) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.t.Log(msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events != nil {
		_, _ = fmt.Fprintf(r.events, "%s %s\n", time.Now().UTC().Format("15:04:05.000"), msg)
	}
}

// count adds one to a named counter printed at the end.
func (r *run) count(name string) {
	r.mu.Lock()
	r.counts[name]++
	r.mu.Unlock()
}

// tallyf changes the tally.
func (r *run) tallyf(change func(*Tally)) {
	r.mu.Lock()
	change(&r.tally)
	r.mu.Unlock()
}

// faultEnded records the end of a fault; convergence is timed from the last.
func (r *run) faultEnded() {
	r.mu.Lock()
	if now := time.Now(); now.After(r.lastFault) {
		r.lastFault = now
	}
	r.mu.Unlock()
}

// problem records something that fails the run without stopping it.
func (r *run) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.logf("PROBLEM: %s", msg)
	r.mu.Lock()
	r.problems = append(r.problems, msg)
	r.mu.Unlock()
}

// sleep waits d or until ctx ends; false if ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func settings(t *testing.T) (Profile, uint64) {
	name := *profileFlag
	if name == "" {
		name = os.Getenv("CHAOS_PROFILE")
	}
	prof, err := LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	seed := *seedFlag
	if seed == 0 {
		if s := os.Getenv("CHAOS_SEED"); s != "" {
			if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
				t.Fatalf("CHAOS_SEED=%q: %v", s, err)
			}
		}
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()) //nolint:gosec // a positive clock reading
	}
	return prof, seed
}

// TestChaos is the chaos run; see docs/chaos.md.
func TestChaos(t *testing.T) {
	prof, seed := settings(t)
	// The run talks to the cluster with controller-runtime clients only;
	// their logs would be noise.
	ctrllog.SetLogger(logr.Discard())
	r := &run{t: t, ctx: t.Context(), prof: prof, seed: seed, counts: map[string]int{}, tally: NewTally(prof)}
	fmt.Printf("chaos: profile %s, seed %d (reproduce with CHAOS_PROFILE=%s CHAOS_SEED=%d make chaos)\n", prof.Name, seed, prof.Name, seed)
	began := time.Now()
	r.setUp()
	setUpTook := time.Since(began)

	sampler := r.startIngressSampler()
	chaosCtx, stopChaos := context.WithTimeout(r.ctx, prof.Duration)
	defer stopChaos()
	chaosBegan := time.Now()
	var wg sync.WaitGroup
	for _, actor := range []func(context.Context){
		r.churnEIPPods, r.churnAIANodes, r.churnFloatIPs, r.churnIngress, r.churnBurst,
		r.killLeaders, r.faultWindows, r.pauseEtcd,
	} {
		wg.Go(func() { actor(chaosCtx) })
	}
	superviseCtx, stopSupervising := context.WithCancel(r.ctx)
	supervised := make(chan struct{})
	go func() { defer close(supervised); r.supervise(superviseCtx) }()
	wg.Wait()
	r.faultEnded()
	r.mu.Lock()
	lastFault := r.lastFault
	r.mu.Unlock()
	r.logf("churn and faults stopped after %s; waiting for convergence", time.Since(chaosBegan).Round(time.Second))

	figures := r.converge(lastFault)
	stopSupervising()
	<-supervised
	figures.DegradedBeyondBudget, figures.DegradedSample = sampler.stop()
	sampler.counts(r)
	r.mu.Lock()
	figures.Tally = r.tally
	r.mu.Unlock()

	r.report(figures, setUpTook, time.Since(began))
	for _, f := range figures.Failures() {
		t.Errorf("run failed: %s", f)
	}
	r.mu.Lock()
	for _, p := range r.problems {
		t.Errorf("%s", p)
	}
	r.mu.Unlock()
	if t.Failed() {
		t.Logf("artifacts (manager, emulator and cluster logs) kept in %s; reproduce with CHAOS_PROFILE=%s CHAOS_SEED=%d make chaos", r.art, prof.Name, seed)
	}
}

// report prints the figures (invariants, kills, failovers, fault windows,
// convergence) as one block of `name: value` lines, then what else the run
// did, and writes both to figures.txt in the artifacts.
func (r *run) report(f Figures, setUp, total time.Duration) {
	lines := f.Lines()
	r.mu.Lock()
	names := make([]string, 0, len(r.counts))
	for n := range r.counts {
		names = append(names, n)
	}
	slices.Sort(names)
	var info []string
	for _, n := range names {
		info = append(info, fmt.Sprintf("%s: %d", n, r.counts[n]))
	}
	r.mu.Unlock()
	if raw, err := r.emulatorCall(http.MethodGet, "/admin/state", ""); err == nil {
		var snap struct {
			Stats map[string]int64 `json:"stats"`
		}
		if json.Unmarshal(raw, &snap) == nil {
			info = append(info, CallSummary(snap.Stats)...)
		}
	}
	info = append(info,
		fmt.Sprintf("webhook connections served by a replica: %d", r.webhookProxy.Served()),
		fmt.Sprintf("webhook connections no replica accepted: %d", r.webhookProxy.Refused()),
		fmt.Sprintf("set-up: %s", setUp.Round(time.Second)),
		fmt.Sprintf("run total: %s", total.Round(time.Second)),
	)
	block := fmt.Sprintf("--- chaos figures (profile %s, seed %d) ---\n%s\n--- what ran ---\n%s\n---\n",
		r.prof.Name, r.seed, strings.Join(lines, "\n"), strings.Join(info, "\n"))
	fmt.Print(block)
	_ = os.WriteFile(filepath.Join(r.art, "figures.txt"), []byte(block), 0o644) //nolint:gosec // a report
}
