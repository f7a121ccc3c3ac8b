//go:build e2e

// Package ingressdaemonset_test runs IngressDaemonSet end to end on the local
// cluster (real kube-scheduler, kube-controller-manager and kwok nodes): 5
// nodes × 2 replicas, node-by-node rollouts in degraded and detach mode
// watched by a sampler that proves the budgets and the detach-before-update
// ordering, a node joining, partition and pause, a manager restart in the
// middle of a rollout, and a replicasPerNode increase with a template change
// (every node partly ready at once) kept within the budget.
package ingressdaemonset_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/healthcheck"
	"github.com/edgeplane/edgeplane/internal/manager"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// waitTimeout only keeps a broken cluster from hanging the run; nothing here
// asserts on durations.
const waitTimeout = 4 * time.Minute

const (
	ns   = "edge"
	name = "ingress"
	// platformNS and checkerSA are where and as whom the health checkers run.
	platformNS = "edgeplane-system"
	checkerSA  = "edgeplane-ingressdaemonset-healthcheck"
	perNode    = 2
	detachKey  = "node-detacher.variant.run/detached"
	depKey     = "apps.edgeplane.io/to-be-updated"
	grace      = 3 // seconds
)

var edgeLabels = map[string]string{"role": "edge"}

type e2e struct {
	cluster *localcluster.Cluster
	c       client.Client
	scheme  *runtime.Scheme
	mgr     *runningManager
	nodes   []string
	// ctx lives as long as the whole test (a subtest's context ends with it).
	ctx context.Context
}

func TestIngressDaemonSet(t *testing.T) {
	var specs []localcluster.NodeSpec
	for _, n := range []string{"w1", "w2", "w3", "w4", "w5"} {
		specs = append(specs, localcluster.NodeSpec{Name: n, Labels: edgeLabels})
	}
	e := startE2E(t, specs)

	steps := []struct {
		name string
		run  func(*testing.T, *e2e)
	}{
		{"5 nodes × 2 replicas become ready, with health DaemonSets", testCreate},
		{"degraded mode: a template change rolls node by node within maxDegradedNodes", testDegradedRollout},
		{"detach mode with a manager restart mid-rollout", testDetachRolloutWithRestart},
		{"a new labelled node gets its Deployment", testNodeJoins},
		{"partition and pause", testPartitionAndPause},
		{"a node deleted in the middle of its update", testNodeRemovedMidUpdate},
		{"detach mode: replicasPerNode raised with a template change stays within maxUnavailableNodes", testScaleUpWithTemplateChange},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, e) }) {
			t.FailNow()
		}
	}
}

// startE2E starts a local cluster with these nodes, installs the
// IngressDaemonSet CRD and the namespace, and runs the manager; all of it
// stops when the test ends.
func startE2E(t *testing.T, specs []localcluster.NodeSpec) *e2e {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{}
	for _, s := range specs {
		e.nodes = append(e.nodes, s.Name)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), Scheme: scheme, Log: testr.New(t), Nodes: specs})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range []string{localcluster.ControllerManager, localcluster.Scheduler, localcluster.Kwok} {
				t.Logf("logs of %s: %s", n, cluster.LogPath(n))
			}
		}
	})
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(root, "config", "crd", "bases", "apps.edgeplane.io_ingressdaemonsets.yaml")
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}
	for _, n := range []string{ns, platformNS} {
		if err := cluster.CreateNamespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// The platform's health checker identity, as the chart makes it.
	if err := cluster.Client().Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: checkerSA}}); err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 0}))
	e.cluster, e.c, e.scheme, e.ctx = cluster, cluster.Client(), scheme, ctx
	e.mgr = startManager(t, e)
	t.Cleanup(func() { e.mgr.stop(t) })
	// Cleanups run last first: the context ends before the manager and the
	// cluster are stopped.
	t.Cleanup(cancel)
	return e
}

// runningManager is an in-process edgeplane manager running only this controller.
type runningManager struct {
	cancel context.CancelFunc
	done   chan error
}

