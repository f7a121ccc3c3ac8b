package packaging_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// The release the lifecycle tests install, as docs/operations.md names it.
const (
	releaseName      = "edgeplane"
	releaseNamespace = "edgeplane-system"
	// crdSelector selects the chart's CRDs: docs/operations.md deletes
	// them with it as the last step of an uninstall.
	crdSelector = "app.kubernetes.io/name=edgeplane"
)

// The kind whose CRD a test changes: cluster-scoped, no required fields,
// no webhook (no manager runs to answer one), a singleton named default.
const (
	probeCRD     = "clusterburstpolicies.scheduling.edgeplane.io"
	probeAPI     = "scheduling.edgeplane.io/v1alpha1"
	probeKind    = "ClusterBurstPolicy"
	probeName    = "default"
	probeField   = "upgradeProbe"
	probeValue   = "served"
	keepPolicy   = "keep"
	policyAnno   = "helm.sh/resource-policy"
	releaseAnno  = "meta.helm.sh/release-name"
	crdBasesGlob = "config/crd/bases/*.yaml"
)

// cluster is an API server without edgeplane's CRDs, where a test
// installs, upgrades and uninstalls the chart with the pinned helm as a user
// does. No pods run (nothing schedules them), so no test waits for the
// release's workloads.
type cluster struct {
	env        *testenv.Env
	kubeconfig string
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	e, err := testenv.StartWith(testenv.Options{WithoutCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	return cluster{env: e, kubeconfig: kubeconfig}
}

// helm runs a helm command on the release in this cluster.
func (c cluster) helm(args ...string) ([]byte, error) {
	return gotool.Output(append(append([]string{"helm"}, args...),
		"--kubeconfig", c.kubeconfig, "--namespace", releaseNamespace)...)
}

func (c cluster) mustHelm(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := c.helm(args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", args[0], err, out)
	}
	return out
}

// crd reads a CRD as the API server stores it.
func (c cluster) crd(t *testing.T, ctx context.Context, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.env.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		t.Fatalf("reading CRD %s: %v", name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := fromUnstructured(u, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// crdNames lists the CRDs the API server holds, of those matching selector
// ("" for all).
func (c cluster) crdNames(t *testing.T, ctx context.Context, selector string) []string {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
	if err := c.env.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatalf("listing CRDs: %v", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, u := range list.Items {
		names = append(names, u.GetName())
	}
	slices.Sort(names)
	return names
}

// probe is the ClusterBurstPolicy the tests create, with spec.upgradeProbe
// when withField.
func probe(withField bool) *unstructured.Unstructured {
	spec := map[string]any{}
	if withField {
		spec[probeField] = probeValue
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(probeAPI)
	u.SetKind(probeKind)
	u.SetName(probeName)
	return u
}

// generatedCRDs are the CRDs the repository generates (config/crd/bases),
// by name.
func generatedCRDs(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, crdBasesGlob))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs match %s: %v", crdBasesGlob, err)
	}
	crds := map[string]*unstructured.Unstructured{}
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range gotool.File(t, rel) {
			crds[o.GetName()] = o
		}
	}
	return crds
}

// chartCRDNames are the names of every CRD the repository generates, sorted.
func chartCRDNames(t *testing.T) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(generatedCRDs(t)))
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// chartCopy copies charts/edgeplane into a temporary directory for a test
// to change, and returns the copy's path.
func chartCopy(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "edgeplane")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot(t), "charts", "edgeplane"))); err != nil {
		t.Fatalf("copying the chart: %v", err)
	}
	return dst
}

