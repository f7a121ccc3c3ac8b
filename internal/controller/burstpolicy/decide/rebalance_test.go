package decide

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestRebalanceStep(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	pod := func(name, rev string, pl Placement, created int) PodState {
		return PodState{Name: name, Revision: rev, Placement: pl, Created: at(created)}
	}
	// localReplicas 2: one local, two burst.
	short := []PodState{pod("a", "r1", Local, -300), pod("b", "r1", Virtual, -200), pod("c", "r1", Virtual, -100)}
	for _, tc := range []struct {
		name string
		in   RebalanceInput
		want RebalanceResult
	}{
		{name: "floor kept", in: RebalanceInput{LocalReplicas: 1, After: time.Minute, Pods: short}},
		{name: "no burst pod", in: RebalanceInput{LocalReplicas: 2, Pods: []PodState{pod("a", "r1", Local, -1)}}},
		{name: "no floor", in: RebalanceInput{LocalReplicas: 0, Pods: short}},
		{name: "shortage starts now: wait after", in: RebalanceInput{LocalReplicas: 2, After: time.Minute, Pods: short},
			want: RebalanceResult{ShortSince: now, RequeueAfter: time.Minute, Waiting: "the local floor is short (1 of 2 local); moving a burst pod home in 1m0s"}},
		{name: "short long enough: newest burst pod first", in: RebalanceInput{LocalReplicas: 2, After: time.Minute, Pods: short, ShortSince: at(-61)},
			want: RebalanceResult{ShortSince: at(-61), Candidates: []string{"c", "b"}}},
		{name: "after 0 acts at once", in: RebalanceInput{LocalReplicas: 2, Pods: short},
			want: RebalanceResult{ShortSince: now, Candidates: []string{"c", "b"}}},
		{name: "an eviction in flight: one at a time", in: RebalanceInput{LocalReplicas: 2, Pods: short, ShortSince: at(-600), EvictionInFlight: true},
			want: RebalanceResult{ShortSince: at(-600), Waiting: "a pod is terminating"}},
		{name: "a pod terminating", in: RebalanceInput{LocalReplicas: 2, Pods: short, ShortSince: at(-600), Terminating: 1},
			want: RebalanceResult{ShortSince: at(-600), Waiting: "a pod is terminating"}},
		{name: "the replacement is not placed yet", in: RebalanceInput{LocalReplicas: 3, Pods: append(short[:3:3], pod("d", "r1", Pending, 0)), ShortSince: at(-600)},
			want: RebalanceResult{ShortSince: at(-600), Waiting: "1 pods are not placed yet"}},
		{name: "a rollout is under way", in: RebalanceInput{LocalReplicas: 2, Pods: append(short[:3:3], pod("n", "r2", Local, 0)), ShortSince: at(-600)},
			want: RebalanceResult{ShortSince: at(-600), Waiting: "a rollout is under way"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RebalanceStep(tc.in, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RebalanceStep (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFitsLocally(t *testing.T) {
	virtualSel := map[string]string{corev1.LabelInstanceTypeStable: TencentEKSInstanceType}
	burstTols := VirtualNodeTolerations(schedulingv1alpha1.VirtualNodes{})
	node := func(name string, mutate func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("10")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			}}
		if mutate != nil {
			mutate(n)
		}
		return n
	}
	room := func(n *corev1.Node, cpu string, pods int64) NodeRoom {
		return NodeRoom{Node: n, Requested: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}, Pods: pods, HostPorts: map[int32]bool{}}
	}
	burstPod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{
			Containers:   []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")}}}},
			Tolerations:  append([]corev1.Toleration(nil), burstTols...),
			NodeSelector: map[string]string{corev1.LabelInstanceTypeStable: TencentEKSInstanceType}, // pinned
		}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	eklet := node("eklet-1", func(n *corev1.Node) {
		n.Labels[corev1.LabelInstanceTypeStable] = TencentEKSInstanceType
		n.Spec.Taints = []corev1.Taint{{Key: TencentEKSTaint, Effect: corev1.TaintEffectNoSchedule}}
	})
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		nodes    []NodeRoom
		wantNode string
	}{
		{name: "room on a local node (the pin and the virtual toleration are ignored)", pod: burstPod(nil),
			nodes: []NodeRoom{room(eklet, "0", 0), room(node("local-1", nil), "1", 1)}, wantNode: "local-1"},
		{name: "the first fitting node by name", pod: burstPod(nil),
			nodes: []NodeRoom{room(node("local-2", nil), "0", 0), room(node("local-1", nil), "1500m", 1)}, wantNode: "local-2"},
		{name: "full", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", nil), "1500m", 1), room(eklet, "0", 0)}},
		{name: "no pod slot", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", nil), "0", 10)}},
		{name: "cordoned", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) { n.Spec.Unschedulable = true }), "0", 0)}},
		{name: "not ready", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) {
			n.Status.Conditions[0].Status = corev1.ConditionFalse
		}), "0", 0)}},
		{name: "taint not tolerated", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
		}), "0", 0)}},
		{name: "taint tolerated by the pod's own toleration", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule})
		}), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
		}), "0", 0)}, wantNode: "local-1"},
		{name: "node selector of the template", pod: burstPod(func(p *corev1.Pod) { p.Spec.NodeSelector["zone"] = "b" }),
			nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
		{name: "required node affinity matches", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}, wantNode: "local-1"},
		{name: "required node affinity does not match", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a"}}}}}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
		{name: "required pod anti-affinity is not evaluated: no fit", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
		{name: "hard topology spread is not evaluated: no fit", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
		{name: "host port taken", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}), nodes: []NodeRoom{{Node: node("local-1", nil), Requested: corev1.ResourceList{}, HostPorts: map[int32]bool{8080: true}}}},
		{name: "a resource the node lacks", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
		{name: "an init container larger than the containers", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "1", 1)}},
		// The hand-written check ignored pod-level resources and counted 600m here.
		{name: "pod-level requests larger than the containers'", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "1", 1)}},
		{name: "pod-level requests smaller than the containers'", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1500m")
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m")}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "1", 1)}, wantNode: "local-1"},
		{name: "a restartable init container adds to the containers", pod: burstPod(func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "1", 1)}},
		{name: "a PreferNoSchedule taint does not keep the pod off", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectPreferNoSchedule}}
		}), "0", 0)}, wantNode: "local-1"},
		{name: "a NoExecute taint not tolerated", pod: burstPod(nil), nodes: []NodeRoom{room(node("local-1", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
		}), "0", 0)}},
		{name: "required node affinity on the node's name", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"local-2"}}}}}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0), room(node("local-2", nil), "0", 0)}, wantNode: "local-2"},
		{name: "an invalid required node affinity matches no node", pod: burstPod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpGt, Values: []string{"x"}}}}}}}}
		}), nodes: []NodeRoom{room(node("local-1", nil), "0", 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := FitsLocally(tc.pod, tc.nodes, virtualSel, burstTols)
			if got != tc.wantNode {
				t.Errorf("FitsLocally = %q (%s), want %q", got, why, tc.wantNode)
			}
			if (got == "") != (why != "") {
				t.Errorf("node %q with reason %q", got, why)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "sidecar", RestartPolicy: &always, Resources: req("100m")}, {Name: "init", Resources: req("2")}},
		Containers:     []corev1.Container{{Name: "a", Resources: req("300m")}, {Name: "b", Resources: req("200m")}},
		Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}}
	// max(600m containers+sidecar, 2100m init+sidecar) + 50m overhead.
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2150m")}
	if diff := cmp.Diff(want, PodRequests(pod), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodRequests (-want +got):\n%s", diff)
	}
}

func TestNodeRoomAdd(t *testing.T) {
	pod := func(cpu string, hostPort int32) *corev1.Pod {
		c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
		if hostPort > 0 {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: hostPort}}
		}
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	}
	n := NodeRoom{Requested: corev1.ResourceList{}, HostPorts: map[int32]bool{}}
	n.Add(pod("300m", 8080))
	n.Add(pod("1200m", 0))
	want := NodeRoom{Requested: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}, Pods: 2, HostPorts: map[int32]bool{8080: true}}
	if diff := cmp.Diff(want, n, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("NodeRoom after Add (-want +got):\n%s", diff)
	}
}

// A pod resized down in place still holds what the kubelet allocated until
// the kubelet applies the resize; the hand-written sum took the spec alone.
func TestNodeRoomAddDuringResize(t *testing.T) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	resizing := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("200m")}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
			AllocatedResources: cpu("1"), Resources: &corev1.ResourceRequirements{Requests: cpu("1")}}}},
	}
	n := NodeRoom{Requested: corev1.ResourceList{}, HostPorts: map[int32]bool{}}
	n.Add(resizing)
	if got := n.Requested[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("requested CPU after Add = %s, want 1 (the allocation, not the 200m spec)", got.String())
	}
}
