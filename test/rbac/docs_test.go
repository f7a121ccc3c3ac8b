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
	section := operationsSection(t, "## Security model")
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

// operationsSection is the text of docs/operations.md under heading (a
// line such as "## Security model") up to the next heading of its level
// or above.
func operationsSection(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/operations.md has no %q section", heading)
	}
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var out []string
	fenced := false // a "#" line in a code block is no heading
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if n := len(l) - len(strings.TrimLeft(l, "#")); !fenced && n > 0 && n <= level && strings.HasPrefix(l[n:], " ") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
