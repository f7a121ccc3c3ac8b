package rbac_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/test/rbac"
)

// TestSecurityModelNamesEveryWebhook: docs/operations.md's Security model
// lists every admission webhook the manager is configured with, by name,
// in its webhook table, so a new webhook cannot ship without its scope and
// failure policy explained.
func TestSecurityModelNamesEveryWebhook(t *testing.T) {
	section := securityModel(t)
	var rows []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| ") && strings.Contains(l, "webhook") {
			rows = append(rows, l)
		}
	}
	hooks := webhooks(t, readFiles(t, "config/webhook/manifests.yaml"))
	if len(hooks) == 0 {
		t.Fatal("config/webhook configures no webhooks")
	}
	for _, h := range hooks {
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r, "`"+h.Name+"`")
		}
		if !found {
			t.Errorf("the Security model's webhook table has no row naming `%s`", h.Name)
		}
	}
}

// securityModel is docs/operations.md's "## Security model" section.
func securityModel(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Security model\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "## Security model" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	return section
}

// TestSecurityModelExplainsEveryExemption: each escalation path the review
// lets the manager hold (rbac.ManagerExemptions) has its row in the
// Security model's grant table, naming the resource and every exempted
// verb, and saying it is a flagged path, so the exemption cannot grow
// without the table saying why.
func TestSecurityModelExplainsEveryExemption(t *testing.T) {
	section := securityModel(t)
	for _, e := range rbac.ManagerExemptions {
		found := false
		for _, l := range strings.Split(section, "\n") {
			first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
			if !strings.HasPrefix(l, "| ") || !strings.HasPrefix(first, e.Resource+" ") || !strings.Contains(l, "escalation path") {
				continue
			}
			missing := false
			for _, v := range e.Verbs {
				missing = missing || !strings.Contains(first, v)
			}
			found = found || !missing
		}
		if !found {
			t.Errorf("the Security model's grant table has no row for %s %v that names it an escalation path", e.Resource, e.Verbs)
		}
	}
}
