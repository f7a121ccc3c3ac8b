package localcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitTimeout only keeps a broken cluster from hanging the test run; nothing
// here asserts on durations.
const waitTimeout = 3 * time.Minute

const pauseImage = "registry.k8s.io/pause:3.10" // never pulled: kwok runs no containers

// TestLocalCluster starts one cluster and runs the scenarios against it in
// order; the last one stops it. One cluster per package keeps `make test`
// affordable.
func TestLocalCluster(t *testing.T) {
	workers := []string{"kwok-1", "kwok-2"}
	var nodes []NodeSpec
	for _, name := range workers {
		nodes = append(nodes, NodeSpec{Name: name})
	}
	began := time.Now()
	c, err := Start(t.Context(), Options{
		Dir:   t.TempDir(),
		Nodes: nodes,
		Log:   testr.New(t),
	})
	if err != nil {
		t.Fatalf("starting local cluster: %v", err)
	}
	t.Logf("cluster started in %s (dir %s)", time.Since(began).Round(time.Millisecond), c.Dir())
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping cluster: %v", err)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{APIServer, ControllerManager, Scheduler, Kwok} {
				t.Logf("--- tail of %s ---\n%s", name, tailFile(c.LogPath(name), 40))
			}
		}
	})

	t.Run("deployment pods run on kwok nodes", func(t *testing.T) {
		testDeploymentRuns(t, c, workers)
	})
	t.Run("taint keeps pods without toleration off the node", func(t *testing.T) {
		testTaintRespected(t, c)
	})
	t.Run("etcd paused with SIGSTOP and resumed", func(t *testing.T) {
		testEtcdPause(t, c)
	})
	t.Run("stop leaves no process behind", func(t *testing.T) {
		testStopKillsAll(t, c)
	})
}

func testDeploymentRuns(t *testing.T, c *Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	const ns, replicas = "deploy", 8
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "pause"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			// Several pods at once: the first pods of a cluster draw their
			// IPs concurrently (see warmPodIPs).
			Replicas: ptr.To[int32](replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: pauseImage}}},
			},
		},
	}
	if err := c.Client().Create(ctx, deploy); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}

	var pods corev1.PodList
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.Client().List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return false, nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return len(pods.Items) == replicas && running == replicas, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d running pods: %v; pods: %s", replicas, err, describePods(pods.Items))
	}
	ips := map[string]string{}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			t.Errorf("pod %s has no IP", p.Name)
		} else if other, ok := ips[p.Status.PodIP]; ok {
			t.Errorf("pods %s and %s share the IP %s", other, p.Name, p.Status.PodIP)
		}
		ips[p.Status.PodIP] = p.Name
		if !slices.Contains(workers, p.Spec.NodeName) {
			t.Errorf("pod %s runs on %q, want one of the kwok nodes %v", p.Name, p.Spec.NodeName, workers)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s, want Running", p.Name, p.Status.Phase)
		}
	}
}

func testTaintRespected(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	const (
		ns       = "taints"
		nodeName = "tainted-1"
		poolKey  = "edgeplane.test/pool"
	)
	taint := corev1.Taint{Key: "edgeplane.test/dedicated", Value: "e2e", Effect: corev1.TaintEffectNoSchedule}
	if err := c.AddNode(ctx, NodeSpec{
		Name:   nodeName,
		Labels: map[string]string{poolKey: "tainted"},
		Taints: []corev1.Taint{taint},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout) // t.Context() is done by now
		defer cancel()
		if err := c.DeleteNode(ctx, nodeName); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := c.WaitNodeReady(ctx, nodeName); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// Both pods may only go to the tainted node; only one tolerates it.
	intolerant := pinnedPod(ns, "intolerant", poolKey, "tainted")
	tolerant := pinnedPod(ns, "tolerant", poolKey, "tainted")
	tolerant.Spec.Tolerations = []corev1.Toleration{{
		Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect,
	}}
	for _, p := range []*corev1.Pod{intolerant, tolerant} {
		if err := c.Client().Create(ctx, p); err != nil {
			t.Fatalf("creating pod %s: %v", p.Name, err)
		}
	}

	// The scheduler says so explicitly, so this waits for an event rather
	// than for time to pass.
	got, err := waitPod(ctx, c, intolerant, func(p *corev1.Pod) bool {
		cond := podCondition(p, corev1.PodScheduled)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable
	})
	if err != nil {
		t.Fatalf("waiting for %s to be reported unschedulable: %v", intolerant.Name, err)
	}
	if !strings.Contains(podCondition(got, corev1.PodScheduled).Message, "untolerated taint") {
		t.Errorf("unschedulable message = %q, want it to name the untolerated taint",
			podCondition(got, corev1.PodScheduled).Message)
	}

	got, err = waitPod(ctx, c, tolerant, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if err != nil {
		t.Fatalf("waiting for %s to run: %v", tolerant.Name, err)
	}
	if got.Spec.NodeName != nodeName {
		t.Errorf("pod %s runs on %q, want %q", got.Name, got.Spec.NodeName, nodeName)
	}

	// Still off the node now that a tolerating pod has been placed there.
	if err := c.Client().Get(ctx, client.ObjectKeyFromObject(intolerant), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "" {
		t.Errorf("pod %s without toleration was bound to %q", got.Name, got.Spec.NodeName)
	}
}

func testStopKillsAll(t *testing.T, c *Cluster) {
	pids := c.PIDs()
	var names []string
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{ControllerManager, APIServer, Scheduler, Etcd, Kwok}
	sort.Strings(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("running components (-want +got):\n%s", diff)
	}

	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for name, pid := range pids {
		// Signal 0 only checks for existence. Stop reaps its children, so an
		// exited one is gone entirely rather than a zombie.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop (kill -0: %v)", name, pid, err)
		}
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if got := c.PIDs(); len(got) != 0 {
		t.Errorf("PIDs after Stop = %v, want none", got)
	}
}

// pinnedPod is a pause pod that may only run on nodes labelled key=value.
func pinnedPod(ns, name, key, value string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{key: value},
			Containers:   []corev1.Container{{Name: "pause", Image: pauseImage}},
		},
	}
}

// waitPod polls pod until done(pod) holds and returns its last state.
func waitPod(ctx context.Context, c *Cluster, pod *corev1.Pod, done func(*corev1.Pod) bool) (*corev1.Pod, error) {
	got := &corev1.Pod{}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.Client().Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return false, nil
		}
		return done(got), nil
	})
	if err != nil {
		return got, fmt.Errorf("%w; pod: %s", err, describePods([]corev1.Pod{*got}))
	}
	return got, nil
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// describePods summarises pods for failure messages.
func describePods(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "\n  %s: phase=%s node=%q", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, cond := range p.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s(%s: %s)", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	}
	return b.String()
}
