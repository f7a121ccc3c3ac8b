package floatippool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// fixture is one test's namespace, pool and nodes.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	ns   string
	pool *networkingv1alpha1.FloatIPPool
	ext  *Extender
	gc   *GCReconciler
	pr   *PoolReconciler
}

func newFixture(t *testing.T, name string, ranges []string, policy networkingv1alpha1.ReleasePolicy) *fixture {
	t.Helper()
	ctx := testenv.Context(t)
	c := env.Client
	f := &fixture{t: t, ctx: ctx, ns: name}
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	f.pool = &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges: ranges, Subnet: "10.0.0.0/16", Gateway: "10.0.0.1", Vlan: 2,
			NodeSubnets:   []string{"192.168.1.0/24"},
			ReleasePolicy: policy,
			// Each test's pool only serves its own namespace.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: name}},
		},
	}
	must(t, c.Create(ctx, f.pool))
	admitPools(t, ctx)
	alloc := &Allocator{Reader: c, Live: c, Client: c}
	f.ext = &Extender{Allocator: alloc, Nodes: c}
	f.gc = &GCReconciler{Client: c, Live: c}
	f.pr = &PoolReconciler{Client: c}
	t.Cleanup(func() {
		ctx := context.Background()
		var fips networkingv1alpha1.FloatIPList
		_ = c.List(ctx, &fips, client.MatchingFields{fieldPool: name})
		for i := range fips.Items {
			_ = c.Delete(ctx, &fips.Items[i])
		}
		p := f.pool.DeepCopy()
		_ = c.Get(ctx, client.ObjectKeyFromObject(p), p)
		p.Finalizers = nil
		_ = c.Update(ctx, p)
		_ = c.Delete(ctx, p)
	})
	return f
}

// admitPools admits every pool into the FloatIPPoolLedger, as the pool
// reconciler does in the manager: a pool hands out IPs only once admitted.
func admitPools(t *testing.T, ctx context.Context) {
	t.Helper()
	var pools networkingv1alpha1.FloatIPPoolList
	must(t, env.Client.List(ctx, &pools))
	if _, _, err := (&PoolReconciler{Client: env.Client}).admit(ctx, pools.Items); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var nodesOnce sync.Once

// ensureNodes creates n1 (in the pools' node subnet) and n2 (outside it).
func ensureNodes(t *testing.T, ctx context.Context) []corev1.Node {
	nodesOnce.Do(func() {
		for name, ip := range map[string]string{"n1": "192.168.1.5", "n2": "192.168.2.5"} {
			n := readyNode(t, ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
			must(t, env.Client.Status().Update(ctx, n))
		}
	})
	var nodes []corev1.Node
	for _, name := range []string{"n1", "n2"} {
		var n corev1.Node
		must(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, &n))
		nodes = append(nodes, n)
	}
	return nodes
}

// readyNode creates n with the taints it asks for only
// (testenv.CreateReadyNode).
func readyNode(t *testing.T, ctx context.Context, n *corev1.Node) *corev1.Node {
	t.Helper()
	must(t, env.CreateReadyNode(ctx, n))
	return n
}

func (f *fixture) pod(name string, owner *metav1.OwnerReference, annotations map[string]string) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		}}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	must(f.t, env.Client.Create(f.ctx, p))
	return p
}

// statefulSet creates a StatefulSet in the fixture's namespace.
func (f *fixture) statefulSet(name string, replicas int32) *appsv1.StatefulSet {
	f.t.Helper()
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	must(f.t, env.Client.Create(f.ctx, sts))
	return sts
}

func stsOwner(name string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: name, UID: "sts-uid", Controller: ptr.To(true)}
}

func rsOwner(deployment string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: deployment + "-5d8f9c", UID: "rs-uid", Controller: ptr.To(true)}
}

