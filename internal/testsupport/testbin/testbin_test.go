package testbin

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

func TestBuild(t *testing.T) {
	paths := Build(t, t.TempDir(), "edgeplane-healthcheck")
	if len(paths) != 1 {
		t.Fatalf("paths = %v", paths)
	}
	if fi, err := os.Stat(paths[0]); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: %v", paths[0], err)
	}
}

// TestManagerKeepsDeadCodeElimination: built with the tags of
// hack/go-build-tags, the manager depends on no package that calls reflect's
// MethodByName with a computed name (text/template): one such call anywhere
// makes the linker keep every exported method of every reachable type,
// which put all of the AWS EC2 client's 2,439 methods in the binary
// (140 MB against 61 MB). A new dependency that brings text/template back
// fails here with the chain that imports it.
func TestManagerKeepsDeadCodeElimination(t *testing.T) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tags, err := BuildTags(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tags, "grpcnotrace") {
		t.Fatalf("build tags %v lack grpcnotrace", tags)
	}
	list := exec.Command("go", "list", "-tags", strings.Join(tags, ","), "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "./cmd/edgeplane-manager")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
		for _, imp := range strings.Fields(imports) {
			if imp == "text/template" || imp == "html/template" {
				t.Errorf("%s imports %s: with it the linker keeps every exported method (see hack/go-build-tags)", pkg, imp)
			}
		}
	}
}

func TestWaitHTTPOK(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := WaitHTTPOK(context.Background(), srv.URL, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 3 {
		t.Fatalf("returned after %d calls, before the server answered 200", calls.Load())
	}
	if err := WaitHTTPOK(context.Background(), srv.URL, time.Minute, func() bool { return true }); err == nil {
		t.Fatal("no error although the process exited")
	}
}

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("FreeAddr() = %q (%v), want 127.0.0.1:<port>", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	_ = l.Close()
}
