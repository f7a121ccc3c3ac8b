package convert

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// legacyIDS is the importer's own example: the mumoshu README manifest.
const legacyIDS = "../../controller/ingressdaemonset/importer/testdata/nginx-ingress.legacy.yaml"

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

func TestRunGolden(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		files []string
	}{
		{name: "ingressdaemonset", files: []string{legacyIDS}},
		{name: "tke-resilience", files: []string{"testdata/tke-resilience.yaml"}},
		{name: "galaxy", files: []string{"testdata/galaxy.yaml"}},
		{name: "mixed", files: []string{"testdata/mixed.json"}},
		{name: "kubeip", files: []string{"testdata/kubeip.yaml"}},
		// Everything at once, in another order: the output is the same set,
		// still sorted.
		{name: "all", files: []string{"testdata/mixed.json", "testdata/galaxy.yaml", legacyIDS, "testdata/tke-resilience.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := manifest.ReadFiles(tc.files, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(scheme, Converters(), objs)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var out bytes.Buffer
			if err := WriteYAML(&out, res.Objects); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".golden.yaml", out.Bytes())
			golden(t, tc.name+".warnings.golden", []byte(strings.Join(res.Warnings, "\n")+"\n"))

			// Never status or server-set metadata.
			for _, o := range res.Objects {
				if _, ok := o.Object["status"]; ok {
					t.Errorf("%s %s has a status", o.GetKind(), o.GetName())
				}
				for _, f := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation"} {
					if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", f); ok {
						t.Errorf("%s %s has metadata.%s", o.GetKind(), o.GetName(), f)
					}
				}
			}
			// Stable: a second run gives the same bytes.
			res2, err := Run(scheme, Converters(), objs)
			if err != nil {
				t.Fatal(err)
			}
			var out2 bytes.Buffer
			if err := WriteYAML(&out2, res2.Objects); err != nil {
				t.Fatal(err)
			}
			if out.String() != out2.String() {
				t.Error("two runs differ")
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in, wantErr string
	}{
		{name: "broken floatingips", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: floatingip-config, namespace: kube-system}\ndata: {floatingips: '[{'}\n",
			wantErr: "in.yaml document 2: galaxy floatingip-config ConfigMap kube-system/floatingip-config: parsing"},
		{name: "legacy IngressDaemonSet without template", in: "apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: x}\nspec: {podsPerNode: 2}\n",
			wantErr: "in.yaml document 1: mumoshu IngressDaemonSet x: spec.template is missing"},
		{name: "galaxy pool with a bad size", in: "apiVersion: galaxy.k8s.io/v1alpha1\nkind: Pool\nmetadata: {name: p}\nsize: -1\n",
			wantErr: "in.yaml document 1: galaxy Pool p: size -1 is out of range"},
		{name: "workload without a name", in: "apiVersion: apps/v1\nkind: Deployment\nspec: {template: {metadata: {annotations: {AUTO_SCALE_EKS: 'true'}}}}\n",
			wantErr: "metadata.name is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := manifest.Read("in.yaml", strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Run(scheme, Converters(), objs)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Run() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestRunLegacyIngressDaemonSetSpellings: `kubectl edgeplane convert` takes
// the legacy README's healthCheckPort and an annotateDeploymentToDetach block
// without a key (the legacy default key) instead of refusing the document.
func TestRunLegacyIngressDaemonSetSpellings(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	in := `apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1
kind: IngressDaemonSet
metadata: {name: nginx-ingress, namespace: edge}
spec:
  healthCheckPort: 10080
  updateStrategy:
    rollingUpdate:
      annotateDeploymentToDetach: {gracePeriodSeconds: 10}
  template:
    metadata: {labels: {app: ingress-nginx}}
    spec: {containers: [{name: nginx, image: nginx}]}
`
	objs, err := manifest.Read("in.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(scheme, Converters(), objs)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Objects) != 1 {
		t.Fatalf("%d objects, want 1", len(res.Objects))
	}
	u := res.Objects[0]
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "healthCheckNodePorts")
	key, _, _ := unstructured.NestedString(u.Object, "spec", "updateStrategy", "rollingUpdate", "annotateDeploymentToDetach", "key")
	grace, _, _ := unstructured.NestedInt64(u.Object, "spec", "updateStrategy", "rollingUpdate", "annotateDeploymentToDetach", "gracePeriodSeconds")
	if len(ports) != 1 || fmt.Sprint(ports[0]) != "10080" || key != "ingressdaemonsets.mumoshu.github.com/to-be-updated" || grace != 10 {
		t.Errorf("converted spec: healthCheckNodePorts %v, detach key %q grace %d; want [10080], the legacy default key, 10", ports, key, grace)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "healthCheckPort is unknown") {
			t.Errorf("healthCheckPort dropped: %q", w)
		}
	}
}