// editCRD finds the file of the CRD name in the chart at dir, wherever the
// chart keeps it, and rewrites it with edit applied.
func editCRD(t *testing.T, dir, name string, edit func(*apiextensionsv1.CustomResourceDefinition)) {
	t.Helper()
	found := ""
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		// Templates do not parse as YAML, and most files are no CRD.
		if yaml.Unmarshal(raw, crd) != nil || crd.Kind != "CustomResourceDefinition" || crd.Name != name {
			return nil
		}
		if found != "" {
			return errors.New("the chart holds CRD " + name + " twice: " + found + " and " + path)
		}
		found = path
		edit(crd)
		out, err := yaml.Marshal(crd)
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == "" {
		t.Fatalf("the chart in %s holds no file with CRD %s", dir, name)
	}
}

// addProbeField adds spec.upgradeProbe, a string, to every version of crd:
// the change a new chart version makes to a schema.
func addProbeField(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties[probeField] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: "A field only the upgraded chart's CRD has."}
		crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	}
}

func hasProbeField(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if _, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties[probeField]; !ok {
			return false
		}
	}
	return len(crd.Spec.Versions) > 0
}

// TestHelmChartRendersItsCRDs: the chart renders every generated CRD
// unchanged but for the release's labels and, with crds.keep, the keep
// policy; with crds.enabled=false it renders none.
func TestHelmChartRendersItsCRDs(t *testing.T) {
	generated := generatedCRDs(t)
	for name, tc := range map[string]struct {
		set        []string
		crds, keep bool
	}{
		"defaults":           {crds: true, keep: true},
		"crds.keep=false":    {set: []string{"crds.keep=false"}, crds: true},
		"crds.enabled=false": {set: []string{"crds.enabled=false"}},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"helm", "template", releaseName, "charts/edgeplane", "--namespace", releaseNamespace}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			sel, err := labels.Parse(crdSelector)
			if err != nil {
				t.Fatal(err)
			}
			var rendered []string
			for _, o := range gotool.Objects(t, args...) {
				if o.GetKind() != "CustomResourceDefinition" {
					continue
				}
				rendered = append(rendered, o.GetName())
				want, ok := generated[o.GetName()]
				if !ok {
					t.Errorf("the chart renders CRD %s, which config/crd/bases does not hold", o.GetName())
					continue
				}
				if !equality.Semantic.DeepEqual(o.Object["spec"], want.Object["spec"]) {
					t.Errorf("the chart's CRD %s has another spec than config/crd/bases' (make manifests)", o.GetName())
				}
				if !sel.Matches(labels.Set(o.GetLabels())) {
					t.Errorf("CRD %s has the labels %v; docs/operations.md selects the chart's CRDs with %s", o.GetName(), o.GetLabels(), crdSelector)
				}
				if got := o.GetAnnotations()[policyAnno] == keepPolicy; got != tc.keep {
					t.Errorf("CRD %s has the annotations %v, want %s=%s: %v", o.GetName(), o.GetAnnotations(), policyAnno, keepPolicy, tc.keep)
				}
			}
			slices.Sort(rendered)
			if want := chartCRDNames(t); tc.crds && !slices.Equal(rendered, want) {
				t.Errorf("the chart renders the CRDs %q, want %q", rendered, want)
			}
			if !tc.crds && len(rendered) > 0 {
				t.Errorf("with crds.enabled=false the chart renders the CRDs %q", rendered)
			}
		})
	}
}

