// Command promql-metrics prints the metric names each PromQL expression reads,
// using Prometheus' own parser (github.com/prometheus/prometheus/promql/parser),
// so that the dashboard and alert tests of the main module can check them
// against a running manager's /metrics without the main module depending on
// Prometheus.
//
// Input on stdin: a JSON array of expressions. Output on stdout: a JSON array
// with, per expression, {"expr", "selectors"}: every vector selector's metric
// name and the label names its matchers use (besides __name__), or {"expr",
// "error"} when the expression does not parse or a selector names no metric
// exactly.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type result struct {
	Expr      string     `json:"expr"`
	Selectors []selector `json:"selectors"`
	Error     string     `json:"error,omitempty"`
}

type selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		fmt.Fprintf(os.Stderr, "reading a JSON array of expressions from stdin: %v\n", err)
		os.Exit(2)
	}
	out := make([]result, 0, len(exprs))
	for _, e := range exprs {
		sels, err := selectors(e)
		r := result{Expr: e, Selectors: sels}
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "writing the result: %v\n", err)
		os.Exit(1)
	}
}

// selectors returns every vector selector of expr with the metric name it
// matches exactly. A selector without an exact name (e.g.
// {__name__=~"..."}) is an error: nothing could check it against an
// exporter.
func selectors(expr string) ([]selector, error) {
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []selector
	var bad error
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		sel := selector{Metric: vs.Name}
		for _, m := range vs.LabelMatchers {
			switch {
			case m.Name == labels.MetricName && m.Type == labels.MatchEqual:
				sel.Metric = m.Value
			case m.Name != labels.MetricName:
				sel.Labels = append(sel.Labels, m.Name)
			}
		}
		if sel.Metric == "" {
			bad = fmt.Errorf("selector %s names no metric exactly", vs.String())
			return nil
		}
		slices.Sort(sel.Labels)
		sel.Labels = slices.Compact(sel.Labels)
		out = append(out, sel)
		return nil
	})
	return out, bad
}