// TestRunLegacyIngressDaemonSetList: what `kubectl get
// ingressdaemonsets.ingressdaemonsets.mumoshu.github.io -A -o yaml` prints (a
// List whose items carry a namespace, server-set metadata and a status)
// converts item by item, in JSON as in YAML; an item of another kind is
// skipped with a warning.
func TestRunLegacyIngressDaemonSetList(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{
		"json": `{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"ingressdaemonsets.mumoshu.github.io/v1alpha1","kind":"IngressDaemonSet","metadata":{"name":"a","namespace":"edge"},"spec":{"replicas":3,"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}},
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}]}`,
		"kubectl get -o yaml": `apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1
  kind: IngressDaemonSet
  metadata:
    name: a
    namespace: edge
    uid: 6f1c2a8e-0000-4000-8000-000000000001
    resourceVersion: "4711"
    generation: 2
    creationTimestamp: "2020-01-01T00:00:00Z"
    managedFields: [{manager: kubectl, operation: Apply}]
  spec:
    replicas: 3
    template:
      metadata: {labels: {app: a}}
      spec: {containers: [{name: c, image: i}]}
  status: {observedGeneration: 2}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: x, namespace: edge}
`,
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			objs, err := manifest.Read("-", strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(scheme, Converters(), objs)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(res.Objects) != 1 {
				t.Fatalf("%d objects, want 1", len(res.Objects))
			}
			u := res.Objects[0]
			replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicasPerNode")
			if u.GetKind() != "IngressDaemonSet" || u.GetName() != "a" || u.GetNamespace() != "edge" || replicas != 3 {
				t.Errorf("converted %s %s/%s with replicasPerNode %d, want IngressDaemonSet edge/a with 3", u.GetKind(), u.GetNamespace(), u.GetName(), replicas)
			}
			if _, ok := u.Object["status"]; ok {
				t.Error("the converted object has a status")
			}
			for _, f := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation"} {
				if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", f); ok {
					t.Errorf("the converted object has metadata.%s", f)
				}
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "x skipped: not a legacy input") {
				t.Errorf("the ConfigMap is not reported as skipped: %q", res.Warnings)
			}
		})
	}
}

// TestRegistry checks that one converter is one entry: a registry with a
// custom converter converts its kind, and the first match wins.
func TestRegistry(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read("in.yaml", strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: eks-config, namespace: kube-system}\ndata: {AUTO_SCALE_EKS: 'true'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(scheme, nil, objs)
	if err != nil || len(res.Objects) != 0 || len(res.Warnings) != 1 {
		t.Fatalf("empty registry: %d objects, warnings %v, err %v", len(res.Objects), res.Warnings, err)
	}
	res, err = Run(scheme, Converters(), objs)
	if err != nil || len(res.Objects) != 1 {
		t.Fatalf("default registry: %d objects, err %v", len(res.Objects), err)
	}
	b, _ := yaml.Marshal(res.Objects[0].Object)
	if !strings.Contains(string(b), "enabled: true") || !strings.Contains(string(b), AnnotationConvertedFrom+": ConfigMap/kube-system/eks-config") {
		t.Errorf("ClusterBurstPolicy:\n%s", b)
	}
}

// FuzzRun feeds arbitrary manifests through every converter: legacy input
// is user input, so no document may panic, and whatever converts must
// encode and come out clean.
func FuzzRun(f *testing.F) {
	for _, p := range []string{"testdata/tke-resilience.yaml", "testdata/galaxy.yaml", "testdata/mixed.json", legacyIDS} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("apiVersion: galaxy.k8s.io/v1alpha1\nkind: FloatingIP\nmetadata: {name: '::1'}\nspec: {key: x, attribute: '{', policy: 9}\n")
	f.Add("apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: x}\nspec: {podsPerNode: 1e99}\n")
	f.Add("{}")
	f.Add("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {template: {metadata: {annotations: {LOCAL_REPLICAS: '99999999999'}}}}\n")
	scheme, err := edgescheme.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		objs, err := manifest.Read("fuzz", strings.NewReader(in))
		if err != nil {
			return
		}
		res, err := Run(scheme, Converters(), objs)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz document ") {
				t.Fatalf("error without the input's position: %v", err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteYAML(&b, res.Objects); err != nil {
			t.Fatalf("WriteYAML: %v", err)
		}
		for _, o := range res.Objects {
			if _, ok := o.Object["status"]; ok {
				t.Fatalf("%s has a status", o.GetName())
			}
		}
	})
}
