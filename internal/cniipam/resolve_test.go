package cniipam

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func testPod(wants bool, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", UID: "uid-1", Annotations: annotations}}
	c := corev1.Container{Name: "c"}
	if wants {
		c.Resources.Requests = corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")}
	}
	p.Spec.Containers = []corev1.Container{c}
	return p
}

func testPool(name, subnet, gateway string, ranges ...string) networkingv1alpha1.FloatIPPool {
	return networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: ranges, Subnet: subnet, Gateway: gateway}}
}

func boundFIP(ip, pool, iface, uid string) networkingv1alpha1.FloatIP {
	return networkingv1alpha1.FloatIP{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(ip, ".", "-")},
		Spec:       networkingv1alpha1.FloatIPSpec{IP: ip, Pool: pool},
		Status: networkingv1alpha1.FloatIPStatus{Phase: networkingv1alpha1.FloatIPAllocated, PodNamespace: "ns", PodName: "web-0",
			PodUID: uid, Interface: iface},
	}
}

// migratedFIP is a galaxy allocation translated without a holder UID.
func migratedFIP(ip, pool, key string) *networkingv1alpha1.FloatIP {
	return &networkingv1alpha1.FloatIP{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(ip, ".", "-")},
		Spec:       networkingv1alpha1.FloatIPSpec{IP: ip, Pool: pool, Key: key},
		Status:     networkingv1alpha1.FloatIPStatus{Phase: networkingv1alpha1.FloatIPReserved},
	}
}

func addr(prefix, gw, pool string) Address {
	a := Address{Prefix: netip.MustParsePrefix(prefix), Pool: pool}
	if gw != "" {
		a.Gateway = netip.MustParseAddr(gw)
	}
	return a
}

