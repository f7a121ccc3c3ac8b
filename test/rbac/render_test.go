package rbac_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// repoRoot is the repository root (the tests read config/ and the chart).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// helmTemplate renders the chart as release in namespace with the --set values.
func helmTemplate(t *testing.T, release, namespace string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"helm", "template", release, "charts/edgeplane", "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return gotool.Objects(t, args...)
}

func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	return gotool.Objects(t, "kustomize", "build", dir)
}

// readFiles decodes every YAML file matching pattern under the repository root.
func readFiles(t *testing.T, pattern string) []*unstructured.Unstructured {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), pattern))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	var out []*unstructured.Unstructured
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decode(t, b)...)
	}
	return out
}

func decode(t *testing.T, manifests []byte) []*unstructured.Unstructured {
	t.Helper()
	return gotool.Decode(t, "manifests", manifests)
}

// convert turns u into a typed object.
func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// ofKind returns the objects of the given kinds.
func ofKind(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() == k {
				out = append(out, o)
			}
		}
	}
	return out
}
