//go:build e2e

package ingressdaemonset_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// slot is an extended resource every replica requests one of: a node's
// capacity of it decides how many replicas can start there, so the test
// holds the new replicas of a scale-up back for as long as it samples.
const slot corev1.ResourceName = "example.com/ingress-slot"

// TestHealthDuringScaleUp raises replicasPerNode from 2 to 3 together with a
// template change, in detach mode, while every node has room for only two
// replicas: every node wants one replica more than it has ready, and one
// node is detached for its update. The health endpoint of every node is
// sampled throughout: at every sample some node answers 200 (a node that
// serves with at least replicasPerNode − maxUnavailablePodsPerNode ready
// replicas and has no update pending is healthy), and a detached node never
// answers 200. Then the nodes get room for the third replica and the
// rollout completes, still sampled.
func TestHealthDuringScaleUp(t *testing.T) {
	var specs []localcluster.NodeSpec
	for _, n := range []string{"h1", "h2", "h3"} {
		specs = append(specs, localcluster.NodeSpec{Name: n, Labels: edgeLabels,
			ExtendedResources: corev1.ResourceList{slot: resource.MustParse("2")}})
	}
	e := startE2E(t, specs)
	ctx := t.Context()
	one := corev1.ResourceList{slot: resource.MustParse("1")}
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "proxy", Image: "proxy:1",
						Resources: corev1.ResourceRequirements{Requests: one, Limits: one}}},
				},
			},
			ReplicasPerNode: perNode,
			NodeSelector:    edgeLabels,
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxUnavailableNodes:  ptr.To[int32](1),
				AnnotateNodeToDetach: &appsv1alpha1.DetachAnnotation{Key: detachKey, Value: "true", GracePeriodSeconds: 1},
			}},
		},
	}
	if err := e.c.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:1")

	s := e.startHealthSampler(t)
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.ReplicasPerNode = perNode + 1
		ids.Spec.Template.Spec.Containers[0].Image = "proxy:2"
	})
	// Held: every node's third replica is pending and one node is stuck in
	// its update (its new pods do not all fit). Sample that state a while.
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		return e.scaleUpHeld(ctx)
	})
	if err != nil {
		t.Fatalf("the scale-up was not held back on every node: %v; status %+v", err, e.get(t, ctx).Status)
	}
	s.waitSamples(t, 20)

	// Room for the third replica: the scale-up and the rollout complete.
	for _, n := range e.nodes {
		node := &corev1.Node{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: n}, node); err != nil {
			t.Fatal(err)
		}
		before := node.DeepCopy()
		node.Status.Capacity[slot] = resource.MustParse("3")
		node.Status.Allocatable[slot] = resource.MustParse("3")
		if err := e.c.Status().Patch(ctx, node, client.MergeFrom(before)); err != nil {
			t.Fatalf("raising %s's capacity: %v", n, err)
		}
	}
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:2")
	s.stop()
	s.check(t)
}

// scaleUpHeld reports whether every node wants perNode+1 replicas, none has
// more than perNode ready, and one node is in the rollout.
func (e *e2e) scaleUpHeld(ctx context.Context) (bool, error) {
	ids := &appsv1alpha1.IngressDaemonSet{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ids); err != nil {
		return false, err
	}
	if ids.Status.ObservedGeneration != ids.Generation || len(ids.Status.Nodes) != len(e.nodes) {
		return false, nil
	}
	inRollout := 0
	for _, n := range ids.Status.Nodes {
		if n.Replicas != perNode+1 || n.Ready > perNode {
			return false, nil
		}
		if n.Phase != appsv1alpha1.NodePhaseReady {
			inRollout++
		}
	}
	return inRollout == 1, nil
}

// healthSampler samples every node's health endpoint and the nodes' detach
// annotation until stopped.
type healthSampler struct {
	e      *e2e
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	samples int
	// noneHealthy counts samples in which no node answered 200, with the
	// answers of the first such sample.
	noneHealthy int
	firstNone   map[string]string
	// detached200 are 200 answers of nodes annotated as detached both just
	// before and just after the health check, with the answer.
	detached200 []string
	// detachedSeen counts node samples that found a node detached.
	detachedSeen int
}

func (e *e2e) startHealthSampler(t *testing.T) *healthSampler {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &healthSampler{e: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			s.sample(ctx)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return s
}

// detached lists the nodes carrying the detach annotation.
func (e *e2e) detached(ctx context.Context) (map[string]bool, error) {
	var nodes corev1.NodeList
	if err := e.c.List(ctx, &nodes); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		if _, ok := n.Annotations[detachKey]; ok {
			out[n.Name] = true
		}
	}
	return out, nil
}

func (s *healthSampler) sample(ctx context.Context) {
	before, err := s.e.detached(ctx)
	if err != nil {
		return
	}
	codes := map[string]int{}
	bodies := map[string]string{}
	for _, n := range s.e.nodes {
		codes[n], bodies[n] = s.e.healthQuiet(ctx, n)
	}
	after, err := s.e.detached(ctx)
	if err != nil || ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	healthy := 0
	for _, n := range s.e.nodes {
		if codes[n] == http.StatusOK {
			healthy++
		}
		// Detached before and after the check: detached during it.
		if before[n] && after[n] {
			s.detachedSeen++
			if codes[n] == http.StatusOK {
				s.detached200 = append(s.detached200, n+": "+bodies[n])
			}
		}
	}
	if healthy == 0 {
		s.noneHealthy++
		if s.firstNone == nil {
			s.firstNone = bodies
		}
	}
}

// waitSamples waits until n more samples were taken.
func (s *healthSampler) waitSamples(t *testing.T, n int) {
	t.Helper()
	s.mu.Lock()
	want := s.samples + n
	s.mu.Unlock()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.samples >= want, nil
	})
	if err != nil {
		t.Fatalf("the sampler took fewer than %d samples: %v", n, err)
	}
}

func (s *healthSampler) stop() { s.cancel(); <-s.done }

func (s *healthSampler) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples; a node seen detached %d times", s.samples, s.detachedSeen)
	if s.noneHealthy > 0 {
		t.Errorf("%d of %d samples found no healthy node during the scale-up; the first: %v", s.noneHealthy, s.samples, s.firstNone)
	}
	if len(s.detached200) > 0 {
		t.Errorf("a detached node answered 200: %v", s.detached200)
	}
	if s.detachedSeen == 0 {
		t.Error("no sample saw a detached node: the rollout was not sampled")
	}
}