func (f *fixture) filter(pod *corev1.Pod, nodes []corev1.Node) wire.ExtenderFilterResult {
	f.t.Helper()
	body, _ := json.Marshal(wire.ExtenderArgs{Pod: pod, Nodes: &corev1.NodeList{Items: nodes}})
	rec := httptest.NewRecorder()
	f.ext.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/filter", bytes.NewReader(body)).WithContext(f.ctx))
	var out wire.ExtenderFilterResult
	must(f.t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

func (f *fixture) bind(pod *corev1.Pod, node string) string {
	f.t.Helper()
	body, _ := json.Marshal(wire.ExtenderBindingArgs{PodName: pod.Name, PodNamespace: pod.Namespace, PodUID: pod.UID, Node: node})
	rec := httptest.NewRecorder()
	f.ext.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/bind", bytes.NewReader(body)).WithContext(f.ctx))
	var out wire.ExtenderBindingResult
	must(f.t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.Error
}

func (f *fixture) annotation(pod *corev1.Pod) string {
	f.t.Helper()
	var got corev1.Pod
	must(f.t, env.Client.Get(f.ctx, client.ObjectKeyFromObject(pod), &got))
	return got.Annotations[networkingv1alpha1.AnnotationCNIArgs]
}

func (f *fixture) fips() map[string]networkingv1alpha1.FloatIP {
	f.t.Helper()
	var list networkingv1alpha1.FloatIPList
	must(f.t, env.Client.List(f.ctx, &list, client.MatchingFields{fieldPool: f.pool.Name}))
	out := map[string]networkingv1alpha1.FloatIP{}
	for _, x := range list.Items {
		out[x.Spec.IP] = x
	}
	return out
}

func (f *fixture) deletePod(pod *corev1.Pod) {
	f.t.Helper()
	must(f.t, env.Client.Delete(f.ctx, pod, client.GracePeriodSeconds(0)))
}

func (f *fixture) reconcileFIP(ip string) {
	f.t.Helper()
	if _, err := f.gc.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: strings.ReplaceAll(ip, ".", "-")}}); err != nil {
		f.t.Fatalf("gc reconcile %s: %v", ip, err)
	}
}

func (f *fixture) reconcilePool() *networkingv1alpha1.FloatIPPool {
	f.t.Helper()
	for range 3 { // finalizer pass, then status pass
		if _, err := f.pr.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: f.pool.Name}}); err != nil {
			f.t.Fatalf("pool reconcile: %v", err)
		}
	}
	var p networkingv1alpha1.FloatIPPool
	must(f.t, env.Client.Get(f.ctx, client.ObjectKeyFromObject(f.pool), &p))
	return &p
}

