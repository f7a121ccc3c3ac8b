package burstpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/status"
)

// TestComputeStatus checks the pure status computation, one row per outcome.
func TestComputeStatus(t *testing.T) {
	target := resolvedTarget{name: "Deployment/web", selector: labels.SelectorFromSet(labels.Set{"app": "web"})}
	type conds map[string]string // type → "Status/Reason"
	cases := []struct {
		name       string
		scope      scope
		wantConds  conds
		wantCounts [3]int32 // local, burst, pending
		wantGen    bool
	}{
		{
			name:      "target missing",
			scope:     scope{targetErr: &targetError{reason: schedulingv1alpha1.ReasonTargetNotFound, message: "Deployment web not found"}},
			wantConds: conds{"Ready": "False/TargetNotFound", "Reconciling": "True/TargetNotFound", "Bursting": "Unknown/Reconciling", "LocalCapacityShort": "Unknown/Reconciling"},
			wantGen:   true,
		},
		{
			name:      "transient error: conditions only initialised",
			scope:     scope{},
			wantConds: conds{"Ready": "Unknown/Reconciling", "Bursting": "Unknown/Reconciling", "LocalCapacityShort": "Unknown/Reconciling"},
		},
		{
			name:       "pods burst",
			scope:      scope{target: target, sw: decide.Switch{Burst: true}, plan: &decide.Plan{Local: 1, Virtual: 3, BurstCount: 3}},
			wantConds:  conds{"Ready": "True/Reconciled", "Bursting": "True/PodsBurst", "LocalCapacityShort": "False/LocalCapacitySufficient"},
			wantCounts: [3]int32{1, 3, 0},
			wantGen:    true,
		},
		{
			name:       "switched off with local pods waiting",
			scope:      scope{target: target, sw: decide.Switch{}, plan: &decide.Plan{Local: 1, Pending: 2, LocalWaiting: 2}},
			wantConds:  conds{"Ready": "True/Reconciled", "Bursting": "False/BurstDisabled", "LocalCapacityShort": "True/LocalReplicasWaiting"},
			wantCounts: [3]int32{1, 0, 2},
			wantGen:    true,
		},
		{
			name:       "cap reached",
			scope:      scope{target: target, sw: decide.Switch{Burst: true}, plan: &decide.Plan{Virtual: 2, Pending: 1, BurstCount: 2, MaxBurstReached: true}},
			wantConds:  conds{"Ready": "True/Reconciled", "Bursting": "True/MaxBurstReached", "LocalCapacityShort": "False/LocalCapacitySufficient"},
			wantCounts: [3]int32{0, 2, 1},
			wantGen:    true,
		},
		{
			name:       "nothing to burst",
			scope:      scope{target: target, sw: decide.Switch{Burst: true}, plan: &decide.Plan{Local: 2}},
			wantConds:  conds{"Ready": "True/Reconciled", "Bursting": "False/NoBurstNeeded", "LocalCapacityShort": "False/LocalCapacitySufficient"},
			wantCounts: [3]int32{2, 0, 0},
			wantGen:    true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3},
				Spec: schedulingv1alpha1.BurstPolicySpec{TargetRef: &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}
			s := tc.scope
			s.policy = p
			computeStatus(&s)
			got := conds{}
			for _, c := range p.Status.Conditions {
				got[c.Type] = string(c.Status) + "/" + c.Reason
				if c.ObservedGeneration != 3 {
					t.Errorf("%s observedGeneration = %d, want 3", c.Type, c.ObservedGeneration)
				}
			}
			if diff := cmp.Diff(tc.wantConds, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if counts := [3]int32{p.Status.LocalReplicas, p.Status.BurstReplicas, p.Status.PendingReplicas}; counts != tc.wantCounts {
				t.Errorf("counts = %v, want %v", counts, tc.wantCounts)
			}
			if (p.Status.ObservedGeneration == 3) != tc.wantGen {
				t.Errorf("observedGeneration = %d, want set: %v", p.Status.ObservedGeneration, tc.wantGen)
			}
			if tc.wantGen && p.Status.Target != "Deployment/web" {
				t.Errorf("target = %q", p.Status.Target)
			}
			if c := status.Get(p, schedulingv1alpha1.TypeReady); c == nil || c.Message == "" {
				t.Errorf("Ready has no message: %+v", c)
			}
		})
	}
}
