package rbac_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/test/rbac"
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

// TestSecurityModelNamesEveryListener: the Security model's port table has
// a row for every flag, in the code, that says where a binary listens
// (found by parsing cmd/ and internal/, attributed to each binary built
// from its package), a row saying "none" for a binary with no such flag,
// and names every package whose code listens, so a new port cannot ship
// without who may call it, how it is authenticated and authorised, and
// what a caller can do written down.
func TestSecurityModelNamesEveryListener(t *testing.T) {
	ports := operationsSection(t, "### Ports")
	var rows []string
	for _, l := range strings.Split(ports, "\n") {
		if strings.HasPrefix(l, "| ") {
			rows = append(rows, l)
		}
	}
	root := repoRoot(t)
	flags, sites := scanListeners(t, root, "cmd", "internal")
	if len(flags) == 0 || len(sites) == 0 {
		t.Fatalf("found %d listener flags and %d listening packages in the code: the scan is broken", len(flags), len(sites))
	}
	row := func(words ...string) bool {
		return slices.ContainsFunc(rows, func(r string) bool {
			for _, w := range words {
				if !strings.Contains(r, w) {
					return false
				}
			}
			return true
		})
	}
	for bin, pkgs := range binaries(t, root) {
		listens := false
		for _, f := range flags {
			if !pkgs[f.pkg] {
				continue
			}
			listens = true
			if !row("`"+bin+"`", "`--"+f.name+"`") {
				t.Errorf("no row of the port table names `%s` and its listener flag `--%s` (registered in %s)", bin, f.name, f.pkg)
			}
		}
		if !listens && !row("`"+bin+"`", "none") {
			t.Errorf("no row of the port table says `%s` listens on none", bin)
		}
	}
	for pkg := range sites {
		if !strings.Contains(ports, "`"+filepath.ToSlash(pkg)+"`") {
			t.Errorf("the port table does not name `%s`, whose code listens", filepath.ToSlash(pkg))
		}
	}
}

// TestSecurityModelExplainsEveryExemption: each escalation path the review
// lets the manager hold (rbac.ManagerExemptions) has its row in the
// Security model's grant table, naming the resource and every exempted
// verb, and saying it is a flagged path, so the exemption cannot grow
// without the table saying why.
func TestSecurityModelExplainsEveryExemption(t *testing.T) {
	section := operationsSection(t, "## Security model")
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
