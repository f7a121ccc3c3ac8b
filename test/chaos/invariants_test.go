package chaos

import (
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

const cluster = "chaos"

func owned(uid string) []core.Tag {
	return []core.Tag{{Key: orphan.TagCluster, Value: cluster}, {Key: orphan.TagOwnerUID, Value: uid}}
}

func peip(name, uid string, ready bool, alloc, eni, ip, podUID string) networkingv1alpha1.PodElasticIP {
	p := networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)}}
	p.Spec.PodName = name
	p.Status.AllocationID, p.Status.NetworkInterfaceID, p.Status.PrivateIP, p.Status.PodUID = alloc, eni, ip, podUID
	if alloc != "" {
		p.Status.AssociationID = "assoc-" + alloc
	}
	if ready {
		p.SetConditions(xpv2.Available())
	} else {
		p.SetConditions(xpv2.Creating())
	}
	return p
}

func binding(node, uid string, ready bool, addr, instance string) networkingv1alpha1.AnycastIPBinding {
	b := networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID(uid)}}
	b.Spec.NodeName = node
	b.Status.AddressID, b.Status.InstanceID = addr, instance
	if ready {
		b.SetConditions(xpv2.Available())
	} else {
		b.SetConditions(xpv2.Unavailable().WithMessage("binding"))
	}
	return b
}

func pod(name, uid, node, ip string, ready bool, annotations map[string]string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), Labels: map[string]string{"app": "w"}, Annotations: annotations}}
	p.Spec.NodeName = node
	p.Status.Phase, p.Status.PodIP = corev1.PodRunning, ip
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func node(name, instance string, taint bool, virtual bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{ProviderID: "qcloud:///800002/" + instance}}
	if taint {
		n.Spec.Taints = []corev1.Taint{{Key: networkingv1alpha1.LegacyTaintNoAIAIP, Effect: corev1.TaintEffectNoSchedule}}
	}
	if virtual {
		n.Labels[corev1.LabelInstanceTypeStable] = "eklet"
	}
	return n
}

