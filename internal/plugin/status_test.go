package plugin

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
	"github.com/edgeplane/edgeplane/internal/plugin/status"
)

// repo is the repository root, from this package's directory.
const repo = "../.."

// apply applies manifests with server-side apply, as kubectl apply
// --server-side does (dryRun: as --dry-run=server), and returns the objects.
func apply(t *testing.T, dryRun bool, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		opts := []client.ApplyOption{client.ForceOwnership, client.FieldOwner("kubectl-edgeplane-test")}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		u = u.DeepCopy()
		if ns, err := env.Client.IsObjectNamespaced(u); err == nil && ns && u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		if err := env.Client.Apply(ctx(t), client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			t.Fatalf("applying %s %s/%s (dry run %v): %v", u.GetKind(), u.GetNamespace(), u.GetName(), dryRun, err)
		}
	}
}

func read(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.ReadFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Object)
	}
	return out
}

func ready(status, reason, message string, generation int64) map[string]any {
	return map[string]any{
		"type": "Ready", "status": status, "reason": reason, "message": message,
		"lastTransitionTime": "2026-01-02T03:04:05Z", "observedGeneration": generation,
	}
}

// setStatus writes obj's status as a controller would. A FloatIP has no
// status subresource: its status is written with the object, which makes
// one generation more, and its controller stamps that generation.
func setStatus(t *testing.T, gvk schema.GroupVersionKind, namespace, name string, status map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := env.Client.Get(ctx(t), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	withObject := gvk == fipGVK
	generation := u.GetGeneration()
	if withObject {
		generation++
	}
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			if m := c.(map[string]any); m["observedGeneration"] == int64(-1) {
				m["observedGeneration"] = generation
			}
		}
	}
	if _, ok := status["observedGeneration"]; ok {
		status["observedGeneration"] = generation
	}
	u.Object["status"] = status
	var err error
	if withObject {
		err = env.Client.Update(ctx(t), u)
	} else {
		err = env.Client.Status().Update(ctx(t), u)
	}
	if err != nil {
		t.Fatalf("setting the status of %s %s: %v", gvk.Kind, name, err)
	}
}

var (
	cpcGVK  = schema.GroupVersionKind{Group: "cloud.edgeplane.io", Version: "v1alpha1", Kind: "ClusterProviderConfig"}
	cbpGVK  = schema.GroupVersionKind{Group: "scheduling.edgeplane.io", Version: "v1alpha1", Kind: "ClusterBurstPolicy"}
	bpGVK   = schema.GroupVersionKind{Group: "scheduling.edgeplane.io", Version: "v1alpha1", Kind: "BurstPolicy"}
	idsGVK  = schema.GroupVersionKind{Group: "apps.edgeplane.io", Version: "v1alpha1", Kind: "IngressDaemonSet"}
	fippGVK = schema.GroupVersionKind{Group: "networking.edgeplane.io", Version: "v1alpha1", Kind: "FloatIPPool"}
	fipGVK  = schema.GroupVersionKind{Group: "networking.edgeplane.io", Version: "v1alpha1", Kind: "FloatIP"}
)

