package floatippool

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// TestRolloutDeadlocks covers galaxy's FAQ case and the ways out of it.
func TestRolloutDeadlocks(t *testing.T) {
	dep := func(replicas int32, strategy appsv1.DeploymentStrategy) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Strategy: strategy}}
	}
	rolling := func(surge, unavailable intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	}
	cases := map[string]struct {
		dep       *appsv1.Deployment
		retaining bool
		want      bool
	}{
		"default strategy, 1 replica":   {dep: dep(1, appsv1.DeploymentStrategy{}), retaining: true, want: true},
		"default strategy, 3 replicas":  {dep: dep(3, appsv1.DeploymentStrategy{}), retaining: true, want: true},
		"default strategy, 4 replicas":  {dep: dep(4, appsv1.DeploymentStrategy{}), retaining: true, want: false},
		"release policy Default":        {dep: dep(2, appsv1.DeploymentStrategy{}), retaining: false, want: false},
		"Recreate":                      {dep: dep(2, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}), retaining: true, want: false},
		"maxUnavailable 1":              {dep: dep(2, rolling(intstr.FromInt32(1), intstr.FromInt32(1))), retaining: true, want: false},
		"maxSurge 0, maxUnavailable 1":  {dep: dep(2, rolling(intstr.FromInt32(0), intstr.FromInt32(1))), retaining: true, want: false},
		"maxSurge 1, maxUnavailable 0":  {dep: dep(10, rolling(intstr.FromInt32(1), intstr.FromInt32(0))), retaining: true, want: true},
		"scaled to zero":                {dep: dep(0, appsv1.DeploymentStrategy{}), retaining: true, want: false},
		"percent unavailable rounds up": {dep: dep(2, rolling(intstr.FromString("25%"), intstr.FromString("50%"))), retaining: true, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RolloutDeadlocks(tc.dep, tc.retaining); got != tc.want {
				t.Fatalf("RolloutDeadlocks = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestComputePoolStatus covers the counts and the Ready reasons.
func TestComputePoolStatus(t *testing.T) {
	pool := func(ranges ...string) *networkingv1alpha1.FloatIPPool {
		return &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1},
			Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: ranges, Subnet: "10.0.0.0/24", NodeSubnets: []string{"192.168.0.0/24"}}}
	}
	fip := func(ip string, phase networkingv1alpha1.FloatIPPhase) networkingv1alpha1.FloatIP {
		return networkingv1alpha1.FloatIP{Spec: networkingv1alpha1.FloatIPSpec{IP: ip, Pool: "p", Key: "k"}, Status: networkingv1alpha1.FloatIPStatus{Phase: phase}}
	}
	cases := map[string]struct {
		pool       *networkingv1alpha1.FloatIPPool
		fips       []networkingv1alpha1.FloatIP
		wantReason string
		wantCounts [4]int64 // total, allocated, reserved, available
	}{
		"available": {pool: pool("10.0.0.1~10.0.0.4"), fips: []networkingv1alpha1.FloatIP{fip("10.0.0.1", networkingv1alpha1.FloatIPAllocated), fip("10.0.0.2", networkingv1alpha1.FloatIPReserved)},
			wantReason: networkingv1alpha1.FloatIPReasonAvailable, wantCounts: [4]int64{4, 1, 1, 2}},
		"exhausted": {pool: pool("10.0.0.1"), fips: []networkingv1alpha1.FloatIP{fip("10.0.0.1", networkingv1alpha1.FloatIPAllocated)},
			wantReason: networkingv1alpha1.FloatIPReasonExhausted, wantCounts: [4]int64{1, 1, 0, 0}},
		"allocation outside ranges": {pool: pool("10.0.0.1~10.0.0.2"), fips: []networkingv1alpha1.FloatIP{fip("10.0.0.9", networkingv1alpha1.FloatIPAllocated)},
			wantReason: networkingv1alpha1.FloatIPReasonOrphanedAllocations, wantCounts: [4]int64{2, 1, 0, 2}},
		"invalid ranges": {pool: pool("10.0.0.1~10.0.0.5", "10.0.0.3"), wantReason: networkingv1alpha1.FloatIPReasonInvalidRanges},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := parsePool(tc.pool)
			computePoolStatus(tc.pool, v, tc.fips, nil)
			if c := status.Get(tc.pool, networkingv1alpha1.FloatIPTypeReady); c == nil || c.Reason != tc.wantReason {
				t.Fatalf("Ready = %+v, want reason %s", c, tc.wantReason)
			}
			got := [4]int64{tc.pool.Status.Total, tc.pool.Status.Allocated, tc.pool.Status.Reserved, tc.pool.Status.Available}
			if tc.wantReason != networkingv1alpha1.FloatIPReasonInvalidRanges && got != tc.wantCounts {
				t.Fatalf("counts = %v, want %v", got, tc.wantCounts)
			}
		})
	}
}
