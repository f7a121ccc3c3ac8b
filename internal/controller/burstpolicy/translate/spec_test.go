package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestPolicySpec(t *testing.T) {
	base := func(f func(*schedulingv1alpha1.BurstPolicySpec)) schedulingv1alpha1.BurstPolicySpec {
		s := schedulingv1alpha1.BurstPolicySpec{
			TargetRef:    &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Trigger:      schedulingv1alpha1.TriggerUnschedulable,
			VirtualNodes: schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS},
			ScaleIn:      schedulingv1alpha1.ScaleInBurstFirst,
		}
		if f != nil {
			f(&s)
		}
		return s
	}
	cases := []struct {
		name         string
		ann          map[string]string
		want         schedulingv1alpha1.BurstPolicySpec
		wantProblems []string
	}{
		{name: "seed", ann: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}, want: base(func(s *schedulingv1alpha1.BurstPolicySpec) {
			s.Enabled, s.LocalReplicas, s.Trigger = ptr.To(true), 1, schedulingv1alpha1.TriggerPending
		})},
		{name: "switch only", ann: map[string]string{"AUTO_SCALE_EKS": "false"}, want: base(func(s *schedulingv1alpha1.BurstPolicySpec) { s.Enabled = ptr.To(false) })},
		{name: "floor only", ann: map[string]string{"LOCAL_REPLICAS": "2"}, want: base(func(s *schedulingv1alpha1.BurstPolicySpec) {
			s.LocalReplicas, s.Trigger = 2, schedulingv1alpha1.TriggerPending
		})},
		{name: "bad values are reported and ignored", ann: map[string]string{"AUTO_SCALE_EKS": "maybe", "LOCAL_REPLICAS": "-3"}, want: base(nil),
			wantProblems: []string{"AUTO_SCALE_EKS", "LOCAL_REPLICAS"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := PolicySpec("apps/v1", "Deployment", "web", tc.ann)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PolicySpec (-want +got):\n%s", diff)
			}
			if len(problems) != len(tc.wantProblems) {
				t.Fatalf("problems = %v, want %d mentioning %v", problems, len(tc.wantProblems), tc.wantProblems)
			}
			for i, p := range problems {
				if !strings.Contains(p, tc.wantProblems[i]) {
					t.Errorf("problem %q does not mention %s", p, tc.wantProblems[i])
				}
			}
		})
	}
}

func TestPolicyName(t *testing.T) {
	if got := PolicyName("StatefulSet", "db"); got != "statefulset-db" {
		t.Errorf("PolicyName = %q", got)
	}
	if got := PolicyName("Deployment", strings.Repeat("a", 300)); len(got) != maxNameLength {
		t.Errorf("long name has length %d, want %d", len(got), maxNameLength)
	}
}
