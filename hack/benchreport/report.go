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
}

// TargetResult is a target with this run's figure.
type TargetResult struct {
	Target
	Value *float64 `json:"value"`
	// Status is met, missed or not run.
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
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

// Parse reads go test -bench output (plain or -v).
func Parse(r io.Reader) ([]Result, Env, error) {
	var (
		out []Result
		env Env
		pkg string
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
			continue
		}
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
	}
	return ts, nil
}

// Build joins the results with the targets. A benchmark name matches its
// sub-benchmarks too (BenchmarkX matches BenchmarkX/case); the target takes
// the worst figure among them.
func Build(results []Result, targets []Target, env Env) Report {
	rep := Report{Env: env, Results: results}
	for _, t := range targets {
		tr := TargetResult{Target: t, Status: "not run"}
		for _, r := range results {
			if r.Name != t.Benchmark && !strings.HasPrefix(r.Name, t.Benchmark+"/") {
				continue
			}
			v, ok := r.Metrics[t.Metric]
			if !ok {
				continue
			}
			if tr.Value == nil || worse(t.Op, v, *tr.Value) {
				tr.Value = &v
			}
		}
		if tr.Value != nil {
			if (t.Op == "<=" && *tr.Value <= t.Bound) || (t.Op == ">=" && *tr.Value >= t.Bound) {
				tr.Status = "met"
			} else {
				tr.Status = "missed"
			}
		}
		switch tr.Status {
		case "met":
			rep.Met++
		case "missed":
			rep.Missed++
		default:
			rep.NotRun++
		}
		rep.Targets = append(rep.Targets, tr)
	}
	return rep
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
	fmt.Fprintf(&b, "# edgeplane benchmark report\n\nGenerated %s by `make bench` (%s, %s/%s, %s). Every figure comes from this one run on this machine. JSON twin: `bench/report.json`.\n\n",
		r.Generated, r.GoVersion, r.Env.GOOS, r.Env.GOARCH, r.Env.CPU)
	fmt.Fprintf(&b, "## Targets (%d met, %d missed, %d not run)\n\n| issue | what | figure | target | status | reproduce |\n|---|---|---|---|---|---|\n",
		r.Met, r.Missed, r.NotRun)
	for _, t := range r.Targets {
		val := "—"
		if t.Value != nil {
			val = format(*t.Value)
		}
		fmt.Fprintf(&b, "| %d | %s (`%s` %s) | %s | %s %s | %s | `%s` |\n", t.Issue, t.What, t.Benchmark, t.Metric, val, t.Op, format(t.Bound), t.Status, t.Command)
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
