package ingressdaemonset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/decide"
)

func testIDS(f func(*appsv1alpha1.IngressDaemonSet)) *appsv1alpha1.IngressDaemonSet {
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: "edge", UID: "uid-1", Generation: 1},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i:1"}}},
			},
			ReplicasPerNode: 2,
		},
	}
	if f != nil {
		f(ids)
	}
	return ids
}

func TestDeploymentStrategy(t *testing.T) {
	cases := map[string]struct {
		ru                  *appsv1alpha1.RollingUpdate
		wantUnavail, wantSu string
	}{
		"defaults":                {wantUnavail: "1", wantSu: "0"},
		"detach mode":             {ru: &appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](1)}, wantUnavail: "100%", wantSu: "0"},
		"explicit in detach mode": {ru: &appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](1), MaxUnavailablePodsPerNode: ptr.To(intstr.FromInt32(1))}, wantUnavail: "1", wantSu: "0"},
		"explicit":                {ru: &appsv1alpha1.RollingUpdate{MaxUnavailablePodsPerNode: ptr.To(intstr.FromString("50%")), MaxSurgedPodsPerNode: ptr.To(intstr.FromInt32(1))}, wantUnavail: "50%", wantSu: "1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := deploymentStrategy(testIDS(func(i *appsv1alpha1.IngressDaemonSet) { i.Spec.UpdateStrategy.RollingUpdate = tc.ru }))
			if got := s.RollingUpdate.MaxUnavailable.String(); got != tc.wantUnavail {
				t.Errorf("maxUnavailable = %s, want %s", got, tc.wantUnavail)
			}
			if got := s.RollingUpdate.MaxSurge.String(); got != tc.wantSu {
				t.Errorf("maxSurge = %s, want %s", got, tc.wantSu)
			}
		})
	}
}

func TestPodTemplatePinsEveryAffinityTerm(t *testing.T) {
	userTerm := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}
	ids := testIDS(func(i *appsv1alpha1.IngressDaemonSet) {
		i.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{userTerm, userTerm}},
		}}
	})
	pt := podTemplate(ids, "w1")
	pin := []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"w1"}}}
	for i, term := range pt.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if diff := cmp.Diff(pin, term.MatchFields); diff != "" {
			t.Errorf("term %d not pinned (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(userTerm.MatchExpressions, term.MatchExpressions); diff != "" {
			t.Errorf("term %d lost the user's expressions:\n%s", i, diff)
		}
	}
	if ids.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields != nil {
		t.Error("podTemplate modified the IngressDaemonSet's template")
	}
	if pt.Labels["app"] != "ing" || pt.Labels[appsv1alpha1.LabelNode] != "w1" || pt.Labels[appsv1alpha1.LabelIngressDaemonSet] != "ing" {
		t.Errorf("pod labels %v", pt.Labels)
	}
}

func TestRevision(t *testing.T) {
	a := testIDS(nil).Spec.Template
	b := testIDS(nil).Spec.Template
	if Revision(a) != Revision(b) {
		t.Fatal("equal templates have different revisions")
	}
	b.Spec.Containers[0].Image = "i:2"
	if Revision(a) == Revision(b) {
		t.Fatal("different templates have the same revision")
	}
}

func TestSyncDeploymentKeepsOldTemplate(t *testing.T) {
	ids := testIDS(nil)
	d := newDeployment(ids, "w1", Revision(ids.Spec.Template))
	if syncDeployment(ids, d, "w1", Revision(ids.Spec.Template), false) {
		t.Fatal("an in-sync Deployment was changed")
	}
	ids.Spec.Template.Spec.Containers[0].Image = "i:2"
	ids.Spec.ReplicasPerNode = 3
	if !syncDeployment(ids, d, "w1", Revision(ids.Spec.Template), false) {
		t.Fatal("a replicas change was not applied")
	}
	if *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Image != "i:1" {
		t.Fatalf("replicas %d image %s: want 3 and the old template kept", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
}

func deploymentAt(rev string, phase appsv1alpha1.NodePhase, ready int32) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{}, Annotations: map[string]string{appsv1alpha1.AnnotationRevision: rev}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: ready, Replicas: 2, UpdatedReplicas: 2},
	}
	if phase != appsv1alpha1.NodePhaseReady {
		d.Labels[appsv1alpha1.LabelPhase] = string(phase)
	}
	return d
}

