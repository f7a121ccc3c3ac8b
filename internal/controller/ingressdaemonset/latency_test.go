package ingressdaemonset

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// slowClient is the API server as a pass sees it on a busy cluster: every
// apply takes took on clk; it records the Deployments applied, in order,
// with the phase each was given ("" for none).
type slowClient struct {
	client.Client
	clk  *clocktesting.FakeClock
	took time.Duration

	mu      sync.Mutex
	applied []string
}

func (c *slowClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	err := c.Client.Apply(ctx, obj, opts...)
	if c.clk != nil {
		c.clk.Step(c.took)
	}
	if d, ok := obj.(*appsv1ac.DeploymentApplyConfiguration); ok && err == nil {
		c.mu.Lock()
		c.applied = append(c.applied, *d.Name+" "+d.Labels[appsv1alpha1.LabelPhase])
		c.mu.Unlock()
	}
	return err
}

func (c *slowClient) takeApplied() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.applied
	c.applied = nil
	return out
}

func detachStartedAt(t *testing.T, f *rolloutFixture, node string) time.Time {
	t.Helper()
	v := getDeployment(t, f.ctx, f.ns, f.deployment(node)).Labels[appsv1alpha1.LabelDetachStartedAt]
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("node %s: detach-started-at %q: %v", node, v, err)
	}
	return time.UnixMilli(ms).UTC()
}

// TestSlowWritesKeepTheGraceAndTheRequeue starts two nodes in one pass
// whose writes take a second each. The second node's detachment starts
// when its own write is made, a second after the pass began: its grace
// period runs from there (the node fails its health check only from then
// on), not from the start of the pass. And a pass that plans a wait
// requeues for the moment the wait ends, not for the planned duration
// counted from the end of its writes.
func TestSlowWritesKeepTheGraceAndTheRequeue(t *testing.T) {
	f := newRolloutFixture(t, "slow-writes", []string{"g1", "g2"}, appsv1alpha1.RollingUpdate{
		MaxDegradedNodes:           ptr.To[int32](2),
		AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, Value: "true", GracePeriodSeconds: 3},
	})
	observeMetadataChanges(t, f.ctx, f.ns)
	slow := &slowClient{Client: env.Client, clk: f.clock, took: time.Second}
	f.r.Client = slow
	t0 := f.clock.Now()
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:2" })
	f.reconcile()
	if got, want := detachStartedAt(t, f, "g1"), t0; !got.Equal(want) {
		t.Errorf("g1 detach started at %s, want %s (its write)", got, want)
	}
	if got, want := detachStartedAt(t, f, "g2"), t0.Add(time.Second); !got.Equal(want) {
		t.Errorf("g2 detach started at %s, want %s (its write, after g1's took a second)", got, want)
	}

	// At t0+3.5 s g1's grace is over, g2's (from t0+1 s) is not.
	f.clock.SetTime(t0.Add(3500 * time.Millisecond))
	res, err := f.r.Reconcile(f.ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"g1": "Updating", "g2": "Detaching"}, phases(t, f.ctx, f.get())); diff != "" {
		t.Errorf("phases at t0+3.5s (-want +got):\n%s", diff)
	}
	// g2's wait ends at t0+4 s; g1's update took the pass to t0+4.5 s.
	if res.RequeueAfter != minRequeue {
		t.Errorf("RequeueAfter = %v, want %v: g2's grace ended while the pass wrote", res.RequeueAfter, minRequeue)
	}
}

// TestReattachLandsBeforeTheNextDetach: with a budget of one node, o2 is
// in its update when the template changes again, so o1 (updated before)
// waits outdated. When o2 is rolled out, one pass reattaches o2 and
// detaches o1. o1's name sorts first, but o2's reattachment must land
// first: the other way round two nodes would be detached for a moment.
func TestReattachLandsBeforeTheNextDetach(t *testing.T) {
	f := newRolloutFixture(t, "order", []string{"o1", "o2"}, appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](1)})
	reconcile := func() {
		t.Helper()
		f.reconcile()
		observeMetadataChanges(t, f.ctx, f.ns)
	}
	observeMetadataChanges(t, f.ctx, f.ns)
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:2" })
	// o1 detaches, updates, rolls out and is reattached; o2 detaches and updates.
	for range 6 {
		reconcile()
		f.markUpdatingRolledOut()
		if got := f.inRollout(); len(got) == 1 && got[0] == "o2" && phases(t, f.ctx, f.get())["o2"] == "Updating" {
			break
		}
	}
	if diff := cmp.Diff(map[string]string{"o1": "Ready", "o2": "Updating"}, phases(t, f.ctx, f.get())); diff != "" {
		t.Fatalf("phases before the second change (-want +got):\n%s", diff)
	}
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:3" })
	reconcile() // o2 gets lb:3 at once; o1 waits for the budget
	if diff := cmp.Diff([]string{"o2"}, f.inRollout()); diff != "" {
		t.Fatalf("nodes in the rollout after the second change (-want +got):\n%s", diff)
	}
	rec := &slowClient{Client: env.Client}
	f.r.Client = rec
	f.markUpdatingRolledOut()
	reconcile()
	want := []string{f.deployment("o2") + " ", f.deployment("o1") + " Detaching"}
	if diff := cmp.Diff(want, rec.takeApplied()); diff != "" {
		t.Errorf("writes of the pass that frees o2's place for o1 (-want +got):\n%s", diff)
	}
}

