package legacy_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"

	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// tkestack/galaxy (galaxy-ipam). From its float-IP README: the extended
// resource tke.cloud.tencent.com/eni-ip; the pod annotations
// k8s.v1.cni.galaxy.io/release-policy (immutable, never),
// tke.cloud.tencent.com/eni-ip-pool and k8s.v1.cni.galaxy.io/args (in:
// request_ip_range; out: common.ipinfos of ip, vlan, gateway); the key
// format $kind_$namespace_$appName_$podName; the Pool CRD
// (galaxy.k8s.io/v1alpha1, size); the HTTP API's GET /v1/ip query and
// reply fields and POST /v1/ip's body and reply. From its code: the
// ConfigMap kube-system/floatingip-config with key floatingips, and the
// FloatingIP CRD.

// galaxyConfig is a floatingips entry covering the README's request_ip_range
// example (10.0.0.0/24, gateway 10.0.0.1) for nodes in the subnet of the
// README's galaxy-ipam host (192.168.30.7).
const galaxyConfig = `[{"nodeSubnets":["192.168.30.0/24"],"ips":["10.0.0.2~10.0.0.238"],"subnet":"10.0.0.0/24","gateway":"10.0.0.1","vlan":0}]`

func galaxyIPAM() project {
	return project{
		name: "galaxy-ipam",
		setup: func(w *world) {
			w.namespace("kube-system")
			w.crd("galaxy.k8s.io", "pools", "Pool", apiextensionsv1.NamespaceScoped)
			w.crd("galaxy.k8s.io", "floatingips", "FloatingIP", apiextensionsv1.ClusterScoped)
			w.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "floatingip-config"},
				Data: map[string]string{"floatingips": galaxyConfig}})
			// The README's Pool example, verbatim (galaxy reads Pools from kube-system).
			pool := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "galaxy.k8s.io/v1alpha1",
				"kind":       "Pool",
				"metadata":   map[string]any{"name": "example-pool", "namespace": "kube-system"},
				"size":       int64(4),
			}}
			w.create(pool)
			w.node("galaxy-node", "192.168.30.10", nil)
		},
		test: testGalaxy,
	}
}

// floatIPPod creates a pod in default that requests one float IP.
func floatIPPod(t *testing.T, w *world, name string, owner *metav1.OwnerReference, annotations map[string]string) *corev1.Pod {
	t.Helper()
	one := corev1.ResourceList{"tke.cloud.tencent.com/eni-ip": resource.MustParse("1")}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9",
			Resources: corev1.ResourceRequirements{Requests: one, Limits: one}}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	w.create(p)
	return p
}

// filterResult is the extender's filter reply (field names as the scheduler sends them).
type filterResult struct {
	Nodes                      *corev1.NodeList
	FailedNodes                map[string]string
	FailedAndUnresolvableNodes map[string]string
	Error                      string
}

// filter asks the extender about galaxy-node.
func (w *world) filter(t *testing.T, pod *corev1.Pod) filterResult {
	t.Helper()
	node := &corev1.Node{}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "galaxy-node"}, node); err != nil {
		t.Fatal(err)
	}
	var res filterResult
	call(t, w.extenderClient, "POST", w.extender+"/v1/filter", map[string]any{"Pod": pod, "Nodes": &corev1.NodeList{Items: []corev1.Node{*node}}}, &res)
	return res
}

