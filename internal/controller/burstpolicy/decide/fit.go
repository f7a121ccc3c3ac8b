package decide

import (
	"maps"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	schedulingcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// NodeRoom is a node as the fit check sees it: the node and what the pods
// bound to it (not finished) already use.
type NodeRoom struct {
	Node *corev1.Node
	// Requested sums the requests of the pods bound to the node.
	Requested corev1.ResourceList
	// Pods counts the pods bound to the node.
	Pods int64
	// HostPorts are the host ports in use on the node.
	HostPorts map[int32]bool
}

// FitsLocally is a conservative fit check for the replacement of a burst
// pod: the pod as its template made it, without what bursting added (the
// virtual-node tolerations and node selector). It returns the first local
// node (by name) the replacement fits on: not virtual, not cordoned, Ready,
// taints tolerated, node selector and required node affinity matched,
// allocatable minus requested at least the pod's requests, a pod slot and
// its host ports free. It returns "" and why not otherwise. Pods with
// required inter-pod (anti-)affinity or hard topology spread constraints are
// not checked (the answer would be a guess) and never fit.
func FitsLocally(pod *corev1.Pod, nodes []NodeRoom, virtualSel map[string]string, burstTolerations []corev1.Toleration) (string, string) {
	if a := pod.Spec.Affinity; a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0)) {
		return "", "the pod has required inter-pod (anti-)affinity, which the fit check does not evaluate"
	}
	if slices.ContainsFunc(pod.Spec.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
		return c.WhenUnsatisfiable == corev1.DoNotSchedule
	}) {
		return "", "the pod has hard topology spread constraints, which the fit check does not evaluate"
	}
	tolerations := slices.DeleteFunc(slices.Clone(pod.Spec.Tolerations), func(t corev1.Toleration) bool {
		return slices.ContainsFunc(burstTolerations, func(b corev1.Toleration) bool { return t.MatchToleration(&b) })
	})
	selector := maps.Clone(pod.Spec.NodeSelector)
	for k, v := range virtualSel {
		if selector[k] == v {
			delete(selector, k)
		}
	}
	affinity := nodeaffinity.NewRequiredNodeAffinity(selector, pod.Spec.Affinity)
	requests := PodRequests(pod)
	ports := hostPorts(pod)

	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b NodeRoom) int { return strings.Compare(a.Node.Name, b.Node.Name) })
	for _, n := range sorted {
		if nodeFits(n, tolerations, affinity, requests, ports, virtualSel) {
			return n.Node.Name, ""
		}
	}
	return "", "no local node has room for the pod"
}

func nodeFits(n NodeRoom, tolerations []corev1.Toleration, affinity nodeaffinity.RequiredNodeAffinity, requests corev1.ResourceList, ports []int32, virtualSel map[string]string) bool {
	node := n.Node
	if IsVirtualNode(node.Labels, virtualSel) || node.Spec.Unschedulable || !nodeReady(node) {
		return false
	}
	if _, untolerated := schedulingcorev1.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, tolerations, hardTaint, false); untolerated {
		return false
	}
	// An unparsable affinity (the API server validates it, so only a
	// hand-made pod has one) matches no node rather than every node.
	if match, err := affinity.Match(node); err != nil || !match {
		return false
	}
	if podsLeft, ok := node.Status.Allocatable[corev1.ResourcePods]; ok && podsLeft.Value()-n.Pods < 1 {
		return false
	}
	for name, want := range requests {
		alloc, ok := node.Status.Allocatable[name]
		if !ok {
			return false
		}
		free := alloc.DeepCopy()
		if used, ok := n.Requested[name]; ok {
			free.Sub(used)
		}
		if free.Cmp(want) < 0 {
			return false
		}
	}
	for _, p := range ports {
		if n.HostPorts[p] {
			return false
		}
	}
	return true
}

// hardTaint is the scheduler's TaintToleration filter: PreferNoSchedule
// taints only lower a node's score.
func hardTaint(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodRequests is what the scheduler reserves for a pod it is about to
// place: the requests of its spec (pod-level resources where set, otherwise
// the larger of the containers plus restartable init containers and each
// init container plus the restartable ones before it), plus the overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// boundRequests is what a pod bound to a node holds there, as the scheduler
// counts it: during an in-place resize, the larger of the spec and what the
// kubelet allocated or actuated, so a resize down that has not happened yet
// still holds the old amount.
func boundRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true})
}

func add(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	cur := l[name]
	cur.Add(q)
	l[name] = cur
}

// hostPorts lists the host ports a pod's containers bind.
func hostPorts(pod *corev1.Pod) []int32 {
	var out []int32
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort > 0 {
					out = append(out, p.HostPort)
				}
			}
		}
	}
	return out
}

// Add counts a pod bound to the node: a pod slot, its requests and its
// host ports.
func (n *NodeRoom) Add(pod *corev1.Pod) {
	n.Pods++
	for name, q := range boundRequests(pod) {
		add(n.Requested, name, q)
	}
	for _, p := range hostPorts(pod) {
		n.HostPorts[p] = true
	}
}
