package floatippool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// extraPool adds a second pool serving the fixture's namespace and nodes.
func (f *fixture) extraPool(name string, ranges []string, subnet, gateway string) {
	f.t.Helper()
	p := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges: ranges, Subnet: subnet, Gateway: gateway,
			NodeSubnets:       f.pool.Spec.NodeSubnets,
			NamespaceSelector: f.pool.Spec.NamespaceSelector,
		},
	}
	must(f.t, env.Client.Create(f.ctx, p))
	admitPools(f.t, f.ctx)
	f.t.Cleanup(func() {
		ctx := context.Background()
		var fips networkingv1alpha1.FloatIPList
		_ = env.Client.List(ctx, &fips, client.MatchingFields{fieldPool: name})
		for i := range fips.Items {
			_ = env.Client.Delete(ctx, &fips.Items[i])
		}
		_ = env.Client.Delete(ctx, p)
	})
}

// fipsOf lists a pool's FloatIPs by IP.
func fipsOf(t *testing.T, ctx context.Context, pool string) map[string]networkingv1alpha1.FloatIP {
	t.Helper()
	var list networkingv1alpha1.FloatIPList
	must(t, env.Client.List(ctx, &list, client.MatchingFields{fieldPool: pool}))
	out := map[string]networkingv1alpha1.FloatIP{}
	for _, x := range list.Items {
		out[x.Spec.IP] = x
	}
	return out
}