// deleteOnCleanup deletes objects at the end of the test (namespaces stay:
// envtest has no namespace controller to finish deleting them).
func deleteOnCleanup(t *testing.T, objs []*unstructured.Unstructured) {
	t.Cleanup(func() {
		for _, u := range objs {
			if u.GetKind() == "Namespace" {
				continue
			}
			if err := env.Client.Delete(ctx(t), u); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	})
}

// TestStatus applies the repository's examples (every kind served today),
// gives them controller-like statuses, Ready and not, and runs `status`
// through the command entry point.
func TestStatus(t *testing.T) {
	objs := read(t,
		repo+"/examples/providerconfig/clusterproviderconfig-aws.yaml",
		repo+"/examples/providerconfig/clusterproviderconfig-tencentcloud.yaml",
		repo+"/examples/providerconfig/providerconfig-tenant.yaml",
		repo+"/examples/burstpolicy/namespace.yaml",
		repo+"/examples/burstpolicy/clusterburstpolicy.yaml",
		repo+"/examples/burstpolicy/native-burstpolicy.yaml",
		repo+"/examples/ingressdaemonset/nginx-ingress.yaml",
		repo+"/examples/floatippool/pool.yaml",
	)
	fip := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.edgeplane.io/v1alpha1", "kind": "FloatIP",
		"metadata": map[string]any{"name": "172-20-0-10", "labels": map[string]any{"networking.edgeplane.io/pool": "demo"}},
		"spec":     map[string]any{"ip": "172.20.0.10", "pool": "demo", "key": "sts_default_fip-web_fip-web-0", "releasePolicy": "Immutable"},
	}}
	objs = append(objs, fip)
	apply(t, false, objs)
	deleteOnCleanup(t, objs)

	setStatus(t, cpcGVK, "", "default", map[string]any{"users": int64(2), "conditions": []any{ready("True", "Available", "", -1)}})
	setStatus(t, cpcGVK, "", "tencentcloud", map[string]any{"conditions": []any{ready("False", "Unreachable", "DescribeAddresses: dial tcp 127.0.0.1:29600: connect: connection refused", -1)}})
	// ProviderConfig team-a/team-a: never reconciled.
	setStatus(t, cbpGVK, "", "default", map[string]any{"observedGeneration": int64(0), "conditions": []any{ready("True", "Reconciled", "bursting is on", -1)}})
	setStatus(t, bpGVK, "burst-demo", "web", map[string]any{
		"observedGeneration": int64(0), "target": "Deployment/web", "localReplicas": int64(0), "burstReplicas": int64(0), "pendingReplicas": int64(0),
		"conditions": []any{ready("False", "TargetNotFound", "Deployment burst-demo/web does not exist", -1)},
	})
	setStatus(t, idsGVK, "ingress-nginx", "nginx-ingress", map[string]any{
		"observedGeneration": int64(0), "desiredNodes": int64(3), "readyNodes": int64(3), "updatedNodes": int64(3), "replicasPerNode": int64(2),
		"conditions": []any{ready("True", "RolloutComplete", "3 of 3 nodes ready", -1)},
	})
	setStatus(t, fippGVK, "", "demo", map[string]any{
		"observedGeneration": int64(0), "total": int64(50), "allocated": int64(3), "reserved": int64(2), "available": int64(45),
		"conditions": []any{ready("True", "Available", "45 of 50 IPs available", -1)},
	})
	// FloatIPPool demo-shared: reconciled for an older generation.
	setStatus(t, fippGVK, "", "demo-shared", map[string]any{
		"observedGeneration": int64(0), "total": int64(3), "allocated": int64(0), "reserved": int64(3), "available": int64(0),
		"conditions": []any{ready("True", "Available", "", 1)},
	})
	bump := &unstructured.Unstructured{}
	bump.SetGroupVersionKind(fippGVK)
	if err := env.Client.Get(ctx(t), client.ObjectKey{Name: "demo-shared"}, bump); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(bump.Object, int64(4), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx(t), bump); err != nil {
		t.Fatal(err)
	}
	setStatus(t, fipGVK, "", "172-20-0-10", map[string]any{
		"observedGeneration": int64(0), "phase": "Allocated", "podNamespace": "default", "podName": "fip-web-0", "nodeName": "w1",
		"conditions": []any{ready("True", "Allocated", "held by default/fip-web-0", -1)},
	})

	t.Run("all namespaces", func(t *testing.T) {
		r := run(t, "", "status", "-A")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		golden(t, "status-all.golden", r.out)
	})
	t.Run("one namespace", func(t *testing.T) {
		r := run(t, "", "status", "-n", "burst-demo")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		golden(t, "status-burst-demo.golden", r.out)
		for _, absent := range []string{"ingress-nginx", "team-a"} {
			if strings.Contains(r.out, absent) {
				t.Errorf("-n burst-demo lists objects of namespace %s:\n%s", absent, r.out)
			}
		}
	})
	t.Run("require ready", func(t *testing.T) {
		// The same table, then exit 3 naming how many are not Ready.
		r := run(t, "", "status", "-A", "--require-ready")
		if r.code != ExitNotReady || strings.TrimSpace(r.errOut) != "4 of 9 objects are not Ready" {
			t.Fatalf("exit %d, stderr %q; want exit %d and \"4 of 9 objects are not Ready\"", r.code, r.errOut, ExitNotReady)
		}
		golden(t, "status-all.golden", r.out)
	})
	t.Run("wide", func(t *testing.T) {
		r := run(t, "", "status", "-A", "-o", "wide")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		lines := strings.Split(strings.TrimSpace(r.out), "\n")
		if !strings.HasSuffix(strings.TrimSpace(lines[0]), "AGE") || !strings.Contains(r.out, "dial tcp 127.0.0.1:29600: connect: connection refused") {
			t.Errorf("wide output lacks the AGE column or the full message:\n%s", r.out)
		}
		if got, want := len(lines), 9+2; got != want {
			t.Errorf("wide output has %d lines, want %d:\n%s", got, want, r.out)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := run(t, "", "status", "-A", "-o", "json")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		items := decodeList(t, r.out)
		var got []string
		for _, it := range items {
			u := unstructured.Unstructured{Object: it}
			if u.GetManagedFields() != nil {
				t.Errorf("%s %s has managedFields", u.GetKind(), u.GetName())
			}
			got = append(got, u.GetKind()+"/"+u.GetName())
		}
		want := []string{"ClusterProviderConfig/default", "ClusterProviderConfig/tencentcloud", "ProviderConfig/team-a",
			"ClusterBurstPolicy/default", "BurstPolicy/web", "IngressDaemonSet/nginx-ingress",
			"FloatIPPool/demo", "FloatIPPool/demo-shared", "FloatIP/172-20-0-10"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("items = %v, want %v", got, want)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		r := run(t, "", "status", "-n", "team-a", "-o", "yaml")
		if r.code != ExitOK || !strings.HasPrefix(r.out, "apiVersion: v1\nitems:\n") || !strings.Contains(r.out, "kind: ProviderConfig") || strings.Contains(r.out, "kind: BurstPolicy") {
			t.Errorf("exit %d, output:\n%s\n%s", r.code, r.out, r.errOut)
		}
	})
	t.Run("forbidden kinds", func(t *testing.T) {
		// A user who may list only float IPs: the other kinds are reported
		// on stderr, the float IPs are still shown, the exit code is 1.
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "plugin-test-fip-reader"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"networking.edgeplane.io"}, Resources: []string{"floatippools", "floatips"}, Verbs: []string{"list"},
		}}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "plugin-test-fip-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "fip-reader"}}}
		for _, o := range []client.Object{role, binding} {
			if err := env.Client.Create(ctx(t), o); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx(t), o) })
		}
		r := run(t, "", "status", "-A", "--as", "fip-reader")
		if r.code != ExitError || !strings.Contains(r.errOut, "forbidden") || !strings.Contains(r.errOut, "burstpolicies") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and the forbidden kinds on stderr", r.code, r.errOut)
		}
		if !strings.Contains(r.out, "172-20-0-10") || !strings.Contains(r.out, "3 objects, 1 not Ready") || strings.Contains(r.out, "BurstPolicy") {
			t.Errorf("stdout:\n%s\nwant the float IP objects only", r.out)
		}
	})
	t.Run("unreachable API server", func(t *testing.T) {
		var out, errOut strings.Builder
		r := Run(ctx(t), []string{"status", "--server", "https://127.0.0.1:1", "--request-timeout", "5s"},
			ioStreams(&out, &errOut))
		if r != ExitError || !strings.Contains(errOut.String(), "Error:") {
			t.Errorf("exit %d, stderr %s", r, errOut.String())
		}
	})
}

func TestCountNotReady(t *testing.T) {
	for name, tc := range map[string]struct {
		ready []string
		want  int
	}{
		"none":           {want: 0},
		"all ready":      {ready: []string{"True", "True"}, want: 0},
		"false counts":   {ready: []string{"True", "False"}, want: 1},
		"unknown counts": {ready: []string{"Unknown", "True", "False"}, want: 2},
	} {
		t.Run(name, func(t *testing.T) {
			var rows []status.Row
			for _, r := range tc.ready {
				rows = append(rows, status.Row{Ready: r})
			}
			if got := countNotReady(rows); got != tc.want {
				t.Errorf("countNotReady = %d, want %d", got, tc.want)
			}
		})
	}
}