func startManager(t *testing.T, e *e2e) *runningManager {
	t.Helper()
	mgr, err := ctrl.NewManager(e.cluster.RESTConfig(), ctrl.Options{
		Scheme:                 e.scheme,
		Cache:                  manager.CacheOptions(""), // the manager's own cache, transforms included
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// A restart builds the controller again in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	hc := ingressdaemonset.HealthChecker{Image: "edgeplane:e2e", Namespace: platformNS, ServiceAccount: checkerSA}
	if err := (ingressdaemonset.Options{HealthChecker: hc}).Setup()(e.ctx, mgr, setup.Config{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	m := &runningManager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m
}

func (m *runningManager) stop(t *testing.T) {
	t.Helper()
	if m.cancel == nil {
		return
	}
	m.cancel()
	if err := <-m.done; err != nil {
		t.Errorf("manager: %v", err)
	}
	m.cancel = nil
}

func (e *e2e) get(t *testing.T, ctx context.Context) *appsv1alpha1.IngressDaemonSet {
	t.Helper()
	ids := &appsv1alpha1.IngressDaemonSet{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// change applies f to the IngressDaemonSet, retrying on conflicts.
func (e *e2e) change(t *testing.T, ctx context.Context, f func(*appsv1alpha1.IngressDaemonSet)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ids := &appsv1alpha1.IngressDaemonSet{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ids); err != nil {
			return false, err
		}
		f(ids)
		if err := e.c.Update(ctx, ids); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("updating the IngressDaemonSet: %v", err)
	}
}

// waitRolledOut waits until status reports every node updated, ready and
// attached for the current generation, the rollout settled (Progressing
// False: a node reattached in the status's own pass still shows
// Reattaching, Progressing True, until the next pass), and every pod runs
// image.
func (e *e2e) waitRolledOut(t *testing.T, ctx context.Context, nodes int, image string) *appsv1alpha1.IngressDaemonSet {
	t.Helper()
	var last *appsv1alpha1.IngressDaemonSet
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ids := &appsv1alpha1.IngressDaemonSet{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ids); err != nil {
			return false, err
		}
		last = ids
		st := ids.Status
		ready := meta.FindStatusCondition(st.Conditions, appsv1alpha1.TypeReady)
		progressing := meta.FindStatusCondition(st.Conditions, appsv1alpha1.TypeProgressing)
		if st.ObservedGeneration != ids.Generation || ready == nil || ready.Status != metav1.ConditionTrue ||
			progressing == nil || progressing.Status != metav1.ConditionFalse ||
			st.DesiredNodes != int32(nodes) || st.UpdatedNodes != int32(nodes) || st.AvailableNodes != int32(nodes) {
			return false, nil
		}
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			return false, err
		}
		n := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) && p.Spec.Containers[0].Image == image {
				n++
			}
		}
		return n == nodes*int(ids.Spec.ReplicasPerNode), nil
	})
	if err != nil {
		t.Fatalf("rollout to %s did not complete: %v; last status %+v", image, err, last.Status)
	}
	return last
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func testCreate(t *testing.T, e *e2e) {
	ctx := t.Context()
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": name, "team": "edge"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers:                    []corev1.Container{{Name: "proxy", Image: "proxy:1"}},
				},
			},
			ReplicasPerNode:      perNode,
			NodeSelector:         edgeLabels,
			HealthCheckNodePorts: []int32{10080, 10081},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxDegradedNodes:           ptr.To[int32](2),
				AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depKey, Value: "true", GracePeriodSeconds: grace},
			}},
		},
	}
	if err := e.c.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:1")

	// Pods landed on their own node through the real scheduler, with the user's labels kept.
	var pods corev1.PodList
	if err := e.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Labels["team"] != "edge" || p.Labels[appsv1alpha1.LabelNode] != p.Spec.NodeName {
			t.Errorf("pod %s on %s has labels %v", p.Name, p.Spec.NodeName, p.Labels)
		}
	}
	// One health DaemonSet per port, the platform's (in its namespace, as
	// its ServiceAccount), each scheduled on the 5 nodes.
	for _, port := range []int32{10080, 10081} {
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
			ds := &appsv1.DaemonSet{}
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: naming.HealthCheckerName(ns, name, port)}, ds); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			spec := ds.Spec.Template.Spec
			c := spec.Containers[0]
			if !spec.HostNetwork || c.Ports[0].HostPort != port || c.Args[1] != "--port="+strconv.Itoa(int(port)) || c.Image != "edgeplane:e2e" ||
				spec.ServiceAccountName != checkerSA {
				return false, fmt.Errorf("health DaemonSet %s is wrong: %+v", ds.Name, spec)
			}
			return ds.Status.DesiredNumberScheduled == int32(len(e.nodes)) && ds.Status.NumberReady == int32(len(e.nodes)), nil
		})
		if err != nil {
			t.Fatalf("health DaemonSet for port %d: %v", port, err)
		}
	}
	// The health endpoint answers 200 on every node.
	for _, n := range e.nodes {
		if code, body := e.health(t, n); code != http.StatusOK {
			t.Errorf("health of %s = %d %q, want 200", n, code, body)
		}
	}
}