// TestMultiNICAllOrNothing: a pod asking for float IPs on two interfaces
// (one named directly, one through its Multus network) gets one IP from
// each interface's pool, each FloatIP records its interface, and galaxy's
// annotation lists them in request order. A pod whose second pool is
// exhausted gets nothing, not even the first pool's IP; a request naming a
// pool that does not exist is refused with the reason.
func TestMultiNICAllOrNothing(t *testing.T) {
	f := newFixture(t, "mnic", []string{"10.0.7.10~10.0.7.12"}, networkingv1alpha1.ReleasePolicyDefault)
	f.extraPool("mnic-storage", []string{"10.1.7.10"}, "10.1.0.0/16", "10.1.0.1")
	nodes := ensureNodes(t, f.ctx)
	request := map[string]string{
		networkingv1alpha1.AnnotationMultusNetworks:    "storage-net",
		networkingv1alpha1.AnnotationFloatIPInterfaces: `[{"interface":"eth0","pool":"mnic"},{"network":"storage-net","pool":"mnic-storage"}]`,
	}
	p1 := f.pod("two-nics", nil, request)
	res := f.filter(p1, nodes)
	if res.Nodes == nil || len(res.Nodes.Items) != 1 || res.Nodes.Items[0].Name != "n1" {
		t.Fatalf("filter passed %+v, want only n1 (failed %v, unresolvable %v)", res.Nodes, res.FailedNodes, res.FailedAndUnresolvableNodes)
	}
	if msg := f.bind(p1, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	eth0, net1 := f.fips()["10.0.7.10"], fipsOf(t, f.ctx, "mnic-storage")["10.1.7.10"]
	if eth0.Status.Interface != "eth0" || eth0.Status.PodUID != string(p1.UID) {
		t.Fatalf("eth0 FloatIP = %+v", eth0.Status)
	}
	if net1.Status.Interface != "net1" || net1.Status.PodUID != string(p1.UID) || net1.Status.Phase != networkingv1alpha1.FloatIPAllocated {
		t.Fatalf("net1 FloatIP = %+v", net1.Status)
	}
	var args ipam.CNIArgs
	must(t, json.Unmarshal([]byte(f.annotation(p1)), &args))
	want := []ipam.IPInfo{{IP: "10.0.7.10/16", Vlan: 2, Gateway: "10.0.0.1"}, {IP: "10.1.7.10/16", Gateway: "10.1.0.1"}}
	if len(args.Common.IPInfos) != 2 || args.Common.IPInfos[0] != want[0] || args.Common.IPInfos[1] != want[1] {
		t.Fatalf("ipinfos = %+v, want %+v", args.Common.IPInfos, want)
	}

	// The storage pool is used up: the next pod fits no node and a bind
	// leaves nothing behind in the first pool.
	p2 := f.pod("two-nics-too", nil, request)
	res = f.filter(p2, nodes)
	if res.Nodes != nil && len(res.Nodes.Items) != 0 || !strings.Contains(res.FailedNodes["n1"], "NoFIPLeft") {
		t.Fatalf("filter of an unsatisfiable two-NIC pod: %+v", res)
	}
	if msg := f.bind(p2, "n1"); !strings.Contains(msg, "NoFIPLeft") {
		t.Fatalf("bind = %q, want NoFIPLeft", msg)
	}
	if n := len(f.fips()); n != 1 {
		t.Fatalf("pool mnic has %d FloatIPs after a failed two-NIC bind, want 1 (all or nothing): %v", n, f.fips())
	}
	if a := f.annotation(p2); a != "" {
		t.Fatalf("unbound pod got annotation %s", a)
	}

	// A pool that does not exist, and a malformed request, say why.
	missing := f.pod("missing-pool", nil, map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic,net1=nope"})
	if res := f.filter(missing, nodes); !strings.Contains(res.FailedAndUnresolvableNodes["n1"], "FloatIPPool nope (interface net1) does not exist") {
		t.Fatalf("missing pool: %+v", res)
	}
	bad := f.pod("bad-request", nil, map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic,eth0=mnic"})
	if res := f.filter(bad, nodes); !strings.Contains(res.FailedAndUnresolvableNodes["n1"], "both ask for interface eth0") {
		t.Fatalf("duplicate interface: %+v", res)
	}
	if msg := f.bind(bad, "n1"); !strings.Contains(msg, "both ask for interface eth0") {
		t.Fatalf("bind of a malformed request = %q", msg)
	}
}

// TestMultiNICStatefulSetKeepsInterfaces: a recreated StatefulSet pod gets
// each of its kept IPs back on the interface it had, even when its request
// lists the interfaces in another order and both use the same pool.
func TestMultiNICStatefulSetKeepsInterfaces(t *testing.T) {
	f := newFixture(t, "mnic-sts", []string{"10.0.8.10~10.0.8.13"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	f.statefulSet("db", 2)
	ann := func(ifs string) map[string]string {
		return map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable", networkingv1alpha1.AnnotationFloatIPInterfaces: ifs}
	}
	pod := f.pod("db-0", stsOwner("db"), ann("net2=mnic-sts,net1=mnic-sts"))
	if msg := f.bind(pod, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	interfaces := func() map[string]string {
		out := map[string]string{}
		for ip, x := range f.fips() {
			out[ip] = x.Status.Interface
		}
		return out
	}
	before := interfaces()
	if before["10.0.8.10"] != "net2" || before["10.0.8.11"] != "net1" {
		t.Fatalf("interfaces = %v, want 10.0.8.10 on net2 and 10.0.8.11 on net1", before)
	}
	f.deletePod(pod)
	f.reconcileFIP("10.0.8.10")
	f.reconcileFIP("10.0.8.11")
	again := f.pod("db-0", stsOwner("db"), ann("net1=mnic-sts,net2=mnic-sts"))
	if msg := f.bind(again, "n1"); msg != "" {
		t.Fatalf("bind recreated: %s", msg)
	}
	after := interfaces()
	if len(after) != 2 || after["10.0.8.10"] != "net2" || after["10.0.8.11"] != "net1" {
		t.Fatalf("after recreation interfaces = %v, want the same IPs on the same interfaces as %v", after, before)
	}
	for ip, x := range f.fips() {
		if x.Status.PodUID != string(again.UID) {
			t.Fatalf("FloatIP %s is held by UID %s, want the recreated pod's %s", ip, x.Status.PodUID, again.UID)
		}
	}
}

// TestMultiNICRefusals: an interface request naming a pool without ranges
// (a sharing group) or a pool that does not serve the pod's namespace, and
// a Deployment with a retaining release policy asking for interfaces, are
// refused with the reason: the filter fails every node as unresolvable,
// the filter and the bind each put an UnsupportedFloatIPRequest Event on
// the pod, and nothing is allocated in any pool.
func TestMultiNICRefusals(t *testing.T) {
	f := newFixture(t, "mnic-ref", []string{"10.0.9.10~10.0.9.20"}, networkingv1alpha1.ReleasePolicyDefault)
	f.ext.Recorder = apiRecorder(t)
	nodes := ensureNodes(t, f.ctx)
	f.extraPool("mnic-ref-group", nil, "", "")
	f.extraPool("mnic-ref-other", []string{"10.2.9.10~10.2.9.20"}, "10.2.0.0/16", "10.2.0.1")
	// mnic-ref-other serves another namespace only.
	var other networkingv1alpha1.FloatIPPool
	must(t, env.Client.Get(f.ctx, client.ObjectKey{Name: "mnic-ref-other"}, &other))
	other.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "elsewhere"}}
	must(t, env.Client.Update(f.ctx, &other))
	admitPools(t, f.ctx)

	cases := []struct {
		name        string
		owner       *metav1.OwnerReference
		annotations map[string]string
		want        string
	}{
		{name: "no-ranges", annotations: map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic-ref,net1=mnic-ref-group"},
			want: "FloatIPPool mnic-ref-group (interface net1) is a sharing group without ranges"},
		{name: "other-namespace", annotations: map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic-ref,net1=mnic-ref-other"},
			want: "FloatIPPool mnic-ref-other (interface net1) does not serve namespace mnic-ref"},
		{name: "web-5d8f9c-immut", owner: rsOwner("web"), annotations: map[string]string{
			networkingv1alpha1.AnnotationReleasePolicy: "immutable", networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic-ref"},
			want: networkingv1alpha1.AnnotationFloatIPInterfaces + " is not supported for a Deployment with a retaining release policy"},
		{name: "web-5d8f9c-never", owner: rsOwner("web"), annotations: map[string]string{
			networkingv1alpha1.AnnotationReleasePolicy: "never", networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=mnic-ref,net1=mnic-ref"},
			want: networkingv1alpha1.AnnotationFloatIPInterfaces + " is not supported for a Deployment with a retaining release policy"},
	}
	expectEvent := func(t *testing.T, pod *corev1.Pod, want string) {
		t.Helper()
		ev := waitPodEvent(t, f.ctx, pod, ReasonUnsupportedRequest)
		if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Note, want) || ev.ReportingController != "floatippool-extender" {
			t.Errorf("Event = type %s, note %q, controller %q; want a Warning from floatippool-extender containing %q", ev.Type, ev.Note, ev.ReportingController, want)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			filtered := f.pod(tc.name, tc.owner, tc.annotations)
			res := f.filter(filtered, nodes)
			if res.Error != "" || (res.Nodes != nil && len(res.Nodes.Items) > 0) || len(res.FailedNodes) > 0 {
				t.Fatalf("filter = %+v, want every node failed as unresolvable", res)
			}
			for _, n := range nodes {
				if !strings.Contains(res.FailedAndUnresolvableNodes[n.Name], tc.want) {
					t.Errorf("node %s: unresolvable reason %q, want it to contain %q", n.Name, res.FailedAndUnresolvableNodes[n.Name], tc.want)
				}
			}
			expectEvent(t, filtered, tc.want)

			// A bind without a filter (the pod changed after it, or a
			// scheduler bound without filtering) refuses the same way.
			bound := f.pod(tc.name+"-b", tc.owner, tc.annotations)
			if msg := f.bind(bound, "n1"); !strings.Contains(msg, tc.want) {
				t.Fatalf("bind = %q, want it to contain %q", msg, tc.want)
			}
			expectEvent(t, bound, tc.want)
			for _, p := range []*corev1.Pod{filtered, bound} {
				if a := f.annotation(p); a != "" {
					t.Errorf("refused pod %s got annotation %s", p.Name, a)
				}
			}
		})
	}
	for _, pool := range []string{"mnic-ref", "mnic-ref-group", "mnic-ref-other"} {
		if fips := fipsOf(t, f.ctx, pool); len(fips) != 0 {
			t.Errorf("pool %s has %d FloatIPs after refused requests, want 0: %v", pool, len(fips), fips)
		}
	}
}
