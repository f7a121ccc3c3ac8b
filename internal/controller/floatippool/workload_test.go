package floatippool

import (
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestCustomWorkloadImmutable: a custom workload with a scale subresource
// keeps its pods' IPs while their index is below replicas (read through the
// CRD's specReplicasPath); one without a scale subresource cannot use
// immutable.
func TestCustomWorkloadImmutable(t *testing.T) {
	f := newFixture(t, "custom", []string{"10.0.8.1~10.0.8.5"}, networkingv1alpha1.ReleasePolicyDefault)
	nodes := ensureNodes(t, f.ctx)
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "custom-workload-crds.yaml")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	tapp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.example.com/v1", "kind": "TApp",
		"metadata": map[string]any{"name": "t", "namespace": f.ns},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	must(t, env.Client.Create(f.ctx, tapp))
	owner := &metav1.OwnerReference{APIVersion: "apps.example.com/v1", Kind: "TApp", Name: "t", UID: "tapp-uid", Controller: ptr.To(true)}
	imm := map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}

	pod := f.pod("t-1", owner, imm)
	if msg := f.bind(pod, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	fip := f.fips()["10.0.8.1"]
	if fip.Spec.Key != "tapp_custom_t_t-1" || fip.Annotations[AnnotationWorkload] != "apps.example.com/v1/TApp" {
		t.Fatalf("FloatIP = %+v %v", fip.Spec, fip.Annotations)
	}
	f.deletePod(pod)
	f.reconcileFIP("10.0.8.1")
	if got := f.fips()["10.0.8.1"]; got.Status.Phase != networkingv1alpha1.FloatIPReserved {
		t.Fatalf("index 1 < replicas 2 not kept: %+v", got.Status)
	}
	// Scaled to 1: the recreated pod's IP goes when it is deleted.
	must(t, unstructured.SetNestedField(tapp.Object, int64(1), "spec", "replicas"))
	must(t, env.Client.Update(f.ctx, tapp))
	again := f.pod("t-1", owner, imm)
	if msg := f.bind(again, "n1"); msg != "" || !strings.Contains(f.annotation(again), "10.0.8.1/16") {
		t.Fatalf("recreated pod: %q %s", msg, f.annotation(again))
	}
	f.deletePod(again)
	f.reconcileFIP("10.0.8.1")
	if _, ok := f.fips()["10.0.8.1"]; ok {
		t.Fatalf("IP of a pod above replicas was kept")
	}

	// Without a scale subresource immutable is refused, with galaxy's reason.
	ns := &metav1.OwnerReference{APIVersion: "apps.example.com/v1", Kind: "Noscale", Name: "n", UID: "n-uid", Controller: ptr.To(true)}
	bad := f.pod("n-0", ns, imm)
	res := f.filter(bad, nodes)
	if !strings.Contains(res.FailedAndUnresolvableNodes["n1"], "NoReplicas") {
		t.Fatalf("no scale subresource: %+v", res)
	}
}
