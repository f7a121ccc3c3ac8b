package plugin

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
)

// legacyInputs are the legacy manifests of the repository and the shared
// seeds: the seeds' examples (testdata/seeds), the demo's legacy examples,
// the importer's verbatim mumoshu README manifest and the converter's own
// test inputs.
var legacyInputs = []string{
	"testdata/seeds",
	repo + "/examples/burstpolicy",
	repo + "/internal/controller/ingressdaemonset/importer/testdata/nginx-ingress.legacy.yaml",
	"convert/testdata/galaxy.yaml",
	"convert/testdata/tke-resilience.yaml",
}

// TestConvertDryRun converts every legacy example and applies the result to
// the API server with a server-side dry run: the CRDs' schemas and CEL rules
// accept every converted manifest.
func TestConvertDryRun(t *testing.T) {
	args := []string{"convert"}
	for _, f := range legacyInputs {
		args = append(args, "-f", f)
	}
	r := run(t, "", args...)
	if r.code != ExitOK {
		t.Fatalf("exit %d:\n%s", r.code, r.errOut)
	}
	golden(t, "convert-examples.golden.yaml", r.out)
	golden(t, "convert-examples.warnings.golden", r.errOut)

	objs, err := manifest.Read("stdout", strings.NewReader(r.out))
	if err != nil {
		t.Fatalf("the output does not read back: %v", err)
	}
	kinds := map[string]int{}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		kinds[o.Object.GetKind()]++
		out = append(out, o.Object)
	}
	for _, k := range []string{"IngressDaemonSet", "BurstPolicy", "ClusterBurstPolicy", "FloatIPPool", "FloatIP", "AnycastIPBinding", "PodElasticIP"} {
		if kinds[k] == 0 {
			t.Errorf("no %s converted (got %v)", k, kinds)
		}
	}
	for _, ns := range []string{"burst-demo"} {
		if err := env.Client.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	apply(t, true, out)

}

func TestConvertStdinAndJSON(t *testing.T) {
	in, err := os.ReadFile("testdata/seeds/tke-resilience-deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(in), "convert", "-f", "-", "-o", "json")
	if r.code != ExitOK || r.errOut != "" {
		t.Fatalf("exit %d:\n%s", r.code, r.errOut)
	}
	items := decodeList(t, r.out)
	if len(items) != 1 {
		t.Fatalf("%d items, want 1", len(items))
	}
	u := unstructured.Unstructured{Object: items[0]}
	if u.GetKind() != "BurstPolicy" || u.GetName() != "deployment-nginx-deployment" {
		t.Errorf("converted %s %s", u.GetKind(), u.GetName())
	}
}

func TestConvertMalformed(t *testing.T) {
	r := run(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: [\n", "convert", "-f", "-")
	if r.code != ExitError || !strings.Contains(r.errOut, "malformed input: - document 2:") || r.out != "" {
		t.Errorf("exit %d, stdout %q, stderr %s", r.code, r.out, r.errOut)
	}
	r = run(t, "", "convert", "-f", "testdata/does-not-exist.yaml")
	if r.code != ExitError || !strings.Contains(r.errOut, "does-not-exist.yaml") {
		t.Errorf("exit %d, stderr %s", r.code, r.errOut)
	}
}