// health runs the health endpoint in this process, pointed at the cluster, for node.
func (e *e2e) health(t *testing.T, node string) (int, string) {
	t.Helper()
	h := healthcheck.Handler(&healthcheck.Checker{Reader: e.c, Namespace: ns, Deployment: naming.DeploymentName(name, node)}, nil, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ok", nil))
	return rec.Code, rec.Body.String()
}

// sampler watches a rollout: it samples pods and every node's health
// endpoint, and records, per node, when the health endpoint first failed,
// when the node's detachment started (the label the controller wrote), and
// when the first pod on it was deleted.
type sampler struct {
	e      *e2e
	nodes  []string
	image  string // the image being rolled out
	mu     sync.Mutex
	maxBad int
	// maxInRollout is the most nodes seen in the rollout (a phase on their
	// Deployment) at once, and worst those nodes.
	maxInRollout int
	worst        []string
	// per node
	first503     map[string]time.Time
	detachStart  map[string]time.Time
	nodeAnnot    map[string]bool
	firstDelete  map[string]time.Time
	deleteBefore map[string]bool // a pod was deleted before any 503 was seen
	samples      int
	cancel       context.CancelFunc
	done         chan struct{}
}

func (e *e2e) startSampler(t *testing.T, image string) *sampler {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &sampler{e: e, nodes: e.nodes, image: image, first503: map[string]time.Time{}, detachStart: map[string]time.Time{},
		nodeAnnot: map[string]bool{}, firstDelete: map[string]time.Time{}, deleteBefore: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	// Deletions are caught by a watch: kwok removes deleted pods within
	// milliseconds, faster than any sampling.
	wc, err := client.NewWithWatch(e.cluster.RESTConfig(), client.Options{Scheme: e.scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns), client.MatchingLabels{"app": name})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.DeletionTimestamp == nil {
				continue
			}
			s.recordDeletion(p)
		}
	}()
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			s.sample(ctx)
			time.Sleep(50 * time.Millisecond)
		}
		<-watched
	}()
	return s
}

func (s *sampler) stop() { s.cancel(); <-s.done }

// recordDeletion notes the first deletion of an old pod on its node.
func (s *sampler) recordDeletion(p *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	node := p.Spec.NodeName
	if p.Spec.Containers[0].Image == s.image || !s.firstDelete[node].IsZero() {
		return
	}
	// The delete request time: deletionTimestamp minus the grace period.
	s.firstDelete[node] = p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	if s.first503[node].IsZero() {
		s.deleteBefore[node] = true
	}
}