// TestDeploymentReadiness: what the planner is told about a node's
// Deployment: available (every replica ready), partly ready (some), or
// neither (none ready, or a stale status, which says nothing).
func TestDeploymentReadiness(t *testing.T) {
	type readiness struct{ Available, PartlyReady bool }
	cases := map[string]struct {
		ready               int32
		generation, observe int64
		want                readiness
	}{
		"all ready":              {ready: 2, generation: 1, observe: 1, want: readiness{Available: true}},
		"one of two ready":       {ready: 1, generation: 1, observe: 1, want: readiness{PartlyReady: true}},
		"none ready":             {ready: 0, generation: 1, observe: 1},
		"stale, one ready":       {ready: 1, generation: 2, observe: 1},
		"stale, all ready":       {ready: 2, generation: 2, observe: 1},
		"more ready than wanted": {ready: 3, generation: 1, observe: 1, want: readiness{Available: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := deploymentAt("r", appsv1alpha1.NodePhaseReady, tc.ready)
			d.Generation, d.Status.ObservedGeneration = tc.generation, tc.observe
			got := readiness{Available: DeploymentAvailable(d), PartlyReady: DeploymentPartlyReady(d)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	type conds map[string]string // type -> reason
	cases := map[string]struct {
		ids      *appsv1alpha1.IngressDaemonSet
		o        observation
		want     conds
		wantNums [5]int32 // desired, current, updated, ready, available
	}{
		"no nodes": {
			ids:  testIDS(nil),
			o:    observation{revision: "r2"},
			want: conds{"Ready": appsv1alpha1.ReasonNoMatchingNodes, "Progressing": appsv1alpha1.ReasonRolloutComplete, "Degraded": appsv1alpha1.ReasonAsExpected},
		},
		"all done": {
			ids: testIDS(nil),
			o: observation{revision: "r2", nodes: []string{"a", "b"}, deployments: map[string]*appsv1.Deployment{
				"a": deploymentAt("r2", appsv1alpha1.NodePhaseReady, 2), "b": deploymentAt("r2", appsv1alpha1.NodePhaseReady, 2)}},
			want:     conds{"Ready": appsv1alpha1.ReasonAllNodesReady, "Progressing": appsv1alpha1.ReasonRolloutComplete, "Degraded": appsv1alpha1.ReasonAsExpected},
			wantNums: [5]int32{2, 2, 2, 2, 2},
		},
		"rolling": {
			ids: testIDS(nil),
			o: observation{revision: "r2", nodes: []string{"a", "b", "c"}, deployments: map[string]*appsv1.Deployment{
				"a": deploymentAt("r2", appsv1alpha1.NodePhaseUpdating, 1), "b": deploymentAt("r1", appsv1alpha1.NodePhaseReady, 2)}},
			want:     conds{"Ready": appsv1alpha1.ReasonRolloutInProgress, "Reconciling": appsv1alpha1.ReasonRolloutInProgress, "Progressing": appsv1alpha1.ReasonRollingUpdate, "Degraded": appsv1alpha1.ReasonAsExpected},
			wantNums: [5]int32{3, 2, 1, 1, 1},
		},
		"partitioned": {
			ids: testIDS(nil),
			o: observation{revision: "r2", nodes: []string{"a", "b"}, plan: decide.Plan{HeldByPartition: 1}, deployments: map[string]*appsv1.Deployment{
				"a": deploymentAt("r2", appsv1alpha1.NodePhaseReady, 2), "b": deploymentAt("r1", appsv1alpha1.NodePhaseReady, 2)}},
			want:     conds{"Ready": appsv1alpha1.ReasonAllNodesReady, "Progressing": appsv1alpha1.ReasonPartitioned, "Degraded": appsv1alpha1.ReasonAsExpected},
			wantNums: [5]int32{2, 2, 1, 2, 2},
		},
		"paused": {
			ids: testIDS(func(i *appsv1alpha1.IngressDaemonSet) {
				i.Spec.UpdateStrategy.RollingUpdate = &appsv1alpha1.RollingUpdate{Paused: true}
			}),
			o:        observation{revision: "r2", nodes: []string{"a"}, deployments: map[string]*appsv1.Deployment{"a": deploymentAt("r1", appsv1alpha1.NodePhaseReady, 2)}},
			want:     conds{"Ready": appsv1alpha1.ReasonRolloutPaused, "Reconciling": appsv1alpha1.ReasonRolloutPaused, "Progressing": appsv1alpha1.ReasonRolloutPaused, "Degraded": appsv1alpha1.ReasonAsExpected},
			wantNums: [5]int32{1, 1, 0, 1, 1},
		},
		"not ready and degraded": {
			ids: testIDS(nil),
			o: observation{revision: "r2", nodes: []string{"a"}, deployments: map[string]*appsv1.Deployment{"a": deploymentAt("r2", appsv1alpha1.NodePhaseReady, 1)},
				problems: []string{"z", "a"}, degradedReason: appsv1alpha1.ReasonInvalidDetachmentTimestamp},
			want:     conds{"Ready": appsv1alpha1.ReasonNodesNotReady, "Reconciling": appsv1alpha1.ReasonNodesNotReady, "Progressing": appsv1alpha1.ReasonRolloutComplete, "Degraded": appsv1alpha1.ReasonInvalidDetachmentTimestamp},
			wantNums: [5]int32{1, 1, 1, 0, 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			computeStatus(tc.ids, tc.o)
			got := conds{}
			for _, c := range tc.ids.Status.Conditions {
				got[c.Type] = c.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			st := tc.ids.Status
			if gotNums := [5]int32{st.DesiredNodes, st.CurrentNodes, st.UpdatedNodes, st.ReadyNodes, st.AvailableNodes}; gotNums != tc.wantNums {
				t.Errorf("counts desired/current/updated/ready/available = %v, want %v", gotNums, tc.wantNums)
			}
			if d := meta.FindStatusCondition(st.Conditions, appsv1alpha1.TypeDegraded); d.Status == metav1.ConditionTrue && d.Message != "a; z" {
				t.Errorf("Degraded message %q not sorted", d.Message)
			}
		})
	}
}

func TestNodeMatches(t *testing.T) {
	node := func(labels map[string]string, deleting bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
		if deleting {
			n.DeletionTimestamp = &metav1.Time{}
		}
		return n
	}
	edge := map[string]string{"role": "edge", "zone": "a"}
	for _, tc := range []struct {
		name           string
		spec, template map[string]string
		node           *corev1.Node
		want           bool
	}{
		{"no selectors: every node", nil, nil, node(nil, false), true},
		{"no selectors, deleting", nil, nil, node(nil, true), false},
		{"spec selector", map[string]string{"role": "edge"}, nil, node(edge, false), true},
		{"spec selector, other value", map[string]string{"role": "core"}, nil, node(edge, false), false},
		{"template selector", nil, map[string]string{"zone": "a"}, node(edge, false), true},
		{"both", map[string]string{"role": "edge"}, map[string]string{"zone": "a"}, node(edge, false), true},
		{"both, the template's unmet", map[string]string{"role": "edge"}, map[string]string{"zone": "b"}, node(edge, false), false},
		{"one key, two values: nothing", map[string]string{"role": "edge"}, map[string]string{"role": "core"}, node(edge, false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := testIDS(func(i *appsv1alpha1.IngressDaemonSet) {
				i.Spec.NodeSelector, i.Spec.Template.Spec.NodeSelector = tc.spec, tc.template
			})
			if got := NodeMatches(ids, tc.node); got != tc.want {
				t.Errorf("NodeMatches = %v, want %v", got, tc.want)
			}
			// The selector observe lists nodes with says the same of a node
			// not being deleted.
			if got := nodeSelector(ids).Matches(labels.Set(tc.node.Labels)); tc.node.DeletionTimestamp == nil && got != tc.want {
				t.Errorf("nodeSelector(%v) matches %v: %v, want %v", nodeSelector(ids), tc.node.Labels, got, tc.want)
			}
		})
	}
}
