package ingressdaemonset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// nodeDeployment is a node's Deployment of 2 replicas in phase, its status
// current with ready of them ready and updated.
func nodeDeployment(phase appsv1alpha1.NodePhase, ready int32) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "lb-n1", Namespace: "edge", Generation: 3, ResourceVersion: "10",
			Labels:      map[string]string{},
			Annotations: map[string]string{appsv1alpha1.AnnotationRevision: "r1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "IngressDaemonSet",
				Name: "lb", UID: "ids-1", Controller: ptr.To(true)}}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: ready, ReadyReplicas: ready, AvailableReplicas: ready},
	}
	if phase != appsv1alpha1.NodePhaseReady {
		d.Labels[appsv1alpha1.LabelPhase] = string(phase)
	}
	return d
}

// TestClassifyDeploymentUpdate: which updates of a node's Deployment bring
// a pass at once, which only within statusOnlyDelay, and which none.
func TestClassifyDeploymentUpdate(t *testing.T) {
	const (
		updating  = appsv1alpha1.NodePhaseUpdating
		detaching = appsv1alpha1.NodePhaseDetaching
		ready     = appsv1alpha1.NodePhaseReady
	)
	cases := map[string]struct {
		phase  appsv1alpha1.NodePhase
		ready  int32
		change func(*appsv1.Deployment)
		want   deploymentUpdate
	}{
		"nothing but the resourceVersion": {phase: updating, ready: 1, change: func(d *appsv1.Deployment) { d.ResourceVersion = "11" }, want: ignoreUpdate},
		"available counts and conditions": {phase: ready, ready: 2, change: func(d *appsv1.Deployment) {
			d.Status.AvailableReplicas, d.Status.UnavailableReplicas = 1, 1
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "True"}}
			d.Status.CollisionCount = ptr.To[int32](1)
		}, want: ignoreUpdate},

		// The rollout's own state and the spec, in any phase.
		"phase label":   {phase: updating, ready: 2, change: func(d *appsv1.Deployment) { delete(d.Labels, appsv1alpha1.LabelPhase) }, want: planNow},
		"an annotation": {phase: detaching, ready: 2, change: func(d *appsv1.Deployment) { d.Annotations["x"] = "y" }, want: planNow},
		"the spec": {phase: updating, ready: 1, change: func(d *appsv1.Deployment) {
			d.Generation, d.Spec.Replicas = 4, ptr.To[int32](3)
		}, want: planNow},
		"a Deployment controller's annotation, updating": {phase: updating, ready: 1, change: func(d *appsv1.Deployment) {
			d.Generation, d.Annotations["deployment.kubernetes.io/revision"] = 4, "2"
		}, want: statusOnly},
		"a Deployment controller's annotation, ready": {phase: ready, ready: 2, change: func(d *appsv1.Deployment) {
			d.Generation, d.Annotations["deployment.kubernetes.io/revision"] = 4, "2"
		}, want: planNow}, // its status is no longer current
		"owners":   {phase: ready, ready: 2, change: func(d *appsv1.Deployment) { d.OwnerReferences = nil }, want: planNow},
		"deletion": {phase: ready, ready: 2, change: func(d *appsv1.Deployment) { d.DeletionTimestamp = ptr.To(metav1.Now()) }, want: planNow},

		// A node being updated moves on only once rolled out.
		"updating: a replica replaced":   {phase: updating, ready: 1, change: func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 2 }, want: statusOnly},
		"updating: a replica down":       {phase: updating, ready: 1, change: func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 0 }, want: statusOnly},
		"updating: no longer rolled out": {phase: updating, ready: 2, change: func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, want: planNow},
		"updating: an old pod terminating": {phase: updating, ready: 2, change: func(d *appsv1.Deployment) {
			d.Status.TerminatingReplicas = ptr.To[int32](1)
		}, want: planNow}, // no longer rolled out
		"updating: rolled out": {phase: updating, ready: 1, change: func(d *appsv1.Deployment) {
			d.Status.UpdatedReplicas, d.Status.ReadyReplicas = 2, 2
		}, want: planNow},
		"updating: the controller observed the spec": {phase: updating, ready: 1, change: func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 2 }, want: statusOnly},

		// A detaching node waits for time.
		"detaching: a replica down": {phase: detaching, ready: 2, change: func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, want: statusOnly},

		// Any other node counts against the budget when it is unavailable.
		"ready: a replica down":          {phase: ready, ready: 2, change: func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, want: planNow},
		"ready: the last replica down":   {phase: ready, ready: 1, change: func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 0 }, want: planNow},
		"ready: status stale":            {phase: ready, ready: 2, change: func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 2 }, want: planNow},
		"ready: more replicas than want": {phase: ready, ready: 2, change: func(d *appsv1.Deployment) { d.Status.Replicas = 3 }, want: statusOnly},
		"reattaching: available again": {phase: appsv1alpha1.NodePhaseReattaching, ready: 1, change: func(d *appsv1.Deployment) {
			d.Status.ReadyReplicas = 2
		}, want: planNow},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := nodeDeployment(tc.phase, tc.ready)
			tc.change(n)
			if got := classifyDeploymentUpdate(nodeDeployment(tc.phase, tc.ready), n); got != tc.want {
				t.Errorf("classifyDeploymentUpdate = %v, want %v", got, tc.want)
			}
		})
	}
}

