package statemetrics

import (
	"context"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

var t0 = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func TestSummarize(t *testing.T) {
	for name, tc := range map[string]struct {
		states       []State
		wantTotal    map[string]int
		wantNotReady []NotReady
	}{
		"no objects: every kind counted 0, nothing not Ready": {
			wantTotal: map[string]int{"PodElasticIP": 0, "FloatIPPool": 0},
		},
		"Ready objects are counted, not grouped": {
			states:    []State{{Kind: "PodElasticIP", Ready: "True", Reason: "Available", Since: at(1)}},
			wantTotal: map[string]int{"PodElasticIP": 1, "FloatIPPool": 0},
		},
		"grouped by kind and reason, the earliest spell kept": {
			states: []State{
				{Kind: "PodElasticIP", Ready: "False", Reason: "QuotaExceeded", Since: at(5)},
				{Kind: "PodElasticIP", Ready: "False", Reason: "QuotaExceeded", Since: at(2)},
				{Kind: "PodElasticIP", Ready: "False", Reason: "PodNotFound", Since: at(9)},
				{Kind: "FloatIPPool", Ready: "False", Reason: "Exhausted", Since: at(3)},
			},
			wantTotal: map[string]int{"PodElasticIP": 3, "FloatIPPool": 1},
			wantNotReady: []NotReady{
				{Kind: "FloatIPPool", Reason: "Exhausted", Count: 1, Since: at(3)},
				{Kind: "PodElasticIP", Reason: "PodNotFound", Count: 1, Since: at(9)},
				{Kind: "PodElasticIP", Reason: "QuotaExceeded", Count: 2, Since: at(2)},
			},
		},
		"no Ready condition is NoStatus, Unknown keeps its reason, a stale True is Progressing": {
			states: []State{
				{Kind: "FloatIPPool", Since: at(1)},
				{Kind: "FloatIPPool", Ready: "Unknown", Reason: "Creating", Since: at(2)},
				{Kind: "FloatIPPool", Ready: "True", Reason: "Available", Stale: true, Since: at(3)},
				{Kind: "FloatIPPool", Ready: "False", Stale: true, Since: at(4)},
			},
			wantTotal: map[string]int{"PodElasticIP": 0, "FloatIPPool": 4},
			wantNotReady: []NotReady{
				{Kind: "FloatIPPool", Reason: "Creating", Count: 1, Since: at(2)},
				{Kind: "FloatIPPool", Reason: "NoStatus", Count: 2, Since: at(1)},
				{Kind: "FloatIPPool", Reason: "Progressing", Count: 1, Since: at(3)},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			total, notReady := Summarize([]string{"PodElasticIP", "FloatIPPool"}, tc.states)
			if diff := cmp.Diff(tc.wantTotal, total); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotReady, notReady); diff != "" {
				t.Errorf("not Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRolloutAndFloorOf(t *testing.T) {
	ids := &appsv1alpha1.IngressDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ing", Name: "nginx"}}
	ids.Status.DesiredNodes, ids.Status.UpdatedNodes, ids.Status.AvailableNodes = 5, 2, 4
	ids.Status.Conditions = []metav1.Condition{{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionTrue, Reason: appsv1alpha1.ReasonRollingUpdate}}
	if got, want := RolloutOf(ids), (Rollout{Namespace: "ing", Name: "nginx", InProgress: true, Desired: 5, Updated: 2, Available: 4}); got != want {
		t.Errorf("RolloutOf = %+v, want %+v", got, want)
	}
	ids.Status.Conditions[0].Status, ids.Status.Conditions[0].Reason = metav1.ConditionFalse, appsv1alpha1.ReasonRolloutPaused
	if RolloutOf(ids).InProgress {
		t.Error("a paused rollout (Progressing=False) is in progress")
	}

	bp := &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	bp.Status.LocalReplicas, bp.Status.BurstReplicas, bp.Status.PendingReplicas = 1, 3, 2
	if got, want := FloorOf(bp), (Floor{Namespace: "shop", Name: "web", Local: 1, Burst: 3, Pending: 2}); got != want {
		t.Errorf("FloorOf = %+v, want %+v", got, want)
	}
	bp.Status.Conditions = []metav1.Condition{{Type: schedulingv1alpha1.TypeLocalCapacityShort, Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonLocalReplicasWaiting}}
	if !FloorOf(bp).Short {
		t.Error("LocalCapacityShort=True is not a short floor")
	}
}

// TestCollect reads typed objects of both condition families through a
// client and checks the series a scrape gets, and that a kind whose
// controller is off is never read.
func TestCollect(t *testing.T) {
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	created := metav1.NewTime(at(0))
	quota := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", CreationTimestamp: created}}
	quota.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "QuotaExceeded", LastTransitionTime: metav1.NewTime(at(7))})
	fresh := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", CreationTimestamp: metav1.NewTime(at(4))}}
	bound := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-2", CreationTimestamp: created}}
	bound.SetConditions(xpv2.Available())
	ids := &appsv1alpha1.IngressDaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ing", Name: "nginx", Generation: 2, CreationTimestamp: created}}
	ids.Status.DesiredNodes, ids.Status.UpdatedNodes, ids.Status.AvailableNodes = 3, 1, 2
	ids.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "RolloutInProgress", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(at(10))},
		{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionTrue, Reason: "RollingUpdate", ObservedGeneration: 2},
	}
	bp := &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", CreationTimestamp: created}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(quota, fresh, bound, ids, bp).Build()

	// The burstpolicy controller is off: BurstPolicy must not be read.
	src := NewRunnable(c, []string{"podelasticip", "ingressdaemonset"}, logr.Discard()).src
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(src.collect))
	want := `
# HELP edgeplane_ingressdaemonset_nodes Nodes of an IngressDaemonSet by state: desired (matching), updated (running the update revision), available (every replica ready and attached).
# TYPE edgeplane_ingressdaemonset_nodes gauge
edgeplane_ingressdaemonset_nodes{name="nginx",namespace="ing",state="available"} 2
edgeplane_ingressdaemonset_nodes{name="nginx",namespace="ing",state="desired"} 3
edgeplane_ingressdaemonset_nodes{name="nginx",namespace="ing",state="updated"} 1
# HELP edgeplane_ingressdaemonset_rollout_in_progress 1 while an IngressDaemonSet's Progressing condition is True (nodes are being updated), else 0.
# TYPE edgeplane_ingressdaemonset_rollout_in_progress gauge
edgeplane_ingressdaemonset_rollout_in_progress{name="nginx",namespace="ing"} 1
# HELP edgeplane_resources Objects of an edgeplane kind, as the manager's cache holds them.
# TYPE edgeplane_resources gauge
edgeplane_resources{kind="IngressDaemonSet"} 1
edgeplane_resources{kind="PodElasticIP"} 3
# HELP edgeplane_resources_not_ready Objects of a kind whose Ready condition is not True, by its reason (NoStatus: no Ready condition yet; Progressing: the condition describes an older generation).
# TYPE edgeplane_resources_not_ready gauge
edgeplane_resources_not_ready{kind="IngressDaemonSet",reason="RolloutInProgress"} 1
edgeplane_resources_not_ready{kind="PodElasticIP",reason="NoStatus"} 1
edgeplane_resources_not_ready{kind="PodElasticIP",reason="QuotaExceeded"} 1
`
	names := []string{"edgeplane_ingressdaemonset_nodes", "edgeplane_ingressdaemonset_rollout_in_progress", "edgeplane_resources", "edgeplane_resources_not_ready", "edgeplane_burstpolicy_replicas", "edgeplane_burstpolicy_local_floor_short"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	since := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "edgeplane_resources_not_ready_since_timestamp_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := promtext.Labels(m)
			since[l["kind"]+"/"+l["reason"]] = m.GetGauge().GetValue()
		}
	}
	wantSince := map[string]float64{
		"PodElasticIP/QuotaExceeded":         float64(at(7).Unix()),
		"PodElasticIP/NoStatus":              float64(at(4).Unix()), // its creation
		"IngressDaemonSet/RolloutInProgress": float64(at(10).Unix()),
	}
	if diff := cmp.Diff(wantSince, since); diff != "" {
		t.Errorf("since (-want +got):\n%s", diff)
	}
}

// collectorFunc collects one source, without the process-wide registration.
type collectorFunc func(context.Context, chan<- prometheus.Metric)

func (f collectorFunc) Describe(ch chan<- *prometheus.Desc) { global.Describe(ch) }
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(context.Background(), ch) }