// schedule filters (until the manager's cache shows the pools) and binds
// the pod to galaxy-node through the extender, and returns the pod.
func (w *world) schedule(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	eventually.That(t.Context(), t, "galaxy-node passing the filter for "+pod.Name, func() (bool, string) {
		res := w.filter(t, pod)
		return res.Nodes != nil && len(res.Nodes.Items) == 1, fmt.Sprintf("%+v", res)
	})
	var res struct{ Error string }
	call(t, w.extenderClient, "POST", w.extender+"/v1/bind", map[string]any{"PodName": pod.Name, "PodNamespace": pod.Namespace, "PodUID": pod.UID, "Node": "galaxy-node"}, &res)
	if res.Error != "" {
		t.Fatalf("binding %s: %s", pod.Name, res.Error)
	}
	got := &corev1.Pod{}
	if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func floatIPOf(t *testing.T, w *world, pod *corev1.Pod) networkingv1alpha1.FloatIP {
	t.Helper()
	var list networkingv1alpha1.FloatIPList
	if err := env.Client.List(w.ctx, &list); err != nil {
		t.Fatal(err)
	}
	for _, f := range list.Items {
		if f.Status.PodUID == string(pod.UID) {
			return f
		}
	}
	t.Fatalf("no FloatIP holds pod %s", pod.Name)
	return networkingv1alpha1.FloatIP{}
}

func testGalaxy(t *testing.T, w *world) {
	// The ConfigMap and the Pool are migrated.
	eventually.That(t.Context(), t, "FloatIPPools from floatingip-config and the Pool", func() (bool, string) {
		var list networkingv1alpha1.FloatIPPoolList
		if err := env.Client.List(w.ctx, &list); err != nil {
			return false, err.Error()
		}
		fromConfig, size := false, int32(0)
		for _, p := range list.Items {
			if p.Annotations["edgeplane.io/translated-from"] == "ConfigMap/kube-system/floatingip-config" &&
				slices.Equal(p.Spec.Ranges, []string{"10.0.0.2~10.0.0.238"}) && p.Spec.Subnet == "10.0.0.0/24" &&
				p.Spec.Gateway == "10.0.0.1" && slices.Equal(p.Spec.NodeSubnets, []string{"192.168.30.0/24"}) {
				fromConfig = true
			}
			if p.Name == "example-pool" && p.Spec.Size != nil {
				size = *p.Spec.Size
			}
		}
		return fromConfig && size == 4, fmt.Sprintf("%d pools, config translated %v, example-pool size %d", len(list.Items), fromConfig, size)
	})

	// Allocate multiple IPs: the README's annotation in, its reply out.
	multi := floatIPPod(t, w, "multi", nil, map[string]string{
		"k8s.v1.cni.galaxy.io/args": `{"request_ip_range":[["10.0.0.200~10.0.0.238"],["10.0.0.2~10.0.0.30"],["10.0.0.60~10.0.0.80"]]}`,
	})
	bound := w.schedule(t, multi)
	var got, want map[string]any
	if err := json.Unmarshal([]byte(bound.Annotations["k8s.v1.cni.galaxy.io/args"]), &got); err != nil {
		t.Fatalf("k8s.v1.cni.galaxy.io/args after bind: %v", err)
	}
	// The README's example reply, verbatim.
	_ = json.Unmarshal([]byte(`{
	"request_ip_range": [
		["10.0.0.200~10.0.0.238"],
		["10.0.0.2~10.0.0.30"],
		["10.0.0.60~10.0.0.80"]
	],
	"common": {
		"ipinfos": [{
			"ip": "10.0.0.200/24",
			"vlan": 0,
			"gateway": "10.0.0.1"
		}, {
			"ip": "10.0.0.2/24",
			"vlan": 0,
			"gateway": "10.0.0.1"
		}, {
			"ip": "10.0.0.60/24",
			"vlan": 0,
			"gateway": "10.0.0.1"
		}]
	}
}`), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("k8s.v1.cni.galaxy.io/args = %v\nwant the README's %v", got, want)
	}

	// Release policy never on a StatefulSet's pods, the README's API example.
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sts"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sts"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sts"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}}}}},
	}
	w.create(sts)
	owner := func(kind, name string, uid string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
	}
	var stsPods []*corev1.Pod
	for _, name := range []string{"sts-0", "sts-1"} {
		p := floatIPPod(t, w, name, owner("StatefulSet", "sts", string(sts.UID)), map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "never"})
		w.schedule(t, p)
		if f := floatIPOf(t, w, p); f.Spec.ReleasePolicy != networkingv1alpha1.ReleasePolicyNever {
			t.Errorf("%s's FloatIP release policy %q, want Never", name, f.Spec.ReleasePolicy)
		}
		stsPods = append(stsPods, p)
	}
	for _, p := range stsPods {
		if err := env.Client.Delete(w.ctx, p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until edgeplane has kept them for their pods (it records that on
	// the FloatIPs), so the release below does not race that write.
	eventually.That(t.Context(), t, "the deleted StatefulSet pods' IPs kept", func() (bool, string) {
		var list networkingv1alpha1.FloatIPList
		if err := env.Client.List(w.ctx, &list); err != nil {
			return false, err.Error()
		}
		kept := 0
		for _, f := range list.Items {
			if strings.HasPrefix(f.Spec.Key, "sts_default_sts_sts-") && f.Status.Phase == networkingv1alpha1.FloatIPReserved {
				kept++
			}
		}
		return kept == 2, fmt.Sprintf("%d kept", kept)
	})
	var page map[string]any
	eventually.That(t.Context(), t, "GET /v1/ip listing the deleted StatefulSet pods' IPs", func() (bool, string) {
		page = nil
		call(t, w.apiClient, "GET", w.api+"/v1/ip?appName=sts&appType=statefulsets&namespace=default", nil, &page)
		content, _ := page["content"].([]any)
		if len(content) != 2 {
			return false, fmt.Sprint(page)
		}
		for _, c := range content {
			if c.(map[string]any)["status"] != "Deleted" {
				return false, fmt.Sprint(page)
			}
		}
		return true, ""
	})
	for _, k := range []string{"last", "totalElements", "totalPages", "first", "numberOfElements", "size", "number", "content"} {
		if _, ok := page[k]; !ok {
			t.Errorf("GET /v1/ip reply lacks %q: %v", k, page)
		}
	}
	var release []map[string]any
	for i, c := range page["content"].([]any) {
		item := c.(map[string]any)
		want := map[string]any{"namespace": "default", "appName": "sts", "podName": fmt.Sprintf("sts-%d", i),
			"policy": float64(2), "appType": "statefulset", "status": "Deleted", "releasable": true}
		for k, v := range want {
			if item[k] != v {
				t.Errorf("GET /v1/ip item %d: %s = %v, want %v (item %v)", i, k, item[k], v, item)
			}
		}
		for _, k := range []string{"ip", "updateTime"} {
			if _, ok := item[k]; !ok {
				t.Errorf("GET /v1/ip item %d lacks %q: %v", i, k, item)
			}
		}
		release = append(release, map[string]any{"ip": item["ip"], "appName": "sts", "appType": "statefulset",
			"podName": item["podName"], "namespace": "default"})
	}
	// Release ip, the README's POST body.
	var resp map[string]any
	if code := call(t, w.apiClient, "POST", w.api+"/v1/ip", map[string]any{"ips": release}, &resp); code != 200 || !maps.Equal(resp, map[string]any{"code": float64(200), "message": ""}) {
		t.Errorf("POST /v1/ip = %d %v, want 200 {\"code\": 200, \"message\": \"\"}", code, resp)
	}
	for _, r := range release {
		name := strings.ReplaceAll(r["ip"].(string), ".", "-")
		if err := env.Client.Get(w.ctx, client.ObjectKey{Name: name}, &networkingv1alpha1.FloatIP{}); !apierrors.IsNotFound(err) {
			t.Errorf("FloatIP %s after POST /v1/ip: %v, want it released", name, err)
		}
	}

	// Release policy immutable.
	web := sts.DeepCopy()
	web.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: "web"}
	web.Spec.Replicas = ptr.To[int32](1)
	w.create(web)
	p := floatIPPod(t, w, "web-0", owner("StatefulSet", "web", string(web.UID)), map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "immutable"})
	w.schedule(t, p)
	if f := floatIPOf(t, w, p); f.Spec.ReleasePolicy != networkingv1alpha1.ReleasePolicyImmutable || f.Spec.Key != "sts_default_web_web-0" {
		t.Errorf("web-0's FloatIP: policy %q key %q, want Immutable and sts_default_web_web-0", f.Spec.ReleasePolicy, f.Spec.Key)
	}

	// A custom workload's pod with never: the key is $kind_$namespace_$appName_$podName.
	p = floatIPPod(t, w, "demo-1", &metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "demo", UID: "demo-uid", Controller: ptr.To(true)},
		map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "never"})
	w.schedule(t, p)
	if f := floatIPOf(t, w, p); f.Spec.Key != "tapp_default_demo_demo-1" {
		t.Errorf("demo-1's key %q, want tapp_default_demo_demo-1", f.Spec.Key)
	}

	// Float IP Pool: the pool annotation forces never, whatever release-policy says.
	p = floatIPPod(t, w, "app-5d8f9c-abcde", owner("ReplicaSet", "app-5d8f9c", "rs-uid"), map[string]string{
		"tke.cloud.tencent.com/eni-ip-pool": "example-pool", "k8s.v1.cni.galaxy.io/release-policy": "immutable"})
	w.schedule(t, p)
	if f := floatIPOf(t, w, p); f.Spec.ReleasePolicy != networkingv1alpha1.ReleasePolicyNever || !strings.HasPrefix(f.Spec.Key, "pool__example-pool_") {
		t.Errorf("pool pod's FloatIP: policy %q key %q, want Never in pool example-pool", f.Spec.ReleasePolicy, f.Spec.Key)
	}
	page = nil
	call(t, w.apiClient, "GET", w.api+"/v1/ip?poolName=example-pool", nil, &page)
	if content, _ := page["content"].([]any); len(content) != 1 || content[0].(map[string]any)["poolName"] != "example-pool" || content[0].(map[string]any)["policy"] != float64(2) {
		t.Errorf("GET /v1/ip?poolName=example-pool = %v", page)
	}

	// An unknown release policy is refused, not taken for the default.
	p = floatIPPod(t, w, "typo", nil, map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "imutable"})
	res := w.filter(t, p)
	if res.Nodes != nil && len(res.Nodes.Items) > 0 || !strings.Contains(res.FailedAndUnresolvableNodes["galaxy-node"], "k8s.v1.cni.galaxy.io/release-policy") {
		t.Errorf("filter of a pod with release-policy imutable = %+v, want refused naming the annotation", res)
	}
	eventually.That(t.Context(), t, "InvalidAnnotation Event on the pod", func() (bool, string) {
		evs := events(t, w.ctx, "default", string(p.UID), "InvalidAnnotation")
		return len(evs) > 0, fmt.Sprintf("%d events", len(evs))
	})
}