func (s *sampler) sample(ctx context.Context) {
	var pods corev1.PodList
	if err := s.e.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		return
	}
	var deps appsv1.DeploymentList
	if err := s.e.c.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		return
	}
	var nodes corev1.NodeList
	if err := s.e.c.List(ctx, &nodes); err != nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	var rolling []string
	for _, d := range deps.Items {
		node := d.Annotations[appsv1alpha1.AnnotationNode]
		if d.Labels[appsv1alpha1.LabelPhase] != "" {
			rolling = append(rolling, node)
		}
		if v := d.Labels[appsv1alpha1.LabelDetachStartedAt]; v != "" {
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil && s.detachStart[node].IsZero() {
				s.detachStart[node] = time.UnixMilli(ms)
			}
		}
	}
	if len(rolling) > s.maxInRollout {
		s.maxInRollout, s.worst = len(rolling), rolling
	}
	for _, n := range nodes.Items {
		if _, ok := n.Annotations[detachKey]; ok {
			s.nodeAnnot[n.Name] = true
		}
	}
	// Health first, so a 503 and a deletion seen in the same sample count
	// as "deletion not preceded by a 503".
	for _, n := range s.nodes {
		if code, _ := s.e.healthQuiet(ctx, n); code == http.StatusServiceUnavailable && s.first503[n].IsZero() {
			s.first503[n] = now
		}
	}
	good := map[string]int{}
	bad := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		node := p.Spec.NodeName
		if p.DeletionTimestamp != nil {
			bad[node] = true
			continue
		}
		if podReady(p) {
			good[node]++
		} else {
			bad[node] = true
		}
	}
	n := 0
	for _, node := range s.nodes {
		if bad[node] || good[node] < perNode {
			n++
		}
	}
	s.maxBad = max(s.maxBad, n)
}

func (e *e2e) healthQuiet(ctx context.Context, node string) (int, string) {
	h := healthcheck.Handler(&healthcheck.Checker{Reader: e.c, Namespace: ns, Deployment: naming.DeploymentName(name, node)}, nil, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/ok", nil))
	return rec.Code, rec.Body.String()
}

// check asserts the invariants over the whole rollout.
func (s *sampler) check(t *testing.T, maxDegraded int, wantNodeAnnotation bool) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples; at most %d nodes degraded at once", s.samples, s.maxBad)
	if s.maxBad > maxDegraded {
		t.Errorf("%d nodes were degraded at once, budget %d", s.maxBad, maxDegraded)
	}
	for _, n := range s.nodes {
		del := s.firstDelete[n]
		if del.IsZero() {
			t.Errorf("node %s: no pod deletion observed", n)
			continue
		}
		if s.deleteBefore[n] || s.first503[n].IsZero() || !s.first503[n].Before(del.Add(time.Second)) {
			t.Errorf("node %s: a pod was deleted (%s) before the health endpoint was seen failing (%s)", n, del, s.first503[n])
		}
		start := s.detachStart[n]
		// deletionTimestamp has second precision (truncated): allow that second.
		if start.IsZero() || del.Add(time.Second).Sub(start) < grace*time.Second {
			t.Errorf("node %s: pod deleted at %s, %s after the detachment started at %s; grace is %ds", n, del, del.Sub(start), start, grace)
		}
		if wantNodeAnnotation && !s.nodeAnnot[n] {
			t.Errorf("node %s was never annotated %s", n, detachKey)
		}
	}
}

func testDegradedRollout(t *testing.T, e *e2e) {
	ctx := t.Context()
	s := e.startSampler(t, "proxy:2")
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) { ids.Spec.Template.Spec.Containers[0].Image = "proxy:2" })
	ids := e.waitRolledOut(t, ctx, len(e.nodes), "proxy:2")
	s.stop()
	s.check(t, 2, false)
	if c := meta.FindStatusCondition(ids.Status.Conditions, appsv1alpha1.TypeProgressing); c == nil || c.Reason != appsv1alpha1.ReasonRolloutComplete {
		t.Errorf("Progressing = %+v, want RolloutComplete", c)
	}
	for _, n := range ids.Status.Nodes {
		if n.Phase != appsv1alpha1.NodePhaseReady || n.Revision != ids.Status.UpdateRevision || n.Ready != perNode {
			t.Errorf("node status %+v", n)
		}
	}
}

