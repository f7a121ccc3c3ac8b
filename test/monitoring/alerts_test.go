package monitoring

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func loadRules(t *testing.T, b []byte) []rule {
	t.Helper()
	var f ruleFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("reading the rule file: %v", err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatal("the rule file has no rules")
	}
	return out
}

// TestAlertRules checks the rule file with promtool and runs its unit tests
// (testdata/alerts_test.yaml: synthetic series, and the alerts expected to
// fire, with their labels and annotations, or not at given times).
func TestAlertRules(t *testing.T) {
	promtool := prometheusTool(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(repoRoot(t), rulesFile)},
		{"test", "rules", "testdata/alerts_test.yaml"},
	} {
		cmd := exec.Command(promtool, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

// alertTests is the part of promtool's test file this test reads.
type alertTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestAlertsTestedAndDocumented: every alert has a promtool case where it
// fires and one where it does not, a severity, a summary and a description,
// and a runbook_url whose anchor is a runbook in docs/operations.md with
// the three parts every runbook has.
func TestAlertsTestedAndDocumented(t *testing.T) {
	rules := loadRules(t, readRepoFile(t, rulesFile))
	var tests alertTests
	if err := yaml.Unmarshal(readRepoFile(t, "test/monitoring/testdata/alerts_test.yaml"), &tests); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, g := range tests.Tests {
		for _, a := range g.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	runbooks := runbookSections(string(readRepoFile(t, runbooksFile)))
	var names []string
	for _, r := range rules {
		if r.Alert == "" {
			t.Errorf("rule %q is not an alert (recording rules are not expected)", r.Expr)
			continue
		}
		names = append(names, r.Alert)
		if !fires[r.Alert] || !silent[r.Alert] {
			t.Errorf("%s: promtool tests where it fires: %v, where it does not: %v; want both", r.Alert, fires[r.Alert], silent[r.Alert])
		}
		if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: want a severity label and summary and description annotations, got %v %v", r.Alert, r.Labels, r.Annotations)
		}
		if !strings.Contains(r.Expr, rulesJob) {
			t.Errorf("%s: the expression does not select %s, so the chart could not scope it to its release", r.Alert, rulesJob)
		}
		anchor := strings.ToLower(r.Alert)
		if want := runbookBase + "#" + anchor; r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url = %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		body, ok := runbooks[anchor]
		if !ok {
			t.Errorf("%s: %s has no heading %q", r.Alert, runbooksFile, r.Alert)
			continue
		}
		for _, part := range []string{"**Meaning.**", "**Check.**", "**Action.**"} {
			if !strings.Contains(body, part) {
				t.Errorf("%s: its runbook in %s lacks %s", r.Alert, runbooksFile, part)
			}
		}
	}
	if sorted := slices.Sorted(slices.Values(names)); len(slices.Compact(sorted)) != len(names) {
		t.Errorf("alert names are not unique: %v", names)
	}
	for name := range fires {
		if !slices.Contains(names, name) {
			t.Errorf("testdata/alerts_test.yaml tests %s, which the rule file does not have", name)
		}
	}
}

var heading = regexp.MustCompile(`(?m)^#{2,4} +(.+?) *$`)

// runbookSections maps each heading's GitHub anchor (lower case, spaces to
// dashes, punctuation dropped) to the text up to the next heading.
func runbookSections(doc string) map[string]string {
	out := map[string]string{}
	locs := heading.FindAllStringSubmatchIndex(doc, -1)
	for i, l := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[anchorOf(doc[l[2]:l[3]])] = doc[l[1]:end]
	}
	return out
}

func anchorOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