func TestCheck(t *testing.T) {
	ec2 := func(alloc, eni, ip, owner string) core.EC2Address {
		return core.EC2Address{AllocationID: alloc, NetworkInterfaceID: eni, PrivateIPAddress: ip, Tags: owned(owner)}
	}
	tc := func(id, status, instance, owner string) core.TCAddress {
		return core.TCAddress{AddressID: id, AddressStatus: status, InstanceID: instance, Tags: owned(owner)}
	}
	tests := map[string]struct {
		state State
		want  Violations
	}{
		"consistent": {state: State{
			Cloud: core.Snapshot{
				EC2:     core.EC2Snapshot{Addresses: []core.EC2Address{ec2("eipalloc-1", "eni-1", "10.0.0.5", "u1"), {AllocationID: "eipalloc-x"}}},
				Tencent: core.TencentSnapshot{Addresses: []core.TCAddress{tc("eip-1", "BIND", "ins-1", "b1"), tc("eip-2", "UNBIND", "", "b2")}},
			},
			PodElasticIPs: []networkingv1alpha1.PodElasticIP{peip("p1", "u1", true, "eipalloc-1", "eni-1", "10.0.0.5", "pod-1")},
			Bindings:      []networkingv1alpha1.AnycastIPBinding{binding("n1", "b1", true, "eip-1", "ins-1"), binding("n2", "b2", false, "eip-2", "")},
			Nodes:         []corev1.Node{node("n1", "ins-1", false, false), node("n2", "ins-2", true, false)},
			Pods:          []corev1.Pod{pod("p1", "pod-1", "n1", "10.0.0.5", true, nil)},
		}},
		"leaked and disagreeing": {state: State{
			Cloud: core.Snapshot{
				EC2: core.EC2Snapshot{Addresses: []core.EC2Address{ec2("eipalloc-1", "eni-1", "10.0.0.9", "u1"), ec2("eipalloc-2", "", "", "gone"), ec2("eipalloc-3", "", "", "u2")}},
				Tencent: core.TencentSnapshot{Addresses: []core.TCAddress{tc("eip-1", "UNBIND", "", "b1"), tc("eip-2", "BIND", "ins-2", "b2"),
					tc("eip-3", "BIND", "ins-2", "old")}},
			},
			PodElasticIPs: []networkingv1alpha1.PodElasticIP{peip("p1", "u1", true, "eipalloc-1", "eni-1", "10.0.0.5", "pod-1"),
				peip("p2", "u2", true, "eipalloc-9", "eni-1", "10.0.0.6", "pod-2")},
			Bindings: []networkingv1alpha1.AnycastIPBinding{binding("n1", "b1", true, "eip-1", "ins-1"), binding("n2", "b2", true, "eip-2", "ins-2")},
			Nodes:    []corev1.Node{node("n1", "ins-1", true, false), node("n2", "ins-3", false, false), node("n3", "", true, false)},
		}},
		"claimed twice": {state: State{
			Cloud: core.Snapshot{EC2: core.EC2Snapshot{Addresses: []core.EC2Address{ec2("eipalloc-1", "eni-1", "10.0.0.5", "u1")}}},
			PodElasticIPs: []networkingv1alpha1.PodElasticIP{peip("p1", "u1", false, "eipalloc-1", "eni-1", "10.0.0.5", ""),
				peip("p2", "u2", false, "eipalloc-1", "eni-1", "10.0.0.5", "")},
		}},
	}
	want := map[string]Violations{
		"consistent": {},
		"leaked and disagreeing": {
			OrphanAddresses: []string{`EC2 eipalloc-2 () owner "gone"`, `EC2 eipalloc-3 () owner "u2" holds "eipalloc-9"`, `Tencent eip-3 (, BIND) owner "old"`},
			DoubleBound:     []string{"instance ins-2 holds addresses [eip-2 eip-3]"},
			ReadyDisagreeing: []string{
				"PodElasticIP ns/p1: address eipalloc-1 is on eni-1/10.0.0.9, status says eni-1/10.0.0.5",
				"PodElasticIP ns/p2: address eipalloc-9 does not exist",
				`AnycastIPBinding n1: address eip-1 is UNBIND on "", status says bound to ins-1`,
				"AnycastIPBinding n2: node n2 is instance ins-3, the address is on ins-2",
			},
			TaintedWithoutReason: []string{"node n1: tainted although AnycastIPBinding n1 is Ready", "node n3: tainted, no AnycastIPBinding"},
		},
		"claimed twice": {
			OrphanAddresses: nil,
			DoubleBound:     []string{"EC2 address eipalloc-1 claimed by [ns/p1 ns/p2]", "ENI private IP eni-1/10.0.0.5 associated for [ns/p1 ns/p2]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.state.Cluster = cluster
			got := Check(tc.state)
			if diff := cmp.Diff(want[name], got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if got.Zero() != (name == "consistent") {
				t.Errorf("Zero() = %v", got.Zero())
			}
		})
	}
}

func TestFloatIPsHeldTwice(t *testing.T) {
	args := func(ip string) map[string]string {
		return map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"` + ip + `/24","vlan":0,"gateway":"172.20.0.1"}]}}`}
	}
	fip := func(ip, podUID string) networkingv1alpha1.FloatIP {
		f := networkingv1alpha1.FloatIP{}
		f.Spec.IP, f.Status.Phase, f.Status.PodUID, f.Status.PodNamespace, f.Status.PodName = ip, networkingv1alpha1.FloatIPAllocated, podUID, "ns", "x"
		return f
	}
	deleted := pod("c", "uid-c", "n1", "", true, args("172.20.0.10"))
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	tests := map[string]struct {
		pods []corev1.Pod
		fips []networkingv1alpha1.FloatIP
		want []string
	}{
		"one holder each": {pods: []corev1.Pod{pod("a", "uid-a", "n1", "", true, args("172.20.0.10")), pod("b", "uid-b", "n1", "", true, args("172.20.0.11")), deleted},
			fips: []networkingv1alpha1.FloatIP{fip("172.20.0.10", "uid-a"), fip("172.20.0.11", "uid-b")}},
		"two live pods": {pods: []corev1.Pod{pod("a", "uid-a", "n1", "", true, args("172.20.0.10")), pod("b", "uid-b", "n2", "", true, args("172.20.0.10"))},
			want: []string{"float IP 172.20.0.10 held by [ns/a ns/b]"}},
		"FloatIP names another pod": {pods: []corev1.Pod{pod("a", "uid-a", "n1", "", true, args("172.20.0.10"))},
			fips: []networkingv1alpha1.FloatIP{fip("172.20.0.10", "uid-z")},
			want: []string{"float IP 172.20.0.10 is in pod ns/a but its FloatIP names pod ns/x (uid-z)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FloatIPsHeldTwice(tc.pods, tc.fips)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFloorsAndDegraded(t *testing.T) {
	dep := func(floor string, replicas int32) appsv1.Deployment {
		return appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationLocalReplicas: floor}}},
		}}
	}
	nodes := []corev1.Node{node("local", "", false, false), node("virtual", "", false, true)}
	pods := []corev1.Pod{pod("a", "1", "local", "", true, nil), pod("b", "2", "virtual", "", true, nil), pod("c", "3", "local", "", false, nil)}
	tests := map[string]struct {
		dep  appsv1.Deployment
		want []string
	}{
		"floor 1 met":               {dep: dep("1", 3)},
		"floor 2: the unready pod":  {dep: dep("2", 3), want: []string{"Deployment ns/w: 1 local replicas running, floor 2"}},
		"floor capped by replicas":  {dep: dep("5", 1)},
		"no floor annotation value": {dep: dep("", 3)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FloorsBroken([]appsv1.Deployment{tc.dep}, pods, nodes)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	terminating := pod("d", "4", "n2", "", true, nil)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	idsPods := []corev1.Pod{pod("a", "1", "n1", "", true, nil), pod("b", "2", "n1", "", true, nil),
		pod("c", "3", "n2", "", true, nil), terminating, pod("e", "5", "n3", "", true, nil), pod("f", "6", "n3", "", false, nil)}
	if diff := cmp.Diff([]string{"n2", "n3", "n4"}, DegradedNodes([]string{"n1", "n2", "n3", "n4"}, idsPods, 2)); diff != "" {
		t.Errorf("degraded nodes (-want +got):\n%s", diff)
	}
}

func TestFiguresLines(t *testing.T) {
	f := Figures{Tally: Tally{Failovers: 3, LeaderKills: 3}, Converged: 1500 * time.Millisecond}
	f.FloorsBroken = []string{"Deployment ns/w: 0 local replicas running, floor 1"}
	got := strings.Join(f.Lines(), "\n")
	for _, want := range []string{"local replica floors broken: 1", "failovers completed: 3", "leader kills: 3", "converged after the last fault: 1.5 s", "float IPs held twice: 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	if n := len(f.Failures()); n != 1 {
		t.Errorf("%d failures, want 1: %v", n, f.Failures())
	}
	if n := len((Figures{Converged: -1}).Failures()); n != 1 {
		t.Errorf("a run that never converged has %d failures, want 1", n)
	}
	// A converged run without an invariant broken still fails below the
	// profile's minimums.
	short := Figures{Tally: NewTally(Profile{MinLeaderKills: 3})}
	if n := len(short.Failures()); n != 2+len(FaultKinds()) {
		t.Errorf("a run that killed nothing and injected nothing has %d failures, want %d: %v", n, 2+len(FaultKinds()), short.Failures())
	}
}

func TestCallSummary(t *testing.T) {
	got := CallSummary(map[string]int64{"ec2/AllocateAddress/OK": 3, "tencent/DescribeAddresses/OK": 4, "ec2/DescribeAddresses/RequestLimitExceeded": 2})
	want := []string{"cloud calls OK: 7", "cloud calls RequestLimitExceeded: 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
