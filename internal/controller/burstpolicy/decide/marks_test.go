package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestRevertMarks(t *testing.T) {
	const (
		lb   = schedulingv1alpha1.LabelBurst
		bp   = schedulingv1alpha1.AnnotationBurstPolicy
		cost = schedulingv1alpha1.AnnotationPodDeletionCost
		by   = schedulingv1alpha1.AnnotationDeletionCostSetBy
		nb   = schedulingv1alpha1.AnnotationNotBurstable
	)
	all := map[string]string{bp: "p", cost: "-100", by: "p", nb: "ReservedPort", "other": "x"}
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		keepNB      bool
		want        Marks
	}{
		{name: "plain pod", labels: map[string]string{"app": "a"}, annotations: map[string]string{"other": "x"}},
		{name: "orphaned: everything of ours goes", labels: map[string]string{lb: "true", "app": "a"}, annotations: all,
			want: Marks{Labels: []string{lb}, Annotations: []string{bp, cost, by, nb}}},
		{name: "switched off: the not-burstable reason stays", labels: map[string]string{lb: "true"}, annotations: all, keepNB: true,
			want: Marks{Labels: []string{lb}, Annotations: []string{bp, cost, by}}},
		{name: "a cost a person set stays", annotations: map[string]string{cost: "5"}},
		{name: "set-by without cost", annotations: map[string]string{by: "p"}, want: Marks{Annotations: []string{by}}},
		{name: "not-burstable only", annotations: map[string]string{nb: "DaemonSetPod"}, want: Marks{Annotations: []string{nb}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RevertMarks(tc.labels, tc.annotations, tc.keepNB)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RevertMarks (-want +got):\n%s", diff)
			}
			if got.Empty() != tc.want.Empty() {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}