func testDetachRolloutWithRestart(t *testing.T, e *e2e) {
	ctx := t.Context()
	s := e.startSampler(t, "proxy:3")
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.Template.Spec.Containers[0].Image = "proxy:3"
		ru := ids.Spec.UpdateStrategy.RollingUpdate
		ru.MaxDegradedNodes = nil
		ru.MaxUnavailableNodes = ptr.To[int32](1)
		ru.AnnotateNodeToDetach = &appsv1alpha1.DetachAnnotation{Key: detachKey, Value: "true", GracePeriodSeconds: grace}
	})
	// Restart the manager once the rollout is under way on some node.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ids := e.get(t, ctx)
		return ids.Status.UpdatedNodes >= 2 && ids.Status.UpdatedNodes < int32(len(e.nodes)), nil
	})
	if err != nil {
		t.Fatalf("rollout did not get under way: %v", err)
	}
	e.mgr.stop(t)
	t.Logf("manager stopped mid-rollout: %+v", e.get(t, ctx).Status.Nodes)
	time.Sleep(time.Second)
	e.mgr = startManager(t, e)
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:3")
	s.stop()
	s.check(t, 1, true)
	var nodes corev1.NodeList
	if err := e.c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if _, ok := n.Annotations[detachKey]; ok {
			t.Errorf("node %s still annotated after the rollout", n.Name)
		}
	}
}

func testNodeJoins(t *testing.T, e *e2e) {
	ctx := t.Context()
	if err := e.cluster.AddNode(ctx, localcluster.NodeSpec{Name: "w6", Labels: edgeLabels}); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.WaitNodeReady(ctx, "w6"); err != nil {
		t.Fatal(err)
	}
	e.nodes = append(e.nodes, "w6")
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:3")
	d := &appsv1.Deployment{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.DeploymentName(name, "w6")}, d); err != nil {
		t.Fatalf("no Deployment for the new node: %v", err)
	}
}

func testPartitionAndPause(t *testing.T, e *e2e) {
	ctx := t.Context()
	// Partition 2: the last two nodes by name keep the old template.
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.Template.Spec.Containers[0].Image = "proxy:4"
		ids.Spec.UpdateStrategy.RollingUpdate.MaxUnavailableNodes = ptr.To[int32](2)
		ids.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2)
	})
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ids := e.get(t, ctx)
		c := meta.FindStatusCondition(ids.Status.Conditions, appsv1alpha1.TypeProgressing)
		return ids.Status.ObservedGeneration == ids.Generation && c != nil && c.Reason == appsv1alpha1.ReasonPartitioned && ids.Status.UpdatedNodes == 4, nil
	})
	if err != nil {
		t.Fatalf("partitioned rollout did not settle: %v; status %+v", err, e.get(t, ctx).Status)
	}
	for _, n := range []string{"w5", "w6"} {
		d := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.DeploymentName(name, n)}, d); err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "proxy:3" {
			t.Errorf("partitioned node %s runs %s, want proxy:3", n, img)
		}
	}
	// Pause, then lift the partition: nothing moves while paused.
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.UpdateStrategy.RollingUpdate.Paused = true
		ids.Spec.UpdateStrategy.RollingUpdate.Partition = nil
	})
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ids := e.get(t, ctx)
		c := meta.FindStatusCondition(ids.Status.Conditions, appsv1alpha1.TypeProgressing)
		return ids.Status.ObservedGeneration == ids.Generation && c != nil && c.Reason == appsv1alpha1.ReasonRolloutPaused, nil
	})
	if err != nil {
		t.Fatalf("pause not reported: %v", err)
	}
	time.Sleep(3 * time.Second) // give a wrongly unpaused controller the chance to move
	ids := e.get(t, ctx)
	if ids.Status.UpdatedNodes != 4 {
		t.Fatalf("paused rollout moved: %d nodes updated", ids.Status.UpdatedNodes)
	}
	for _, n := range ids.Status.Nodes {
		if n.Phase != appsv1alpha1.NodePhaseReady {
			t.Errorf("node %s is %s while paused", n.Node, n.Phase)
		}
	}
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) { ids.Spec.UpdateStrategy.RollingUpdate.Paused = false })
	e.waitRolledOut(t, ctx, len(e.nodes), "proxy:4")
}