// TestHelmUpgradeAppliesTheChartsCRDs: `helm upgrade` to a chart whose CRD
// gained a field serves the new schema, so an object created with that
// field keeps it. Helm never upgrades a chart's crds/ directory; the
// chart's CRDs must be objects of the release for this to hold.
func TestHelmUpgradeAppliesTheChartsCRDs(t *testing.T) {
	c := newCluster(t)
	c.mustHelm(t, "install", releaseName, "charts/edgeplane", "--create-namespace")
	ctx := testenv.Context(t)
	if hasProbeField(c.crd(t, ctx, probeCRD)) {
		t.Fatalf("the installed chart's %s already has spec.%s; the test needs a field the chart does not have", probeCRD, probeField)
	}

	next := chartCopy(t)
	editCRD(t, next, probeCRD, addProbeField)
	c.mustHelm(t, "upgrade", releaseName, next)

	ctx = testenv.Context(t)
	if !hasProbeField(c.crd(t, ctx, probeCRD)) {
		t.Fatalf("after helm upgrade the API server still holds the installed chart's CRD %s, without spec.%s: the upgrade did not apply the chart's CRDs",
			probeCRD, probeField)
	}
	// The API server serves a CRD's new schema a moment after storing it:
	// dry runs show when a create keeps the field.
	eventually.That(ctx, t, "the API server to serve the upgraded CRD", func() (bool, string) {
		o := probe(true)
		if err := c.env.Client.Create(ctx, o, client.DryRunAll); err != nil {
			return false, err.Error()
		}
		got, _, _ := unstructured.NestedString(o.Object, "spec", probeField)
		return got == probeValue, "spec." + probeField + "=" + got
	})
	o := probe(true)
	if err := c.env.Client.Create(ctx, o); err != nil {
		t.Fatalf("creating a %s with spec.%s: %v", probeKind, probeField, err)
	}
	stored := probe(false)
	if err := c.env.Client.Get(ctx, client.ObjectKeyFromObject(o), stored); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(stored.Object, "spec", probeField); got != probeValue {
		t.Errorf("the stored %s has spec.%s=%q, want %q", probeKind, probeField, got, probeValue)
	}
}

// TestHelmUninstallKeepsTheCRDsAndTheirObjects: `helm uninstall` leaves
// every CRD, and so every user's object, in place (deleting a CRD deletes
// its objects); installing the release again takes the kept CRDs back; and
// the selector docs/operations.md deletes the CRDs with at the end of an
// uninstall selects exactly the chart's CRDs.
func TestHelmUninstallKeepsTheCRDsAndTheirObjects(t *testing.T) {
	c := newCluster(t)
	// Another product's CRDs, which the selector must leave alone.
	if _, err := envtest.InstallCRDs(c.env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("testdata", "standin-crds.yaml")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("installing the stand-in CRDs: %v", err)
	}
	want := chartCRDNames(t)
	c.mustHelm(t, "install", releaseName, "charts/edgeplane", "--create-namespace")
	ctx := testenv.Context(t)
	// The API server serves a new CRD a moment after creating it.
	eventually.That(ctx, t, "a "+probeKind+" to be created", func() (bool, string) {
		if err := c.env.Client.Create(ctx, probe(false)); err != nil {
			return false, err.Error()
		}
		return true, ""
	})

	out := c.mustHelm(t, "uninstall", releaseName)
	ctx = testenv.Context(t)
	if got := c.crdNames(t, ctx, ""); !isSubset(want, got) {
		t.Errorf("after helm uninstall the API server holds the CRDs %q, want all of the chart's %q", got, want)
	}
	if err := c.env.Client.Get(ctx, client.ObjectKey{Name: probeName}, probe(false)); err != nil {
		t.Errorf("after helm uninstall the %s %s is gone: %v", probeKind, probeName, err)
	}
	// Helm names what it kept, so the user learns the CRDs are still there.
	if !strings.Contains(string(out), "kept due to the resource policy") {
		t.Errorf("helm uninstall did not say it kept the CRDs:\n%s", out)
	}

	c.mustHelm(t, "install", releaseName, "charts/edgeplane")
	ctx = testenv.Context(t)
	if err := c.env.Client.Get(ctx, client.ObjectKey{Name: probeName}, probe(false)); err != nil {
		t.Errorf("after installing the release again the %s %s is gone: %v", probeKind, probeName, err)
	}
	for _, name := range want {
		if got := c.crd(t, ctx, name).Annotations[releaseAnno]; got != releaseName {
			t.Errorf("after installing the release again CRD %s belongs to release %q, want %q", name, got, releaseName)
		}
	}
	if got := c.crdNames(t, ctx, crdSelector); !slices.Equal(got, want) {
		t.Errorf("the CRDs labelled %s are %q, want exactly the chart's %q", crdSelector, got, want)
	}
}

