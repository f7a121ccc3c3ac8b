// Command benchreport turns the output of `go test -bench` into bench/report.md
// and its JSON twin: every benchmark figure, and for each figure an issue
// names a target for, the target, whether this run met it, and the command
// that reproduces it.
//
//	go test -run '^$' -bench . -benchmem ./... | tee bench/raw.txt
//	go run ./hack/benchreport -in bench/raw.txt -targets bench/targets.yaml -md bench/report.md -json bench/report.json
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

func main() {
	in := flag.String("in", "-", "go test -bench output ('-' is stdin)")
	targetsPath := flag.String("targets", "bench/targets.yaml", "the targets file")
	mdPath := flag.String("md", "bench/report.md", "the Markdown report to write")
	jsonPath := flag.String("json", "bench/report.json", "the JSON twin to write")
	flag.Parse()
	if err := run(*in, *targetsPath, *mdPath, *jsonPath); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(in, targetsPath, mdPath, jsonPath string) error {
	var r io.Reader = os.Stdin
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	results, env, err := Parse(r)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", in, err)
	}
	targets, err := LoadTargets(targetsPath)
	if err != nil {
		return err
	}
	rep := Build(results, targets, env)
	rep.Generated = time.Now().UTC().Format(time.RFC3339)
	rep.GoVersion = runtime.Version()
	md, js, err := rep.Render()
	if err != nil {
		return err
	}
	if err := os.WriteFile(mdPath, md, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, js, 0o644); err != nil {
		return err
	}
	fmt.Printf("benchreport: %d benchmarks, %d targets (%d met, %d missed, %d not run) -> %s, %s\n",
		len(results), len(rep.Targets), rep.Met, rep.Missed, rep.NotRun, mdPath, jsonPath)
	return nil
}
