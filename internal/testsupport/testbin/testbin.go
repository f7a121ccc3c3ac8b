// Package testbin builds this repository's commands for tests that run them
// as separate processes (end-to-end suites, the chaos run, benchmarks), so
// those tests always exercise the current tree, never a stale bin/.
package testbin

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Build builds ./cmd/<name> for each name into dir with one `go build` and
// returns the binaries' paths in the order of names.
func Build(tb testing.TB, dir string, names ...string) []string {
	tb.Helper()
	return BuildWithVars(tb, dir, nil, names...)
}

// BuildWithVars is Build with string variables set at link time
// (-ldflags -X importpath.name=value), for a test that points a command at
// files of its own where the shipped binary has a fixed path.
func BuildWithVars(tb testing.TB, dir string, vars map[string]string, names ...string) []string {
	tb.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	tags, err := BuildTags(root)
	if err != nil {
		tb.Fatal(err)
	}
	args := []string{"build", "-tags", strings.Join(tags, ","), "-o", dir + string(filepath.Separator)}
	if len(vars) > 0 {
		var x []string
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			// go build splits -ldflags on spaces and takes quotes only
			// around a whole field; test paths have neither.
			if strings.ContainsAny(k+vars[k], " \t\n'\"") {
				tb.Fatalf("link-time variable %s=%q: spaces and quotes are not supported", k, vars[k])
			}
			x = append(x, "-X", k+"="+vars[k])
		}
		args = append(args, "-ldflags", strings.Join(x, " "))
	}
	paths := make([]string, 0, len(names))
	for _, n := range names {
		args = append(args, "./cmd/"+n)
		paths = append(paths, filepath.Join(dir, n))
	}
	build := exec.Command("go", args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building %v: %v\n%s", names, err, out)
	}
	return paths
}

// BuildTags reads the build tags of every edgeplane binary from
// hack/go-build-tags under root (the file says why each is there), so the
// binaries tests run are the ones `make build` and the image ship.
func BuildTags(root string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, "hack", "go-build-tags"))
	if err != nil {
		return nil, fmt.Errorf("reading the build tags: %w", err)
	}
	var tags []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			tags = append(tags, line)
		}
	}
	return tags, nil
}

// WaitHTTPOK polls url until it answers 200, for at most timeout. exited, if
// not nil, ends the wait early when the process serving url has died.
func WaitHTTPOK(ctx context.Context, url string, timeout time.Duration, exited func() bool) error {
	client := &http.Client{Timeout: 5 * time.Second}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if exited != nil && exited() {
			return false, fmt.Errorf("the process serving %s exited", url)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", url, err)
	}
	return nil
}

// FreeAddr returns a loopback host:port nobody listens on right now, for a
// process the test starts (other sessions may share the machine, so tests
// never use fixed ports).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