func TestResolve(t *testing.T) {
	cfg := Config{Name: "float", PrimaryInterface: "eth0"}
	public := testPool("public", "198.51.100.0/24", "198.51.100.1", "198.51.100.10~198.51.100.20")
	storage := testPool("storage", "203.0.113.0/24", "", "203.0.113.0/28")
	pools := map[string]*networkingv1alpha1.FloatIPPool{"public": &public, "storage": &storage}
	galaxy := `{"common":{"ipinfos":[{"ip":"198.51.100.12/25","vlan":0,"gateway":"198.51.100.126"},{"ip":"203.0.113.5/24","vlan":0,"gateway":""}]}}`
	// The FloatIPs migration wrote for the galaxy annotation's IPs: the
	// pod's key (no owner, no pool), no UID.
	migrated := map[netip.Addr]*networkingv1alpha1.FloatIP{
		netip.MustParseAddr("198.51.100.12"): migratedFIP("198.51.100.12", "public", "NULL_ns_NULL_web-0"),
		netip.MustParseAddr("203.0.113.5"):   migratedFIP("203.0.113.5", "storage", "NULL_ns_NULL_web-0"),
	}
	cases := map[string]struct {
		cfg     *Config
		ifname  string
		st      State
		want    []Address
		refusal Reason
		message string
	}{
		"primary IP without an interface": {
			ifname: "eth0",
			st:     State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "public", "", "uid-1")}},
			want:   []Address{addr("198.51.100.10/24", "198.51.100.1", "public")},
		},
		"each interface its own": {
			ifname: "net1",
			st: State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{
				boundFIP("198.51.100.10", "public", "eth0", "uid-1"), boundFIP("203.0.113.3", "storage", "net1", "uid-1")}},
			want: []Address{addr("203.0.113.3/24", "", "storage")},
		},
		"multi-IP interface in the annotation's order": {
			ifname: "eth0",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"198.51.100.15/24"},{"ip":"198.51.100.11/24"}]}}`}),
				Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.11", "public", "", "uid-1"), boundFIP("198.51.100.15", "public", "", "uid-1")}},
			want: []Address{addr("198.51.100.15/24", "198.51.100.1", "public"), addr("198.51.100.11/24", "198.51.100.1", "public")},
		},
		"another primary interface name": {
			cfg: &Config{Name: "float", PrimaryInterface: "net0"}, ifname: "net0",
			st:   State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "public", "", "uid-1")}},
			want: []Address{addr("198.51.100.10/24", "198.51.100.1", "public")},
		},
		"no IP for this interface": {
			ifname:  "net2",
			st:      State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "public", "", "uid-1"), boundFIP("203.0.113.3", "storage", "net1", "uid-1")}},
			refusal: ReasonNoFloatIPForInterface, message: "pod ns/web-0 has float IPs for interface(s) eth0, net1, none for net2",
		},
		"another pod's UID is not ours": {
			ifname:  "eth0",
			st:      State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "public", "", "uid-old")}},
			refusal: ReasonAllocationPending,
		},
		"releasing IP is not handed out": {
			ifname: "eth0",
			st: State{Pod: testPod(true, nil), Pools: pools, Bound: func() []networkingv1alpha1.FloatIP {
				f := boundFIP("198.51.100.10", "public", "", "uid-1")
				f.Status.Phase = networkingv1alpha1.FloatIPReleasing
				return []networkingv1alpha1.FloatIP{f}
			}()},
			refusal: ReasonAllocationPending,
		},
		"IP left its pool's ranges": {
			ifname:  "eth0",
			st:      State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.30", "public", "", "uid-1")}},
			refusal: ReasonIPOutsidePool, message: "IP 198.51.100.30 is outside the ranges of its FloatIPPool public",
		},
		"pool gone": {
			ifname:  "eth0",
			st:      State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "gone", "", "uid-1")}},
			refusal: ReasonIPOutsidePool, message: "FloatIPPool gone, which does not exist",
		},
		"network serves other pools": {
			cfg: &Config{Name: "storage-net", PrimaryInterface: "eth0", Pools: []string{"storage"}}, ifname: "eth0",
			st:      State{Pod: testPod(true, nil), Pools: pools, Bound: []networkingv1alpha1.FloatIP{boundFIP("198.51.100.10", "public", "", "uid-1")}},
			refusal: ReasonIPOutsidePool, message: "network storage-net serves only pool(s) storage",
		},
		"pod without a float IP request": {
			ifname: "eth0", st: State{Pod: testPod(false, nil), Pools: pools},
			refusal: ReasonNoFloatIP, message: "pod ns/web-0 requests no tke.cloud.tencent.com/eni-ip",
		},
		"not allocated yet": {
			ifname: "eth0", st: State{Pod: testPod(true, nil), Pools: pools},
			refusal: ReasonAllocationPending, message: "no FloatIP bound to UID uid-1",
		},
		"galaxy annotation: primary gets what has no interface": {
			ifname: "eth0",
			st:     State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy}), Pools: pools, Holders: migrated},
			want:   []Address{addr("198.51.100.12/25", "198.51.100.126", "public"), addr("203.0.113.5/24", "", "storage")},
		},
		"galaxy annotation with an interface request": {
			ifname: "net1",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy,
				networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=public,net1=storage"}), Pools: pools, Holders: migrated},
			want: []Address{addr("203.0.113.5/24", "", "storage")},
		},
		"galaxy annotation IP held by another pod": {
			ifname: "eth0",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy}), Pools: pools,
				Holders: map[netip.Addr]*networkingv1alpha1.FloatIP{
					netip.MustParseAddr("198.51.100.12"): migrated[netip.MustParseAddr("198.51.100.12")],
					netip.MustParseAddr("203.0.113.5"):   new(boundFIP("203.0.113.5", "storage", "", "uid-2")),
				}},
			refusal: ReasonIPHeldByOtherPod, message: "IP 203.0.113.5 of its k8s.v1.cni.galaxy.io/args annotation is held by pod ns/web-0 (UID uid-2)",
		},
		// The annotation is the pod's to write: an IP it names is checked
		// even when asked for another interface.
		"galaxy annotation IP of another interface without a FloatIP": {
			ifname: "net1",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy,
				networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=public,net1=storage"}), Pools: pools,
				Holders: map[netip.Addr]*networkingv1alpha1.FloatIP{netip.MustParseAddr("203.0.113.5"): migrated[netip.MustParseAddr("203.0.113.5")]}},
			refusal: ReasonIPNotAllocatedToPod, message: "IP 198.51.100.12 of its k8s.v1.cni.galaxy.io/args annotation has no FloatIP",
		},
		"galaxy annotation without FloatIPs": {
			ifname:  "eth0",
			st:      State{Pod: testPod(false, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy}), Pools: pools},
			refusal: ReasonIPNotAllocatedToPod, message: "pod ns/web-0: IP 198.51.100.12 of its k8s.v1.cni.galaxy.io/args annotation has no FloatIP",
		},
		"galaxy annotation IP outside its pool": {
			ifname: "eth0",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"192.0.2.9/24"}]}}`}), Pools: pools,
				Holders: map[netip.Addr]*networkingv1alpha1.FloatIP{netip.MustParseAddr("192.0.2.9"): migratedFIP("192.0.2.9", "public", "NULL_ns_NULL_web-0")}},
			refusal: ReasonIPOutsidePool, message: "IP 192.0.2.9 is outside the ranges of its FloatIPPool public",
		},
		"galaxy annotation IP whose pool is gone": {
			ifname: "eth0",
			st: State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: galaxy}), Pools: map[string]*networkingv1alpha1.FloatIPPool{"public": &public},
				Holders: migrated},
			refusal: ReasonIPOutsidePool, message: "IP 203.0.113.5 is of FloatIPPool storage, which does not exist",
		},
		"galaxy annotation malformed ip": {
			ifname:  "eth0",
			st:      State{Pod: testPod(true, map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"198.51.100.12"}]}}`}), Pools: pools},
			refusal: ReasonIPOutsidePool, message: "is not an IP with a prefix length",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
			}
			got, r := Resolve(c, tc.ifname, tc.st)
			if tc.refusal != "" {
				if r == nil || r.Reason != tc.refusal || !strings.Contains(r.Message, tc.message) {
					t.Fatalf("refusal = %v, want %s containing %q (addresses %v)", r, tc.refusal, tc.message, got)
				}
				return
			}
			if r != nil {
				t.Fatalf("refused: %v", r)
			}
			if d := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b }), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
				t.Fatalf("addresses (-want +got):\n%s", d)
			}
		})
	}
}

func TestBuildResult(t *testing.T) {
	addrs := []Address{addr("198.51.100.10/24", "198.51.100.1", "p"), addr("fd00::5/64", "fd00::1", "p6"), addr("203.0.113.3/24", "", "s")}
	cfg := Config{PrimaryInterface: "eth0"}
	res := BuildResult(cfg, "eth0", addrs)
	if len(res.IPs) != 3 || res.IPs[0].Address.String() != "198.51.100.10/24" || res.IPs[0].Gateway.String() != "198.51.100.1" || res.IPs[2].Gateway != nil {
		t.Fatalf("IPs = %v", res.IPs)
	}
	var routes []string
	for _, r := range res.Routes {
		routes = append(routes, r.String())
	}
	if d := cmp.Diff([]string{"{Dst:{IP:0.0.0.0 Mask:00000000} GW:198.51.100.1 MTU:0 AdvMSS:0 Priority:0 Table:<nil> Scope:<nil>}",
		"{Dst:{IP::: Mask:00000000000000000000000000000000} GW:fd00::1 MTU:0 AdvMSS:0 Priority:0 Table:<nil> Scope:<nil>}"}, routes); d != "" {
		t.Fatalf("primary routes (-want +got):\n%s", d)
	}
	if res := BuildResult(cfg, "net1", addrs); len(res.Routes) != 0 {
		t.Fatalf("a secondary interface got default routes %v", res.Routes)
	}
	cfg.RoutesSet = true
	if res := BuildResult(cfg, "eth0", addrs); len(res.Routes) != 0 {
		t.Fatalf(`"routes": [] still gave routes %v`, res.Routes)
	}
}

// TestCheckHolder: an IP of the pod's galaxy annotation is the pod's only
// when its FloatIP names the pod, by UID or by the pod's own galaxy key.
func TestCheckHolder(t *testing.T) {
	ip := netip.MustParseAddr("198.51.100.12")
	controller := true
	deployPod := testPod(true, map[string]string{networkingv1alpha1.AnnotationENIIPPool: "shared"})
	deployPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f", UID: "rs", Controller: &controller}}
	with := func(mutate func(f *networkingv1alpha1.FloatIP)) *networkingv1alpha1.FloatIP {
		f := migratedFIP("198.51.100.12", "public", "NULL_ns_NULL_web-0")
		mutate(f)
		return f
	}
	cases := map[string]struct {
		pod     *corev1.Pod
		fip     *networkingv1alpha1.FloatIP
		refusal Reason
		message string
	}{
		"bound to the pod's UID":      {fip: new(boundFIP("198.51.100.12", "public", "", "uid-1"))},
		"migrated with the pod's key": {fip: with(func(*networkingv1alpha1.FloatIP) {})},
		"migrated with the pod's UID and another key": {fip: with(func(f *networkingv1alpha1.FloatIP) {
			f.Spec.Key, f.Status.PodUID = "dp_ns_web_", "uid-1"
		})},
		"migrated Deployment pod of a sharing pool": {pod: deployPod, fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "pool__shared_dp_ns_web_web-0" })},
		"no FloatIP": {refusal: ReasonIPNotAllocatedToPod,
			message: "pod ns/web-0: IP 198.51.100.12 of its k8s.v1.cni.galaxy.io/args annotation has no FloatIP: it is allocated to no pod"},
		"FloatIP of another IP": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.IP = "198.51.100.13" }),
			refusal: ReasonIPNotAllocatedToPod, message: `FloatIP 198-51-100-12 is for IP "198.51.100.13"`},
		"being deleted": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.DeletionTimestamp = new(metav1.Now()) }),
			refusal: ReasonIPNotAllocatedToPod, message: "is being released (FloatIP 198-51-100-12)"},
		"releasing": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Status.Phase = networkingv1alpha1.FloatIPReleasing }),
			refusal: ReasonIPNotAllocatedToPod, message: "is being released"},
		"another pod's UID": {fip: new(boundFIP("198.51.100.12", "public", "", "uid-2")),
			refusal: ReasonIPHeldByOtherPod, message: "is held by pod ns/web-0 (UID uid-2)"},
		"admin reservation": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "" }),
			refusal: ReasonIPNotAllocatedToPod, message: "is reserved by an admin (FloatIP 198-51-100-12 has no key)"},
		"a Deployment's reservation": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "dp_ns_web_" }),
			refusal: ReasonIPNotAllocatedToPod, message: "is reserved for dp_ns_web_, not allocated to a pod"},
		"a sharing pool's reservation": {pod: deployPod, fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "pool__shared_" }),
			refusal: ReasonIPNotAllocatedToPod, message: "is reserved for pool__shared_"},
		"a key that does not parse": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "nonsense" }),
			refusal: ReasonIPNotAllocatedToPod, message: "is reserved for nonsense"},
		"another pod's key": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "sts_ns_db_db-0" }),
			refusal: ReasonIPHeldByOtherPod, message: "is recorded for pod ns/db-0 (FloatIP 198-51-100-12, key sts_ns_db_db-0)"},
		"a pod of the same name in another namespace": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "NULL_other_NULL_web-0" }),
			refusal: ReasonIPHeldByOtherPod, message: "is recorded for pod other/web-0"},
		"the pod's name with another owner": {fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "sts_ns_web_web-0" }),
			refusal: ReasonIPHeldByOtherPod, message: "is recorded for key sts_ns_web_web-0 (FloatIP 198-51-100-12), which is not this pod's owner or pool"},
		"the pod's key without its sharing pool": {pod: deployPod, fip: with(func(f *networkingv1alpha1.FloatIP) { f.Spec.Key = "dp_ns_web_web-0" }),
			refusal: ReasonIPHeldByOtherPod, message: "which is not this pod's owner or pool"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := tc.pod
			if pod == nil {
				pod = testPod(true, nil)
			}
			r := CheckHolder(pod, ip, tc.fip)
			switch {
			case tc.refusal == "" && r != nil:
				t.Fatalf("refused: %v", r)
			case tc.refusal != "" && (r == nil || r.Reason != tc.refusal || !strings.Contains(r.Message, tc.message)):
				t.Fatalf("refusal = %v, want %s containing %q", r, tc.refusal, tc.message)
			}
		})
	}
}
