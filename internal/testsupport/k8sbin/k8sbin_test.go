package k8sbin

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestVersionMatchesWrapperModule keeps Version, the folder tests look in, equal
// to the version hack/build-k8s.sh really builds (the wrapper module's require).
func TestVersionMatchesWrapperModule(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "hack", "k8s", "kubernetes", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("hack/k8s/kubernetes/go.mod does not require k8s.io/kubernetes")
	}
	if got := string(m[1]); got != Version {
		t.Errorf("k8sbin.Version = %s, but hack/k8s/kubernetes builds %s", Version, got)
	}
}

func TestDirHonoursOverrideAndReportsMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvDir, empty)
	if _, err := Dir(); err == nil {
		t.Fatal("Dir accepted a folder without etcd and kube-apiserver")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(empty, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Dir()
	if err != nil || got != empty {
		t.Fatalf("Dir() = %q, %v; want %q", got, err, empty)
	}
	if _, err := Path("kwok"); err == nil {
		t.Error("Path accepted a missing binary")
	}
}
