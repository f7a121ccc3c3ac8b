package decide

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	requests := PodRequests(pod)
	ports := hostPorts(pod)

	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b NodeRoom) int { return strings.Compare(a.Node.Name, b.Node.Name) })
	for _, n := range sorted {
		if nodeFits(n, tolerations, selector, pod.Spec.Affinity, requests, ports, virtualSel) {
			return n.Node.Name, ""
		}
	}
	return "", "no local node has room for the pod"
}

func nodeFits(n NodeRoom, tolerations []corev1.Toleration, selector map[string]string, aff *corev1.Affinity, requests corev1.ResourceList, ports []int32, virtualSel map[string]string) bool {
	node := n.Node
	if IsVirtualNode(node.Labels, virtualSel) || node.Spec.Unschedulable || !nodeReady(node) {
		return false
	}
	for _, taint := range node.Spec.Taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(logr.Discard(), &taint, false) }) {
			return false
		}
	}
	for k, v := range selector {
		if node.Labels[k] != v {
			return false
		}
	}
	if aff != nil && aff.NodeAffinity != nil && aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil &&
		!matchNodeSelectorTerms(aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, node) {
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

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodRequests is what the scheduler reserves for a pod: the larger of the
// containers (plus restartable init containers) and each init container
// (plus the restartable ones before it), plus the pod overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	addTo(sum, pod.Spec.Containers...)
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sum, c)
			addTo(sidecars, c)
			continue
		}
		step := corev1.ResourceList{}
		addTo(step, c)
		for name, q := range sidecars {
			add(step, name, q)
		}
		for name, q := range step {
			if cur, ok := initMax[name]; !ok || q.Cmp(cur) > 0 {
				initMax[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range initMax {
		if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
			sum[name] = q.DeepCopy()
		}
	}
	for name, q := range pod.Spec.Overhead {
		add(sum, name, q)
	}
	return sum
}

func addTo(l corev1.ResourceList, cs ...corev1.Container) {
	for _, c := range cs {
		for name, q := range c.Resources.Requests {
			add(l, name, q)
		}
	}
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
	for name, q := range PodRequests(pod) {
		add(n.Requested, name, q)
	}
	for _, p := range hostPorts(pod) {
		n.HostPorts[p] = true
	}
}

// matchNodeSelectorTerms reports whether the node matches one of the terms
// (required node affinity; an empty term list matches nothing).
func matchNodeSelectorTerms(terms []corev1.NodeSelectorTerm, node *corev1.Node) bool {
	for _, t := range terms {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue
		}
		ok := true
		for _, r := range t.MatchExpressions {
			v, has := node.Labels[r.Key]
			ok = ok && matchRequirement(r, v, has)
		}
		for _, r := range t.MatchFields {
			ok = ok && r.Key == "metadata.name" && matchRequirement(r, node.Name, true)
		}
		if ok {
			return true
		}
	}
	return false
}

func matchRequirement(r corev1.NodeSelectorRequirement, v string, has bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return a > b
		}
		return a < b
	}
	return false
}
