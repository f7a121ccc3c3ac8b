package burstpolicy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// TestRebalance: 1 of 2 replicas local and 2 burst. While the local node is
// full nothing moves; once room frees, a PodDisruptionBudget still blocks
// the eviction (Warning Event); without it, exactly one burst pod (the
// newest) is evicted, and no second one while it terminates.
func TestRebalance(t *testing.T) {
	ctx, ns := fixture(t, "rebalance")
	node := ns + "-local"
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Status = corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("10")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	if err := env.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready; no node controller runs
	// here to lift it.
	n.Spec.Taints = nil
	if err := env.Client.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	// Not t.Context(): it is canceled before cleanups run.
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })

	labels := map[string]string{"app": "rb", appsv1.DefaultDeploymentUniqueLabelKey: "r1"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			Selector:      &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rb"}},
			Enabled:       ptr.To(true),
			LocalReplicas: 2,
			Rebalance:     &schedulingv1alpha1.Rebalance{Enabled: true, After: &metav1.Duration{Duration: 0}},
		},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p0 := makePod(ctx, t, ns, "rb-0", labels, nil)
	bind(ctx, t, p0, node)
	markRunning(ctx, t, p0)
	time.Sleep(1100 * time.Millisecond) // creation order is by the second

	for i := 1; i <= 2; i++ {
		p := makePod(ctx, t, ns, fmt.Sprintf("rb-%d", i), labels, func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{eksToleration} })
		bind(ctx, t, p, virtualNode)
		markRunning(ctx, t, p)

		time.Sleep(1100 * time.Millisecond)
	}
	// The local node is full.
	filler := makePod(ctx, t, ns, "filler", map[string]string{"app": "filler"}, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	})
	bind(ctx, t, filler, node)

	rec := events.NewFakeRecorder(1000)
	r := newReconciler(rec)
	reconcilePolicy(ctx, t, r, policy)
	if policy.Status.Rebalance == nil || policy.Status.Rebalance.FloorShortSince == nil || !strings.Contains(policy.Status.Rebalance.Message, "no local node has room") {
		t.Fatalf("with the local node full, status.rebalance = %+v", policy.Status.Rebalance)
	}
	assertTerminating(ctx, t, ns)

	// Room frees, but a PodDisruptionBudget allows no disruption.
	if err := env.Client.Delete(ctx, filler, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rb"}}},
	}
	if err := env.Client.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	// What the disruption controller (not running here) would write.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 3, DesiredHealthy: 3, ExpectedPods: 3}
	if err := env.Client.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	res := reconcilePolicy(ctx, t, r, policy)
	if !hasEvent(rec, schedulingv1alpha1.EventReasonRebalanceBlocked) {
		t.Errorf("no %s event with a PodDisruptionBudget in the way", schedulingv1alpha1.EventReasonRebalanceBlocked)
	}
	if res.RequeueAfter == 0 {
		t.Errorf("a blocked eviction is not retried")
	}
	assertTerminating(ctx, t, ns)

	// Without it, the newest burst pod is evicted, and only that one.
	if err := env.Client.Delete(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	assertTerminating(ctx, t, ns, "rb-2")
	if st := policy.Status.Rebalance; st == nil || st.LastEvictedPod != "rb-2" || st.LastEvictionTime == nil {
		t.Errorf("status.rebalance = %+v, want rb-2 evicted", st)
	}
	if !hasEvent(rec, schedulingv1alpha1.EventReasonRebalanceEvicted) {
		t.Errorf("no %s event", schedulingv1alpha1.EventReasonRebalanceEvicted)
	}
	reconcilePolicy(ctx, t, r, policy)
	assertTerminating(ctx, t, ns, "rb-2")
	if st := policy.Status.Rebalance; st == nil || !strings.Contains(st.Message, "terminating") {
		t.Errorf("while the evicted pod terminates, status.rebalance = %+v", st)
	}

	// Switched off, the status says nothing about rebalancing.
	policy.Spec.Rebalance = nil
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	if policy.Status.Rebalance != nil {
		t.Errorf("status.rebalance = %+v with rebalancing off", policy.Status.Rebalance)
	}
}

// assertTerminating checks that exactly the named pods of ns are terminating.
func assertTerminating(ctx context.Context, t *testing.T, ns string, want ...string) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			got = append(got, p.Name)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) { // nil and empty print alike
		t.Errorf("terminating pods = %v, want %v", got, want)
	}
}

// markRunning writes what a kubelet would: Running and Ready (the Eviction
// API lets pending pods go regardless of PodDisruptionBudgets).
func markRunning(ctx context.Context, t *testing.T, p *corev1.Pod) {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatalf("marking %s running: %v", p.Name, err)
	}
}
