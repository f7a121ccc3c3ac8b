package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Result is one benchmark line: its metrics by unit.
type Result struct {
	Name       string             `json:"name"`
	Package    string             `json:"package"`
	Iterations int64              `json:"iterations"`
	Metrics    map[string]float64 `json:"metrics"`
}

// Env is what the go test header says about the machine.
type Env struct {
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	CPU    string `json:"cpu"`
}

// A Target is a figure an issue names a bound for.
type Target struct {
	Benchmark string `json:"benchmark"`
	Metric    string `json:"metric"`
	// Op is <= or >=.
	Op      string  `json:"op"`
	Bound   float64 `json:"bound"`
	Issue   int     `json:"issue"`
	What    string  `json:"what"`
	Command string  `json:"command"`
	// Formula says how the figure's bound (the denominator of a ratio, or
	// the bound itself) is computed, printed next to the figure.
	Formula string `json:"formula,omitempty"`
	// Runs is how many runs the median needs (default DefaultRuns): one run
	// on a noisy machine proves nothing.
	Runs int `json:"runs,omitempty"`
}

// DefaultRuns is the fewest runs a target's median is taken over unless the
// target asks for more.
const DefaultRuns = 3

// Statuses of a target.
const (
	StatusMet        = "met"
	StatusMissed     = "missed"
	StatusNotRun     = "not run"
	StatusTooFewRuns = "too few runs"
)

// TargetResult is a target with its figure: the median over the runs, with
// their minimum and maximum.
type TargetResult struct {
	Target
	// Value is the median of the runs' figures.
	Value *float64 `json:"value"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	// Figures are the runs' figures in the order they ran.
	Figures []float64 `json:"figures,omitempty"`
	// Status is met or missed (by the median), not run, or too few runs.
	Status string `json:"status"`
}

// Report is everything written.
type Report struct {
	Generated string         `json:"generated"`
	GoVersion string         `json:"goVersion"`
	Env       Env            `json:"env"`
	Targets   []TargetResult `json:"targets"`
	Results   []Result       `json:"results"`
	Met       int            `json:"met"`
	Missed    int            `json:"missed"`
	NotRun    int            `json:"notRun"`
	TooFew    int            `json:"tooFewRuns"`
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

// A benchmark that prints to standard output while it runs splits its
// result line: go test has already written the name, so the output lands
// after it (benchName) and the figures follow on a line of their own
// (orphanFigures), which belongs to the last name seen.
var (
	benchName     = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?(\s|$)`)
	orphanFigures = regexp.MustCompile(`^(\d+)\s+(\S+ ns/op.*)$`)
)

// Parse reads go test -bench output (plain or -v).
func Parse(r io.Reader) ([]Result, Env, error) {
	var (
		out []Result
		env Env
		pkg string
		// pending is the benchmark whose result line was split.
		pending string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "goos: "):
			env.GOOS = strings.TrimPrefix(line, "goos: ")
		case strings.HasPrefix(line, "goarch: "):
			env.GOARCH = strings.TrimPrefix(line, "goarch: ")
		case strings.HasPrefix(line, "cpu: "):
			env.CPU = strings.TrimPrefix(line, "cpu: ")
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			if n := benchName.FindStringSubmatch(line); n != nil {
				pending = n[1]
				continue
			}
			f := orphanFigures.FindStringSubmatch(line)
			if f == nil || pending == "" {
				continue
			}
			m = []string{line, pending, "", f[1], f[2]}
		}
		pending = ""
		n, err := strconv.ParseInt(m[3], 10, 64)
		if err != nil {
			continue
		}
		fields := strings.Fields(m[4])
		if len(fields)%2 != 0 {
			return nil, env, fmt.Errorf("benchmark line %q: metrics are not value/unit pairs", line)
		}
		res := Result{Name: m[1], Package: pkg, Iterations: n, Metrics: map[string]float64{}}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, env, fmt.Errorf("benchmark line %q: %q is not a number", line, fields[i])
			}
			res.Metrics[fields[i+1]] = v
		}
		out = append(out, res)
	}
	return out, env, sc.Err()
}

