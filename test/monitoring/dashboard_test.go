package monitoring

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/statemetrics"
)

// TestDashboardRowPerKind: every kind the state metrics report (the
// statemetrics kind list, so a new kind without a row fails here) has a row
// whose panels select, by an explicit matcher that matches the kind, its
// objects, not-Ready reasons and longest wait, and its controller's
// reconciles and errors. The Manager row's unfiltered reconcile panels do
// not count: a row that matches every kind is no kind's row.
func TestDashboardRowPerKind(t *testing.T) {
	rows := dashboardRows(t)
	byKind := []string{"edgeplane_resources", "edgeplane_resources_not_ready", "edgeplane_resources_not_ready_since_timestamp_seconds"}
	byController := []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total"}
	for _, k := range statemetrics.Kinds() {
		var found []string
		for _, r := range rows {
			ok := true
			for _, m := range byKind {
				ok = ok && r.selects(t, m, "kind", k.Name)
			}
			for _, m := range byController {
				ok = ok && r.selects(t, m, "controller", k.Controller)
			}
			if ok {
				found = append(found, r.title)
			}
		}
		if len(found) == 0 {
			t.Errorf("kind %s has no dashboard row: no row selects %s with a kind matcher matching %q and %s with a controller matcher matching %q",
				k.Name, strings.Join(byKind, ", "), k.Name, strings.Join(byController, ", "), k.Controller)
		}
	}
}

// TestDashboardOrphanKinds: the orphan panels select the kind labels the
// sweeps really use (each sweep's SweepKind, not the owning CRD's kind),
// and every sweep is on the dashboard.
func TestDashboardOrphanKinds(t *testing.T) {
	// Every orphan.Sweeper the manager runs, by its kind label.
	sweeps := []string{podelasticip.SweepKind, podelasticip.SweepKindTencent, nodeelasticip.SweepKind, anycastipbinding.SweepKind}
	shown := map[string]bool{}
	for _, r := range dashboardRows(t) {
		for _, q := range r.queries {
			for _, s := range selectors(q.expr) {
				if !strings.HasPrefix(s.metric, "edgeplane_orphan_") {
					continue
				}
				m, ok := s.matcher("kind")
				if !ok {
					t.Errorf("%s: %s has no kind matcher (in %q)", q.where, s.metric, q.expr)
					continue
				}
				var hits []string
				for _, k := range sweeps {
					if m.matches(t, k) {
						hits = append(hits, k)
						shown[k] = true
					}
				}
				if len(hits) == 0 {
					t.Errorf("%s: %s's matcher %s%s%q matches no sweep's kind label (%s)", q.where, s.metric, m.label, m.op, m.value, strings.Join(sweeps, ", "))
				}
			}
		}
	}
	for _, k := range sweeps {
		if !shown[k] {
			t.Errorf("no dashboard panel shows the orphans of sweep %q", k)
		}
	}
}

// row is a dashboard row and the queries of the panels under it.
type row struct {
	title   string
	queries []query
}

// dashboardRows reads the dashboard's rows: each row panel and the panels
// after it up to the next row (Grafana's layout of uncollapsed rows).
func dashboardRows(t *testing.T) []row {
	t.Helper()
	var d struct {
		Panels []struct {
			Type, Title string
			Collapsed   bool
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(readRepoFile(t, dashboardFile), &d); err != nil {
		t.Fatalf("reading %s: %v", dashboardFile, err)
	}
	var out []row
	for _, p := range d.Panels {
		if p.Type == "row" {
			if p.Collapsed {
				t.Errorf("row %q is collapsed: its panels would be nested in it, which this test does not read", p.Title)
			}
			out = append(out, row{title: p.Title})
			continue
		}
		if len(out) == 0 {
			t.Fatalf("panel %q comes before any row", p.Title)
		}
		r := &out[len(out)-1]
		for _, tg := range p.Targets {
			r.queries = append(r.queries, query{where: "row " + r.title + ", panel " + p.Title, expr: tg.Expr})
		}
	}
	return out
}

// selects reports whether one of the row's queries selects metric with a
// matcher on label that matches value.
func (r row) selects(t *testing.T, metric, label, value string) bool {
	t.Helper()
	for _, q := range r.queries {
		for _, s := range selectors(q.expr) {
			if s.metric != metric {
				continue
			}
			if m, ok := s.matcher(label); ok && m.matches(t, value) {
				return true
			}
		}
	}
	return false
}

// vectorSelector is a metric name and its label matchers, as written.
type vectorSelector struct {
	metric   string
	matchers []labelMatcher
}

type labelMatcher struct{ label, op, value string }

var (
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

// selectors reads the vector selectors with matchers of a PromQL
// expression. The dashboard's queries are plain enough for a regular
// expression; TestQueriesNameExportedMetrics parses them with Prometheus'
// own parser.
func selectors(expr string) []vectorSelector {
	var out []vectorSelector
	for _, s := range selectorRE.FindAllStringSubmatch(expr, -1) {
		vs := vectorSelector{metric: s[1]}
		for _, m := range matcherRE.FindAllStringSubmatch(s[2], -1) {
			vs.matchers = append(vs.matchers, labelMatcher{label: m[1], op: m[2], value: m[3]})
		}
		out = append(out, vs)
	}
	return out
}

func (s vectorSelector) matcher(label string) (labelMatcher, bool) {
	i := slices.IndexFunc(s.matchers, func(m labelMatcher) bool { return m.label == label })
	if i < 0 {
		return labelMatcher{}, false
	}
	return s.matchers[i], true
}

// matches applies the matcher as Prometheus does: regular expressions are
// RE2 and anchored at both ends.
func (m labelMatcher) matches(t *testing.T, value string) bool {
	t.Helper()
	switch m.op {
	case "=":
		return value == m.value
	case "!=":
		return value != m.value
	}
	re, err := regexp.Compile("^(?:" + m.value + ")$")
	if err != nil {
		t.Errorf("matcher %s%s%q: %v", m.label, m.op, m.value, err)
		return false
	}
	return re.MatchString(value) == (m.op == "=~")
}
