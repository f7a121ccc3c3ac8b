package floatippool

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// admits says why pod's own constraints would keep it off node, or nil:
// its node selector and required node affinity, the node's NoSchedule and
// NoExecute taints it does not tolerate, and a cordoned node, as
// kube-scheduler's NodeAffinity, TaintToleration and NodeUnschedulable
// filters decide. A bind checks it, so that whoever calls /v1/bind cannot
// place a pod where the scheduler never would.
func admits(pod *corev1.Pod, node *corev1.Node) error {
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	if err != nil {
		return fmt.Errorf("pod %s/%s: its required node affinity cannot be evaluated: %w", pod.Namespace, pod.Name, err)
	}
	if !ok {
		return fmt.Errorf("node %s does not match the node selector or required node affinity of pod %s/%s", node.Name, pod.Namespace, pod.Name)
	}
	// The API server admits a toleration with a Gt or Lt operator only
	// while the feature that defines them is on, so a pod that carries one
	// is to be read with them.
	const comparisonOperators = true
	if taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, comparisonOperators); untolerated {
		return fmt.Errorf("node %s has the taint %s, which pod %s/%s does not tolerate", node.Name, taint.ToString(), pod.Namespace, pod.Name)
	}
	cordon := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if node.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, &cordon, comparisonOperators) {
		return fmt.Errorf("node %s is unschedulable (cordoned) and pod %s/%s does not tolerate it", node.Name, pod.Namespace, pod.Name)
	}
	return nil
}