// LoadTargets reads the targets file and checks every entry.
func LoadTargets(path string) ([]Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts []Target
	if err := yaml.UnmarshalStrict(data, &ts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, t := range ts {
		if t.Benchmark == "" || t.Metric == "" || t.Command == "" || (t.Op != "<=" && t.Op != ">=") {
			return nil, fmt.Errorf("%s: target %d needs benchmark, metric, command and op <= or >=", path, i)
		}
		if t.Runs < 0 {
			return nil, fmt.Errorf("%s: target %d: runs %d is negative", path, i, t.Runs)
		}
	}
	return ts, nil
}

// Build joins the results with the targets. Repeated lines of one benchmark
// (go test -count N) are its runs, the k-th line of a name being run k. A
// benchmark name matches its sub-benchmarks too (BenchmarkX matches
// BenchmarkX/case): a run's figure is the worst among them in that run. The
// target's figure is the median of the runs, judged against the bound only
// when there are at least Runs of them.
func Build(results []Result, targets []Target, env Env) Report {
	rep := Report{Env: env, Results: results}
	for _, t := range targets {
		tr := TargetResult{Target: t, Status: StatusNotRun}
		tr.Figures = runFigures(results, t)
		if len(tr.Figures) > 0 {
			med, lo, hi := spread(tr.Figures)
			tr.Value, tr.Min, tr.Max = &med, &lo, &hi
			switch {
			case len(tr.Figures) < t.minRuns():
				tr.Status = StatusTooFewRuns
			case (t.Op == "<=" && med <= t.Bound) || (t.Op == ">=" && med >= t.Bound):
				tr.Status = StatusMet
			default:
				tr.Status = StatusMissed
			}
		}
		switch tr.Status {
		case StatusMet:
			rep.Met++
		case StatusMissed:
			rep.Missed++
		case StatusTooFewRuns:
			rep.TooFew++
		default:
			rep.NotRun++
		}
		rep.Targets = append(rep.Targets, tr)
	}
	return rep
}

func (t Target) minRuns() int {
	if t.Runs > 0 {
		return t.Runs
	}
	return DefaultRuns
}

// runFigures returns the target's figure of each run, in run order: the
// worst among the matching lines of that run.
func runFigures(results []Result, t Target) []float64 {
	seen := map[string]int{} // lines of each name so far: the run a line belongs to
	byRun := map[int]float64{}
	runs := 0
	for _, r := range results {
		if r.Name != t.Benchmark && !strings.HasPrefix(r.Name, t.Benchmark+"/") {
			continue
		}
		run := seen[r.Name]
		seen[r.Name]++
		v, ok := r.Metrics[t.Metric]
		if !ok {
			continue
		}
		if cur, has := byRun[run]; !has || worse(t.Op, v, cur) {
			byRun[run] = v
		}
		runs = max(runs, run+1)
	}
	var figs []float64
	for run := range runs {
		if v, ok := byRun[run]; ok {
			figs = append(figs, v)
		}
	}
	return figs
}

// spread returns the median, minimum and maximum of figs (not empty).
func spread(figs []float64) (median, lo, hi float64) {
	s := slices.Clone(figs)
	slices.Sort(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

func worse(op string, v, than float64) bool {
	if op == "<=" {
		return v > than
	}
	return v < than
}

// Render writes the Markdown report and the JSON twin.
func (r Report) Render() ([]byte, []byte, error) {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# edgeplane benchmark report\n\nGenerated %s by `make bench` (%s, %s/%s, %s). Every figure comes from this machine; a target's figure is the median of its runs (at least %d), with their minimum and maximum. JSON twin: `bench/report.json`.\n\n",
		r.Generated, r.GoVersion, r.Env.GOOS, r.Env.GOARCH, r.Env.CPU, DefaultRuns)
	fmt.Fprintf(&b, "## Targets (%d met, %d missed, %d with too few runs, %d not run)\n\n| issue | what | median (min–max, runs) | bound | target | status | reproduce |\n|---|---|---|---|---|---|---|\n",
		r.Met, r.Missed, r.TooFew, r.NotRun)
	for _, t := range r.Targets {
		val := "—"
		if t.Value != nil {
			val = fmt.Sprintf("%s (%s–%s, %d)", format(*t.Value), format(*t.Min), format(*t.Max), len(t.Figures))
		}
		formula := t.Formula
		if formula == "" {
			formula = "—"
		}
		fmt.Fprintf(&b, "| %d | %s (`%s` %s) | %s | %s | %s %s | %s | `%s` |\n", t.Issue, t.What, t.Benchmark, t.Metric, val, formula, t.Op, format(t.Bound), t.Status, t.Command)
	}
	fmt.Fprintf(&b, "\n## Every figure\n\n| package | benchmark | n | figures |\n|---|---|---|---|\n")
	for _, res := range r.Results {
		units := make([]string, 0, len(res.Metrics))
		for u := range res.Metrics {
			units = append(units, u)
		}
		sort.Strings(units)
		parts := make([]string, 0, len(units))
		for _, u := range units {
			parts = append(parts, format(res.Metrics[u])+" "+u)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", strings.TrimPrefix(res.Package, "github.com/edgeplane/edgeplane/"), res.Name, res.Iterations, strings.Join(parts, ", "))
	}
	return b.Bytes(), append(js, '\n'), nil
}

func format(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}