// TestHelmUpgradeTakesOverCRDsFromTheCrdsDirectory: a release installed from
// a chart that kept its CRDs in crds/ (Helm creates those outside the
// release) upgrades to this chart with --take-ownership, as
// docs/operations.md says, and its CRDs then belong to the release and are
// kept on uninstall. Without the flag Helm refuses and names the CRD.
func TestHelmUpgradeTakesOverCRDsFromTheCrdsDirectory(t *testing.T) {
	c := newCluster(t)
	old := chartWithCRDsDirectory(t)
	c.mustHelm(t, "install", releaseName, old, "--create-namespace")

	out, err := c.helm("upgrade", releaseName, "charts/edgeplane")
	if err == nil {
		t.Fatalf("helm upgrade took over the CRDs Helm had created from crds/ without --take-ownership; docs/operations.md says it refuses:\n%s", out)
	}
	if !strings.Contains(err.Error(), "invalid ownership metadata") {
		t.Fatalf("helm upgrade failed, but not on the CRDs' ownership, which docs/operations.md says it names: %v", err)
	}

	c.mustHelm(t, "upgrade", releaseName, "charts/edgeplane", "--take-ownership")
	ctx := testenv.Context(t)
	for _, name := range chartCRDNames(t) {
		crd := c.crd(t, ctx, name)
		if crd.Annotations[releaseAnno] != releaseName || crd.Annotations[policyAnno] != keepPolicy {
			t.Errorf("after helm upgrade --take-ownership CRD %s has the annotations %v, want %s=%s and %s=%s",
				name, crd.Annotations, releaseAnno, releaseName, policyAnno, keepPolicy)
		}
	}
}

// chartWithCRDsDirectory is the chart as it was while its CRDs lived in
// crds/: a copy with the repository's generated CRDs there and nowhere else.
func chartWithCRDsDirectory(t *testing.T) string {
	t.Helper()
	dir := chartCopy(t)
	for _, p := range []string{"crds", "files/crds", "templates/crds.yaml"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), crdBasesGlob))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "crds", filepath.Base(p)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func isSubset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// TestHelmProviderConfigsOnceTheCRDsExist: Helm builds every object of a
// release before it creates any, so a first install that would create the
// CRDs and a ClusterProviderConfig fails, naming the kind; enabling the
// provider configs with an upgrade after the install works, as
// docs/operations.md and values.yaml tell.
func TestHelmProviderConfigsOnceTheCRDsExist(t *testing.T) {
	c := newCluster(t)
	const enable = "providerConfigs.aws.enabled=true"
	out, err := c.helm("install", releaseName, "charts/edgeplane", "--create-namespace", "--set", enable)
	if err == nil {
		t.Fatalf("helm install --set %s succeeded on a cluster without the CRDs; docs/operations.md says it fails:\n%s", enable, out)
	}
	if msg := err.Error(); !strings.Contains(msg, `no matches for kind "ClusterProviderConfig"`) || !strings.Contains(msg, "ensure CRDs are installed first") {
		t.Fatalf("helm install --set %s failed, but not on the ClusterProviderConfig's kind, which docs/operations.md quotes: %v", enable, err)
	}

	c.mustHelm(t, "install", releaseName, "charts/edgeplane", "--create-namespace")
	c.mustHelm(t, "upgrade", releaseName, "charts/edgeplane", "--reuse-values", "--set", enable)
	pc := &unstructured.Unstructured{}
	pc.SetAPIVersion("cloud.edgeplane.io/v1alpha1")
	pc.SetKind("ClusterProviderConfig")
	if err := c.env.Client.Get(testenv.Context(t), client.ObjectKey{Name: "default"}, pc); err != nil {
		t.Fatalf("after helm upgrade --set %s: %v", enable, err)
	}
}
