// Package gotool runs the repository's pinned tools (hack/tools/go.mod:
// helm, kustomize, ...) for tests, in the repository root, and decodes the
// manifests they render or the repository holds.
package gotool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Output runs `go tool -modfile=hack/tools/go.mod args...` in the
// repository root and returns what it printed; a failure's error carries
// what it printed on standard error.
func Output(args ...string) ([]byte, error) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", append([]string{"tool", "-modfile=hack/tools/go.mod"}, args...)...)
	cmd.Dir = root
	// The caller's GOFLAGS (a test run's build tags) are not the tools
	// module's.
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("go tool %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// Run is Output that fails tb on an error.
func Run(tb testing.TB, args ...string) []byte {
	tb.Helper()
	out, err := Output(args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Objects runs a tool that renders manifests (helm template, kustomize
// build) and decodes them.
func Objects(tb testing.TB, args ...string) []*unstructured.Unstructured {
	tb.Helper()
	return Decode(tb, strings.Join(args[:min(2, len(args))], " "), Run(tb, args...))
}

// File decodes the manifests in the repository's file at path (relative to
// the repository root).
func File(tb testing.TB, path string) []*unstructured.Unstructured {
	tb.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		tb.Fatal(err)
	}
	return Decode(tb, path, raw)
}

// Decode decodes manifests (YAML or JSON documents, lists flattened),
// naming source in its errors.
func Decode(tb testing.TB, source string, manifests []byte) []*unstructured.Unstructured {
	tb.Helper()
	read, err := manifest.Read(source, bytes.NewReader(manifests))
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, 0, len(read))
	for _, o := range read {
		out = append(out, o.Object)
	}
	return out
}
