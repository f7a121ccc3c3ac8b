package ingressdaemonset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// TestManifestsAreAccepted proves the example make demo applies and the
// importer's conversion of the legacy README example pass the API server's
// validation (server-side dry run).
func TestManifestsAreAccepted(t *testing.T) {
	for _, path := range []string{
		filepath.Join("..", "..", "..", "examples", "ingressdaemonset", "nginx-ingress.yaml"),
		filepath.Join("importer", "testdata", "nginx-ingress.golden.yaml"),
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ctx := testenv.Context(t)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, doc := range strings.Split(string(b), "\n---\n") {
				if !strings.Contains(doc, "kind: IngressDaemonSet") {
					continue
				}
				found = true
				ids := &appsv1alpha1.IngressDaemonSet{}
				if err := yaml.UnmarshalStrict([]byte(doc), ids); err != nil {
					t.Fatalf("decoding: %v", err)
				}
				ids.Namespace = "default"
				if err := env.Client.Create(ctx, ids, client.DryRunAll); err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if ok, err := SelectorMatchesTemplate(ids); !ok || err != nil {
					t.Fatalf("selector does not match the template (%v)", err)
				}
			}
			if !found {
				t.Fatal("no IngressDaemonSet in the file")
			}
		})
	}
}
