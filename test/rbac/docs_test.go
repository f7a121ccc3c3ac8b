package rbac_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityModelNamesEveryWebhook: docs/operations.md's Security model
// lists every admission webhook the manager is configured with, by name,
// in its webhook table, so a new webhook cannot ship without its scope and
// failure policy explained.
func TestSecurityModelNamesEveryWebhook(t *testing.T) {
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
