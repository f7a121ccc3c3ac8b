package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const raw = `goos: linux
goarch: amd64
pkg: github.com/edgeplane/edgeplane/internal/controller/burstpolicy
cpu: AMD EPYC
BenchmarkBurst1000Pending/paced-2         	       1	1200 ns/op	  520 p50-ms	 1030 p99-ms
BenchmarkBurst1000Pending/unpaced-2       	       1	1300 ns/op	  900 p50-ms	 2600 p99-ms
PASS
pkg: github.com/edgeplane/edgeplane/test/e2e/floatippool
BenchmarkFloatIP2000Pods-2   	       1	73473813909 ns/op	        89.60 allocations/s	         1.217 floatip/plain
ok  	github.com/edgeplane/edgeplane/test/e2e/floatippool	111.045s
`

func TestParseAndBuild(t *testing.T) {
	results, env, err := Parse(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Env{GOOS: "linux", GOARCH: "amd64", CPU: "AMD EPYC"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if len(results) != 3 || results[2].Name != "BenchmarkFloatIP2000Pods" || results[2].Package != "github.com/edgeplane/edgeplane/test/e2e/floatippool" ||
		results[2].Metrics["floatip/plain"] != 1.217 || results[0].Name != "BenchmarkBurst1000Pending/paced" {
		t.Fatalf("parsed %+v", results)
	}
	// One run each (Runs: 1): judged on that run alone.
	targets := []Target{
		{Benchmark: "BenchmarkBurst1000Pending", Metric: "p99-ms", Op: "<=", Bound: 2000, Runs: 1},
		{Benchmark: "BenchmarkFloatIP2000Pods", Metric: "floatip/plain", Op: "<=", Bound: 1.25, Runs: 1, Formula: "plain pods' time"},
		{Benchmark: "BenchmarkFloatIP2000Pods", Metric: "allocations/s", Op: ">=", Bound: 100, Runs: 1},
		{Benchmark: "BenchmarkMissing", Metric: "x", Op: "<=", Bound: 1, Runs: 1},
	}
	rep := Build(results, targets, env)
	var got []string
	for _, tr := range rep.Targets {
		v := "nil"
		if tr.Value != nil {
			v = format(*tr.Value)
		}
		got = append(got, tr.Benchmark+" "+tr.Metric+"="+v+" "+tr.Status)
	}
	want := []string{
		"BenchmarkBurst1000Pending p99-ms=2600 missed", // the worst sub-benchmark counts
		"BenchmarkFloatIP2000Pods floatip/plain=1.217 met",
		"BenchmarkFloatIP2000Pods allocations/s=89.6 missed",
		"BenchmarkMissing x=nil not run",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if rep.Met != 1 || rep.Missed != 2 || rep.NotRun != 1 {
		t.Errorf("counts met %d missed %d not run %d", rep.Met, rep.Missed, rep.NotRun)
	}
	md, js, err := rep.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| 0 |  (`BenchmarkFloatIP2000Pods` floatip/plain) | 1.217 (1.217–1.217, 1) | plain pods' time | <= 1.25 | met |") || !strings.Contains(string(js), `"status": "missed"`) {
		t.Errorf("rendered:\n%s\n%s", md, js)
	}
}

// go test -count 3: each run prints every sub-benchmark again.
const raw3 = `pkg: github.com/edgeplane/edgeplane/internal/controller/burstpolicy
BenchmarkBurst1000Pending/paced-2         	       1	1200 ns/op	 1030 p99-ms
BenchmarkBurst1000Pending/unpaced-2       	       1	1300 ns/op	 1900 p99-ms
BenchmarkBurst1000Pending/paced-2         	       1	1200 ns/op	 2100 p99-ms
BenchmarkBurst1000Pending/unpaced-2       	       1	1300 ns/op	 1500 p99-ms
BenchmarkBurst1000Pending/paced-2         	       1	1200 ns/op	  900 p99-ms
BenchmarkBurst1000Pending/unpaced-2       	       1	1300 ns/op	 1700 p99-ms
pkg: github.com/edgeplane/edgeplane/test/bench/failover
BenchmarkLeaderFailover-2   	       1	1 ns/op	  0.9 failover/bound
BenchmarkLeaderFailover-2   	       1	1 ns/op	  0.8 failover/bound
`

func TestMedianOfRuns(t *testing.T) {
	results, env, err := Parse(strings.NewReader(raw3))
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(results, []Target{
		{Benchmark: "BenchmarkBurst1000Pending", Metric: "p99-ms", Op: "<=", Bound: 2000},
		{Benchmark: "BenchmarkBurst1000Pending", Metric: "p99-ms", Op: "<=", Bound: 1800},
		{Benchmark: "BenchmarkLeaderFailover", Metric: "failover/bound", Op: "<=", Bound: 1},
		{Benchmark: "BenchmarkLeaderFailover", Metric: "failover/bound", Op: "<=", Bound: 1, Runs: 2},
	}, env)
	var got []string
	for _, tr := range rep.Targets {
		got = append(got, fmt.Sprintf("%v median %s min %s max %s %s", tr.Figures, format(*tr.Value), format(*tr.Min), format(*tr.Max), tr.Status))
	}
	want := []string{
		// Each run's worst sub-benchmark (1900, 2100, 1700); the median
		// judges, so one slow run does not miss the target...
		"[1900 2100 1700] median 1900 min 1700 max 2100 met",
		// ...and one fast run does not meet it.
		"[1900 2100 1700] median 1900 min 1700 max 2100 missed",
		// Two runs are too few for the default three; an even count's
		// median is the mean of the middle two.
		"[0.9 0.8] median 0.85 min 0.8 max 0.9 too few runs",
		"[0.9 0.8] median 0.85 min 0.8 max 0.9 met",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if rep.Met != 2 || rep.Missed != 1 || rep.TooFew != 1 || rep.NotRun != 0 {
		t.Errorf("counts met %d missed %d too few %d not run %d", rep.Met, rep.Missed, rep.TooFew, rep.NotRun)
	}
}

// TestParseSplitResultLines: a benchmark that prints while it runs splits
// its result line (go test wrote the name first); the figures on the next
// line are still that benchmark's. The first run of a 1x benchmark prints
// before the name, which stays whole.
func TestParseSplitResultLines(t *testing.T) {
	const out = `pkg: example.com/p
PodElasticIP convergence: 500 pods Ready in 10.32s
BenchmarkConvergence500Auto-2   	       1	10322533558 ns/op	         1.147 ratio
BenchmarkConvergence500Auto-2   	PodElasticIP convergence: 500 pods Ready in 9.39s; stats map[a:1]
       1	9390000000 ns/op	         1.043 ratio
BenchmarkConvergence500Auto-2   	PodElasticIP convergence: 500 pods
Ready in 9.42s
       1	9420000000 ns/op	         1.047 ratio
--- BENCH: BenchmarkConvergence500Auto-2
       2	 100 something else
PASS
`
	results, _, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, r := range results {
		if r.Name != "BenchmarkConvergence500Auto" || r.Package != "example.com/p" || r.Iterations != 1 {
			t.Errorf("parsed %+v", r)
		}
		got = append(got, r.Metrics["ratio"])
	}
	if diff := cmp.Diff([]float64{1.147, 1.043, 1.047}, got); diff != "" {
		t.Errorf("ratios (-want +got):\n%s", diff)
	}
}

func TestParseRejectsMalformedMetrics(t *testing.T) {
	if _, _, err := Parse(strings.NewReader("BenchmarkX-2 1 12 ns/op 7\n")); err == nil {
		t.Error("an odd number of metric fields parsed")
	}
}

func TestLoadTargetsChecksEveryEntry(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field": `- {benchmark: B, metric: m, op: "<=", bound: 1, command: c, bogus: 1}`,
		"bad op":        `- {benchmark: B, metric: m, op: "<", bound: 1, command: c}`,
		"no command":    `- {benchmark: B, metric: m, op: "<=", bound: 1}`,
		"negative runs": `- {benchmark: B, metric: m, op: "<=", bound: 1, command: c, runs: -1}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadTargets(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := LoadTargets(filepath.Join("..", "..", "bench", "targets.yaml")); err != nil {
		t.Errorf("the repository's targets: %v", err)
	}
}

// A run whose line lacks the metric is skipped; the other runs keep their
// own figures rather than shifting into its place.
func TestRunWithoutTheMetric(t *testing.T) {
	results, _, err := Parse(strings.NewReader(`BenchmarkX/a-2 1 1 ns/op 5 ratio
BenchmarkX/b-2 1 1 ns/op 3 ratio
BenchmarkX/a-2 1 1 ns/op
BenchmarkX/b-2 1 1 ns/op 7 ratio
BenchmarkX/a-2 1 1 ns/op 2 ratio
BenchmarkX/b-2 1 1 ns/op 1 ratio
`))
	if err != nil {
		t.Fatal(err)
	}
	got := runFigures(results, Target{Benchmark: "BenchmarkX", Metric: "ratio", Op: "<="})
	if diff := cmp.Diff([]float64{5, 7, 2}, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