// TestStatefulSetKeepsIP: filter keeps only nodes of the pool's node subnet;
// bind writes galaxy's annotation; an Immutable StatefulSet pod that is
// recreated gets its IP back; a scale-down releases it.
func TestStatefulSetKeepsIP(t *testing.T) {
	f := newFixture(t, "sts", []string{"10.0.1.10~10.0.1.12"}, networkingv1alpha1.ReleasePolicyDefault)
	nodes := ensureNodes(t, f.ctx)
	sts := f.statefulSet("web", 2)

	pod := f.pod("web-1", stsOwner("web"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"})
	res := f.filter(pod, nodes)
	if res.Nodes == nil || len(res.Nodes.Items) != 1 || res.Nodes.Items[0].Name != "n1" {
		t.Fatalf("filter passed %+v, want only n1", res.Nodes)
	}
	if !strings.HasPrefix(res.FailedNodes["n2"], "FloatIPPlugin:NoFIPConfigNode") {
		t.Fatalf("n2 failure = %q", res.FailedNodes["n2"])
	}
	if msg := f.bind(pod, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	want := `{"common":{"ipinfos":[{"ip":"10.0.1.10/16","vlan":2,"gateway":"10.0.0.1"}]}}`
	if got := f.annotation(pod); got != want {
		t.Fatalf("annotation = %s, want %s", got, want)
	}
	fip := f.fips()["10.0.1.10"]
	if fip.Spec.Key != "sts_sts_web_web-1" || fip.Status.Phase != networkingv1alpha1.FloatIPAllocated || fip.Status.PodUID != string(pod.UID) || fip.Status.NodeName != "n1" {
		t.Fatalf("FloatIP = %+v %+v", fip.Spec, fip.Status)
	}

	// Pod deleted while the StatefulSet still counts it: kept.
	f.deletePod(pod)
	f.reconcileFIP("10.0.1.10")
	if got := f.fips()["10.0.1.10"]; got.Status.Phase != networkingv1alpha1.FloatIPReserved || got.Spec.Key != "sts_sts_web_web-1" || got.Status.PodUID != "" {
		t.Fatalf("after pod delete: %+v %+v", got.Spec, got.Status)
	}
	// Another pod cannot take it; the recreated pod gets it back.
	other := f.pod("other", nil, nil)
	if msg := f.bind(other, "n1"); msg != "" {
		t.Fatalf("bind other: %s", msg)
	}
	if got := f.annotation(other); !strings.Contains(got, "10.0.1.11/16") {
		t.Fatalf("other got %s, want 10.0.1.11", got)
	}
	again := f.pod("web-1", stsOwner("web"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"})
	if msg := f.bind(again, "n1"); msg != "" {
		t.Fatalf("bind recreated: %s", msg)
	}
	if got := f.annotation(again); !strings.Contains(got, "10.0.1.10/16") {
		t.Fatalf("recreated pod got %s, want 10.0.1.10", got)
	}

	// Scale down below the pod's index: released on delete.
	sts.Spec.Replicas = ptr.To[int32](1)
	must(t, env.Client.Update(f.ctx, sts))
	f.deletePod(again)
	f.reconcileFIP("10.0.1.10")
	if _, ok := f.fips()["10.0.1.10"]; ok {
		t.Fatalf("IP of scaled-down pod web-1 was not released")
	}
	// Default policy: released on delete.
	f.deletePod(other)
	f.reconcileFIP("10.0.1.11")
	if _, ok := f.fips()["10.0.1.11"]; ok {
		t.Fatalf("IP of a default-policy pod was not released")
	}
}

// TestDeploymentNeverReservesForNextPod: a Never Deployment pod's IP is
// reserved to dp_<ns>_<dep>_ and the next pod of the Deployment claims it.
func TestDeploymentNeverReservesForNextPod(t *testing.T) {
	f := newFixture(t, "dep", []string{"10.0.2.10~10.0.2.20"}, networkingv1alpha1.ReleasePolicyNever)
	ensureNodes(t, f.ctx)
	p1 := f.pod("web-5d8f9c-aaaaa", rsOwner("web"), nil)
	if msg := f.bind(p1, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	f.deletePod(p1)
	f.reconcileFIP("10.0.2.10")
	got := f.fips()["10.0.2.10"]
	if got.Spec.Key != "dp_dep_web_" || got.Status.Phase != networkingv1alpha1.FloatIPReserved {
		t.Fatalf("after delete: key %q phase %q, want dp_dep_web_ Reserved", got.Spec.Key, got.Status.Phase)
	}
	// The pool's default policy (Never) is not the pod's: use the annotation.
	p2 := f.pod("web-5d8f9c-bbbbb", rsOwner("web"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"})
	if msg := f.bind(p2, "n1"); msg != "" {
		t.Fatalf("bind p2: %s", msg)
	}
	if a := f.annotation(p2); !strings.Contains(a, "10.0.2.10/16") {
		t.Fatalf("next pod got %s, want the reserved 10.0.2.10", a)
	}
	if got := f.fips()["10.0.2.10"]; got.Spec.Key != "dp_dep_web_web-5d8f9c-bbbbb" {
		t.Fatalf("claimed key = %q", got.Spec.Key)
	}
}

// TestMultiIPAllOrNothing: request_ip_range gets one IP per inner list, and
// a request that cannot be met leaves nothing allocated.
func TestMultiIPAllOrNothing(t *testing.T) {
	f := newFixture(t, "multi", []string{"10.0.3.10~10.0.3.12", "10.0.3.20"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	args := `{"request_ip_range":[["10.0.3.11~10.0.3.12"],["10.0.3.20"]]}`
	p1 := f.pod("m1", nil, map[string]string{networkingv1alpha1.AnnotationCNIArgs: args})
	if msg := f.bind(p1, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	want := `{"request_ip_range":[["10.0.3.11~10.0.3.12"],["10.0.3.20"]],"common":{"ipinfos":[{"ip":"10.0.3.11/16","vlan":2,"gateway":"10.0.0.1"},{"ip":"10.0.3.20/16","vlan":2,"gateway":"10.0.0.1"}]}}`
	if got := f.annotation(p1); got != want {
		t.Fatalf("annotation = %s\nwant %s", got, want)
	}
	// 10.0.3.20 is taken: the second pod gets nothing, not even 10.0.3.12.
	p2 := f.pod("m2", nil, map[string]string{networkingv1alpha1.AnnotationCNIArgs: args})
	res := f.filter(p2, ensureNodes(t, f.ctx))
	if res.Nodes != nil && len(res.Nodes.Items) != 0 {
		t.Fatalf("filter passed %v for an unsatisfiable request", res.Nodes.Items)
	}
	if msg := f.bind(p2, "n1"); !strings.Contains(msg, "NoFIPLeft") {
		t.Fatalf("bind = %q, want NoFIPLeft", msg)
	}
	if n := len(f.fips()); n != 2 {
		t.Fatalf("%d FloatIPs after a failed multi-IP bind, want 2 (rolled back)", n)
	}
	// Malformed args are refused with a clear reason, not a crash.
	bad := f.pod("m3", nil, map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["nope"]]}`})
	res = f.filter(bad, ensureNodes(t, f.ctx))
	if !strings.Contains(res.FailedAndUnresolvableNodes["n1"], "request_ip_range[0]") {
		t.Fatalf("malformed args: %+v", res)
	}
}

// TestConcurrentAllocatorsNeverShareAnIP: two allocators bind 30 pods at
// once on a pool of 10 IPs; no IP is held twice and exactly 10 pods bind.
func TestConcurrentAllocatorsNeverShareAnIP(t *testing.T) {
	f := newFixture(t, "race", []string{"10.0.4.1~10.0.4.10"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	second := &Extender{Allocator: &Allocator{Reader: env.Client, Live: env.Client, Client: env.Client}, Nodes: env.Client}
	const n = 30
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = f.pod(fmt.Sprintf("r%d", i), nil, nil)
	}
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ext := f.ext
			if i%2 == 1 {
				ext = second
			}
			body, _ := json.Marshal(wire.ExtenderBindingArgs{PodName: p.Name, PodNamespace: p.Namespace, PodUID: p.UID, Node: "n1"})
			rec := httptest.NewRecorder()
			ext.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/bind", bytes.NewReader(body)).WithContext(f.ctx))
			var out wire.ExtenderBindingResult
			_ = json.Unmarshal(rec.Body.Bytes(), &out)
			errs[i] = out.Error
		}()
	}
	wg.Wait()
	holders := map[string]string{}
	bound := 0
	for i, p := range pods {
		a := f.annotation(p)
		if a == "" {
			if !strings.Contains(errs[i], "NoFIPLeft") {
				t.Errorf("unbound pod %s: error %q, want NoFIPLeft", p.Name, errs[i])
			}
			continue
		}
		bound++
		if prev, dup := holders[a]; dup {
			t.Errorf("pods %s and %s both got %s", prev, p.Name, a)
		}
		holders[a] = p.Name
	}
	if bound != 10 {
		t.Errorf("%d pods bound, want 10", bound)
	}
	fips := f.fips()
	if len(fips) != 10 {
		t.Errorf("%d FloatIPs, want 10", len(fips))
	}
	for _, x := range fips {
		if x.Status.PodName == "" {
			t.Errorf("FloatIP %s has no pod recorded", x.Name)
		}
	}
}

// TestPoolStatusFinalizerAndDeadlock: counts, the in-use finalizer, and the
// rolling-update deadlock warning.
func TestPoolStatusFinalizerAndDeadlock(t *testing.T) {
	f := newFixture(t, "status", []string{"10.0.5.1~10.0.5.4"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: f.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "small"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "small"}, Annotations: map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	must(t, env.Client.Create(f.ctx, dep))
	p := f.pod("small-5d8f9c-aaaaa", rsOwner("small"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"})
	if msg := f.bind(p, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	pool := f.reconcilePool()
	if !slices.Contains(pool.Finalizers, networkingv1alpha1.FloatIPPoolFinalizer) {
		t.Fatalf("finalizers = %v", pool.Finalizers)
	}
	if pool.Status.Total != 4 || pool.Status.Allocated != 1 || pool.Status.Available != 3 {
		t.Fatalf("status = %+v", pool.Status)
	}
	cond := func(typ string) metav1.Condition {
		for _, c := range pool.Status.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return metav1.Condition{}
	}
	if c := cond(networkingv1alpha1.FloatIPTypeRolloutDeadlock); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "status/small") {
		t.Fatalf("RolloutDeadlock = %+v", c)
	}
	if c := cond(networkingv1alpha1.FloatIPTypeReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}

	// Deleting the pool waits while an IP is allocated.
	must(t, env.Client.Delete(f.ctx, pool))
	pool = f.reconcilePool()
	if pool.DeletionTimestamp == nil || !slices.Contains(pool.Finalizers, networkingv1alpha1.FloatIPPoolFinalizer) {
		t.Fatalf("pool in use lost its finalizer: %+v", pool.ObjectMeta)
	}
	// Once the IP is released, the pool goes.
	f.deletePod(p)
	dep.Spec.Replicas = ptr.To[int32](0)
	must(t, env.Client.Update(f.ctx, dep))
	f.reconcileFIP("10.0.5.1")
	if _, err := f.pr.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: f.pool.Name}}); err != nil {
		t.Fatal(err)
	}
	err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(f.pool), &networkingv1alpha1.FloatIPPool{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("pool still exists after its IPs were released: %v", err)
	}
}

// TestPoolSizeAndPreAllocate: a sharing group with size and preAllocate
// reserves its IPs up front; its pods claim them; a pod beyond the size is
// refused with galaxy's message.
func TestPoolSizeAndPreAllocate(t *testing.T) {
	f := newFixture(t, "group", []string{"10.0.6.1~10.0.6.10"}, networkingv1alpha1.ReleasePolicyDefault)
	nodes := ensureNodes(t, f.ctx)
	group := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Size: ptr.To[int32](2), PreAllocate: true,
			NamespaceSelector: f.pool.Spec.NamespaceSelector},
	}
	must(t, env.Client.Create(f.ctx, group))
	t.Cleanup(func() {
		g := &networkingv1alpha1.FloatIPPool{}
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(group), g) == nil {
			g.Finalizers = nil
			_ = env.Client.Update(context.Background(), g)
			_ = env.Client.Delete(context.Background(), g)
		}
	})
	gr := &PoolReconciler{Client: env.Client}
	for range 2 {
		if _, err := gr.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "shared"}}); err != nil {
			t.Fatal(err)
		}
	}
	reserved := 0
	for _, x := range f.fips() {
		if x.Spec.Key == "pool__shared_" && x.Spec.ReleasePolicy == networkingv1alpha1.ReleasePolicyNever {
			reserved++
		}
	}
	if reserved != 2 {
		t.Fatalf("%d pre-allocated IPs, want 2: %v", reserved, f.fips())
	}
	ann := map[string]string{networkingv1alpha1.AnnotationENIIPPool: "shared"}
	for i := range 2 {
		p := f.pod(fmt.Sprintf("a-5d8f9c-%d", i), rsOwner("a"), ann)
		if res := f.filter(p, nodes); res.Nodes == nil || len(res.Nodes.Items) != 1 {
			t.Fatalf("filter pod %d: %+v", i, res)
		}
		if msg := f.bind(p, "n1"); msg != "" {
			t.Fatalf("bind pod %d: %s", i, msg)
		}
	}
	if n := len(f.fips()); n != 2 {
		t.Fatalf("%d FloatIPs after two pool pods, want the 2 pre-allocated ones", n)
	}
	p3 := f.pod("b-5d8f9c-0", rsOwner("b"), ann)
	res := f.filter(p3, nodes)
	if !strings.Contains(res.FailedNodes["n1"], "reached pool shared size limit of 2") {
		t.Fatalf("third pool pod: %+v", res)
	}
}