// TestReattachedNodeFreesItsPlaceAtOnce: the reattachment removes the
// detach annotation, which moves the Deployment's generation, and the
// Deployment controller takes a while to observe it. Meanwhile the node's
// status looks stale, yet its pods were not touched and were all updated
// and ready: it must not hold its place in the budget. m1 and m2 roll
// together (budget 2); m1 is reattached (m3 takes its place), then m2 is:
// m4 takes m2's place in that very pass, although the Deployment
// controller has not observed m1's reattachment yet.
func TestReattachedNodeFreesItsPlaceAtOnce(t *testing.T) {
	f := newRolloutFixture(t, "untouched", []string{"m1", "m2", "m3", "m4"}, appsv1alpha1.RollingUpdate{
		MaxDegradedNodes:           ptr.To[int32](2),
		AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, Value: "true", GracePeriodSeconds: 3},
	})
	observeMetadataChanges(t, f.ctx, f.ns)
	check := func(step string, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, f.inRollout()); diff != "" {
			t.Fatalf("%s: nodes in the rollout (-want +got):\n%s", step, diff)
		}
	}
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:2" })
	f.reconcile()
	check("first pass", []string{"m1", "m2"})
	observeMetadataChanges(t, f.ctx, f.ns) // the detach annotations
	f.clock.Step(3 * time.Second)
	f.reconcile() // both updated
	markRolledOut(t, f.ctx, f.ns, f.deployment("m1"))
	f.reconcile()
	check("m1 rolled out", []string{"m2", "m3"})
	m1 := getDeployment(t, f.ctx, f.ns, f.deployment("m1"))
	if m1.Status.ObservedGeneration >= m1.Generation {
		t.Fatalf("m1's reattachment did not move its generation (%d, observed %d); the test needs it to", m1.Generation, m1.Status.ObservedGeneration)
	}
	markRolledOut(t, f.ctx, f.ns, f.deployment("m2"))
	f.reconcile()
	check("m2 rolled out, m1's reattachment not observed yet", []string{"m3", "m4"})
	if n := f.get().Status.AvailableNodes; n != 2 {
		t.Errorf("available nodes = %d, want 2 (m1 and m2)", n)
	}
	// A write that changes the spec does leave the node unknown until the
	// Deployment controller observes it: here replicasPerNode, on every node.
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.ReplicasPerNode = 3 })
	f.reconcile()
	if n := f.get().Status.AvailableNodes; n != 0 {
		t.Errorf("available nodes after a replica change nobody observed = %d, want 0", n)
	}
}

// staleClient serves a pass an IngressDaemonSet as it was before the
// previous pass wrote its status, as a cache that has not caught up does.
type staleClient struct {
	client.Client
	ids *appsv1alpha1.IngressDaemonSet
}

func (c staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if o, ok := obj.(*appsv1alpha1.IngressDaemonSet); ok && key == client.ObjectKeyFromObject(c.ids) {
		c.ids.DeepCopyInto(o)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestStatusOverAStaleCache: a pass that starts before the cache shows
// the previous pass's status write computes its status against that
// write, not against the older copy: compared with the older copy the new
// status may look unchanged (and never be written) or be refused by the
// optimistic lock (and wait a second).
func TestStatusOverAStaleCache(t *testing.T) {
	f := newRolloutFixture(t, "stale-ids", []string{"c1"}, appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](1)})
	observeMetadataChanges(t, f.ctx, f.ns)
	f.reconcile()
	old := f.get()
	setReady(t, f.ctx, f.ns, f.deployment("c1"), 1)
	f.reconcile() // writes 1 ready
	setReady(t, f.ctx, f.ns, f.deployment("c1"), 2)
	f.r.Client = staleClient{Client: env.Client, ids: old}
	res, err := f.r.Reconcile(f.ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter == status.ConflictRequeueAfter {
		t.Errorf("the status write lost the optimistic lock (RequeueAfter %v)", res.RequeueAfter)
	}
	got := f.get().Status
	if len(got.Nodes) != 1 || got.Nodes[0].Ready != 2 || got.AvailableNodes != 1 {
		t.Errorf("status %+v, want c1 with 2 ready and available", got)
	}
}

// countingReader counts the uncached reads of Deployments.
type countingReader struct {
	client.Reader
	mu    sync.Mutex
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*appsv1.Deployment); ok {
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestAdoptionReadsOnce: handing an object's earlier fields to the apply
// field manager needs an uncached read, once per object: the writes of a
// rollout after the first do not wait for one.
func TestAdoptionReadsOnce(t *testing.T) {
	f := newRolloutFixture(t, "adopt-once", []string{"a1"}, appsv1alpha1.RollingUpdate{
		MaxUnavailableNodes:        ptr.To[int32](1),
		AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, Value: "true", GracePeriodSeconds: 3},
	})
	observeMetadataChanges(t, f.ctx, f.ns)
	reader := &countingReader{Reader: env.Client}
	f.r.APIReader = reader
	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:2" })
	f.reconcile() // detach
	f.clock.Step(3 * time.Second)
	f.reconcile() // update
	f.markUpdatingRolledOut()
	f.reconcile() // reattach
	if got := phases(t, f.ctx, f.get())["a1"]; got != "Reattaching" {
		t.Fatalf("a1 is %s, want Reattaching after three passes", got)
	}
	if reader.reads != 1 {
		t.Errorf("%d uncached reads of a1's Deployment for three writes, want 1", reader.reads)
	}
}