// queued records what a handler enqueued (a fake queue for a unit test).
type queued struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	now   []string
	after []string
}

func (q *queued) Add(r reconcile.Request) { q.now = append(q.now, r.String()) }
func (q *queued) AddAfter(r reconcile.Request, d time.Duration) {
	q.after = append(q.after, r.String()+" "+d.String())
}

// TestDeploymentEvents: the controlling IngressDaemonSet is enqueued at
// once or within statusOnlyDelay, as the update asks; a Deployment of
// nobody's, or of another kind's, enqueues nothing; one handed over
// enqueues both owners.
func TestDeploymentEvents(t *testing.T) {
	ctx := t.Context()
	lb := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "edge", Name: "lb"}}.String()
	updating := nodeDeployment(appsv1alpha1.NodePhaseUpdating, 1)
	replaced := updating.DeepCopy()
	replaced.Status.UpdatedReplicas = 2
	rolledOut := replaced.DeepCopy()
	rolledOut.Status.ReadyReplicas = 2
	orphan := updating.DeepCopy()
	orphan.OwnerReferences = nil
	foreign := updating.DeepCopy()
	foreign.OwnerReferences[0].Kind = "DaemonSet"
	handedOver := updating.DeepCopy()
	handedOver.OwnerReferences[0].Name, handedOver.OwnerReferences[0].UID = "lb2", "ids-2"

	var q queued
	h := deploymentEvents{}
	h.Create(ctx, event.CreateEvent{Object: updating}, &q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: updating, ObjectNew: replaced}, &q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: replaced, ObjectNew: rolledOut}, &q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: replaced, ObjectNew: replaced}, &q)
	h.Create(ctx, event.CreateEvent{Object: orphan}, &q)
	h.Create(ctx, event.CreateEvent{Object: foreign}, &q)
	h.Delete(ctx, event.DeleteEvent{Object: updating}, &q)
	if diff := cmp.Diff([]string{lb, lb, lb}, q.now); diff != "" {
		t.Errorf("enqueued at once (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{lb + " " + statusOnlyDelay.String()}, q.after); diff != "" {
		t.Errorf("enqueued after a delay (-want +got):\n%s", diff)
	}
	q = queued{}
	h.Update(ctx, event.UpdateEvent{ObjectOld: updating, ObjectNew: handedOver}, &q)
	lb2 := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "edge", Name: "lb2"}}.String()
	if diff := cmp.Diff([]string{lb, lb2}, q.now); diff != "" {
		t.Errorf("enqueued for a Deployment handed over (-want +got):\n%s", diff)
	}
}