func testNodeRemovedMidUpdate(t *testing.T, e *e2e) {
	ctx := t.Context()
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.Template.Spec.Containers[0].Image = "proxy:5"
		ids.Spec.UpdateStrategy.RollingUpdate.MaxUnavailableNodes = ptr.To[int32](1)
		// A long grace keeps the first node detaching while it is deleted.
		ids.Spec.UpdateStrategy.RollingUpdate.AnnotateNodeToDetach.GracePeriodSeconds = 30
	})
	var victim string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		for _, n := range e.get(t, ctx).Status.Nodes {
			if n.Phase == appsv1alpha1.NodePhaseDetaching {
				victim = n.Node
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no node started detaching: %v", err)
	}
	if err := e.cluster.DeleteNode(ctx, victim); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range e.nodes {
		if n != victim {
			left = append(left, n)
		}
	}
	e.nodes = left
	// With the victim gone, the budget frees and the others roll (shorter grace).
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.UpdateStrategy.RollingUpdate.AnnotateNodeToDetach.GracePeriodSeconds = grace
	})
	ids := e.waitRolledOut(t, ctx, len(e.nodes), "proxy:5")
	for _, n := range ids.Status.Nodes {
		if n.Node == victim {
			t.Errorf("deleted node %s still in status", victim)
		}
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.DeploymentName(name, victim)}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment of the deleted node: %v", err)
	}

	// Every phase of the rollouts was reported as an Event.
	var events eventsv1.EventList
	if err := e.c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range events.Items {
		if ev.Regarding.Kind == "IngressDaemonSet" {
			seen[ev.Reason] = true
		}
	}
	for _, r := range []string{appsv1alpha1.EventNodeAdded, appsv1alpha1.EventNodeDetaching, appsv1alpha1.EventNodeUpdating, appsv1alpha1.EventNodeReattached, appsv1alpha1.EventNodeRemoved} {
		if !seen[r] {
			t.Errorf("no %s Event", r)
		}
	}
}

// testScaleUpWithTemplateChange raises replicasPerNode together with a
// template change in detach mode: for a moment every node has fewer ready
// replicas than it now wants (its new replica is starting) while it still
// serves on the others. That must not detach every node at once: at most
// maxUnavailableNodes nodes are ever in the rollout.
func testScaleUpWithTemplateChange(t *testing.T, e *e2e) {
	ctx := t.Context()
	s := e.startSampler(t, "proxy:6")
	e.change(t, ctx, func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.Template.Spec.Containers[0].Image = "proxy:6"
		ids.Spec.ReplicasPerNode = perNode + 1
		ids.Spec.UpdateStrategy.RollingUpdate.MaxUnavailableNodes = ptr.To[int32](1)
	})
	ids := e.waitRolledOut(t, ctx, len(e.nodes), "proxy:6")
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples; at most %d nodes in the rollout at once", s.samples, s.maxInRollout)
	if s.maxInRollout != 1 {
		t.Errorf("%d nodes were in the rollout at once (%v), want exactly maxUnavailableNodes = 1", s.maxInRollout, s.worst)
	}
	for _, n := range ids.Status.Nodes {
		if n.Phase != appsv1alpha1.NodePhaseReady || n.Revision != ids.Status.UpdateRevision || n.Replicas != perNode+1 || n.Ready != perNode+1 {
			t.Errorf("node status %+v, want Ready at the update revision with %d of %d replicas ready", n, perNode+1, perNode+1)
		}
	}
}
