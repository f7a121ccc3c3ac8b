package decide

import (
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Marks are the label and annotation keys edgeplane wrote on a pod.
type Marks struct {
	Labels, Annotations []string
}

// Empty reports whether there is nothing to remove.
func (m Marks) Empty() bool { return len(m.Labels) == 0 && len(m.Annotations) == 0 }

// RevertMarks returns the marks to remove from a pod so that it behaves as a
// plain pod again: the burst label, the burst-policy annotation, and the
// pod-deletion-cost with its deletion-cost-set-by mark when edgeplane wrote
// the cost (a cost a person set stays). keepNotBurstable keeps the
// not-burstable annotation: a switched-off policy still explains why its
// pending pods do not burst, while a pod no policy governs loses it too.
// Tolerations are not marks: they cannot be removed from a pod.
func RevertMarks(podLabels, podAnnotations map[string]string, keepNotBurstable bool) Marks {
	var m Marks
	if _, ok := podLabels[schedulingv1alpha1.LabelBurst]; ok {
		m.Labels = append(m.Labels, schedulingv1alpha1.LabelBurst)
	}
	if _, ok := podAnnotations[schedulingv1alpha1.AnnotationBurstPolicy]; ok {
		m.Annotations = append(m.Annotations, schedulingv1alpha1.AnnotationBurstPolicy)
	}
	if _, ok := podAnnotations[schedulingv1alpha1.AnnotationDeletionCostSetBy]; ok {
		if _, has := podAnnotations[schedulingv1alpha1.AnnotationPodDeletionCost]; has {
			m.Annotations = append(m.Annotations, schedulingv1alpha1.AnnotationPodDeletionCost)
		}
		m.Annotations = append(m.Annotations, schedulingv1alpha1.AnnotationDeletionCostSetBy)
	}
	if _, ok := podAnnotations[schedulingv1alpha1.AnnotationNotBurstable]; ok && !keepNotBurstable {
		m.Annotations = append(m.Annotations, schedulingv1alpha1.AnnotationNotBurstable)
	}
	return m
}
