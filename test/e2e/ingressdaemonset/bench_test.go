package ingressdaemonset_test

// BenchmarkRollout50Nodes (run by `make bench`, never a test) measures a
// rollout over 50 kwok nodes with maxDegradedNodes 5 and a 2 s detach grace
// period against the ideal: batches × (grace + time for a batch of nodes'
// pods to be replaced and ready). That time is calibrated on the same
// cluster with 5 plain Deployments of the per-node shape updated together,
// without edgeplane (the time for one such Deployment alone is reported too).

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

const (
	benchNodes       = 50
	benchMaxDegraded = 5
	benchGrace       = 2 * time.Second
	benchPerNode     = 2
	benchNS          = "bench"
)

// kcmQPS is kube-controller-manager's client rate limit: its default (20)
// makes the Deployment and ReplicaSet controllers the bottleneck of any
// multi-node rollout; EDGEPLANE_BENCH_KCM_QPS overrides it.
var kcmQPS = cmp.Or(os.Getenv("EDGEPLANE_BENCH_KCM_QPS"), "20")

func BenchmarkRollout50Nodes(b *testing.B) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		b.Fatal(err)
	}
	var specs []localcluster.NodeSpec
	for i := range benchNodes {
		specs = append(specs, localcluster.NodeSpec{Name: fmt.Sprintf("n%02d", i), Labels: map[string]string{"bench": "true"}})
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: b.TempDir(), Scheme: scheme, Nodes: specs, StartTimeout: 5 * time.Minute,
		ControllerManagerFlags: []string{"--kube-api-qps=" + kcmQPS, "--kube-api-burst=" + kcmQPS},
	})
	if err != nil {
		b.Fatalf("starting the local cluster: %v", err)
	}
	defer func() { _ = cluster.Stop() }()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	crd := filepath.Join(root, "config", "crd", "bases", "apps.edgeplane.io_ingressdaemonsets.yaml")
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true}); err != nil {
		b.Fatal(err)
	}
	if err := cluster.CreateNamespace(ctx, benchNS); err != nil {
		b.Fatal(err)
	}
	c := cluster.Client()

	podTime, singleTime := calibrate(ctx, b, c)

	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(cluster.RESTConfig(), ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		b.Fatal(err)
	}
	if err := ingressdaemonset.Setup(ctx, mgr, setup.Config{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: benchNS},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench"}},
			Template:        appsv1alpha1.PodTemplate{Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "bench"}}, Spec: podSpec("v0")},
			ReplicasPerNode: benchPerNode,
			NodeSelector:    map[string]string{"bench": "true"},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxDegradedNodes:           ptr.To[int32](benchMaxDegraded),
				AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "apps.edgeplane.io/to-be-updated", GracePeriodSeconds: int32(benchGrace / time.Second)},
			}},
		},
	}
	if err := c.Create(ctx, ids); err != nil {
		b.Fatal(err)
	}
	waitIDS(ctx, b, c)

	batches := (benchNodes + benchMaxDegraded - 1) / benchMaxDegraded
	ideal := time.Duration(batches) * (benchGrace + podTime)
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := retryUpdate(ctx, c, func(o *appsv1alpha1.IngressDaemonSet) { o.Spec.Template.Spec = podSpec(fmt.Sprintf("v%d", i+1)) }); err != nil {
			b.Fatal(err)
		}
		waitIDS(ctx, b, c)
		total += time.Since(start)
	}
	b.StopTimer()
	wall := total / time.Duration(b.N)
	b.ReportMetric(wall.Seconds(), "wall-s/rollout")
	b.ReportMetric(ideal.Seconds(), "ideal-s/rollout")
	b.ReportMetric(podTime.Seconds(), "pod-ready-s/batch")
	b.ReportMetric(singleTime.Seconds(), "pod-ready-s/lone-node")
	b.ReportMetric(float64(wall)/float64(ideal), "wall/ideal")
	// The stricter reading: pod time of one node's Deployment alone, as if
	// the control plane replaced 5 nodes' pods as fast as one node's.
	b.ReportMetric(float64(wall)/float64(time.Duration(batches)*(benchGrace+singleTime)), "wall/ideal-lone")
	phaseTimes(ctx, b, c)
}

// phaseTimes reports where a node's time goes, from the controller's Events.
func phaseTimes(ctx context.Context, b *testing.B, c client.Client) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
		b.Fatal(err)
	}
	at := map[string]map[string]time.Time{} // reason -> node -> last time
	for _, ev := range list.Items {
		if ev.Regarding.Kind != "IngressDaemonSet" || ev.Related == nil {
			continue
		}
		node := strings.TrimPrefix(ev.Related.Name, "bench-")
		if at[ev.Reason] == nil {
			at[ev.Reason] = map[string]time.Time{}
		}
		t := ev.EventTime.Time
		if ev.Series != nil {
			t = ev.Series.LastObservedTime.Time
		}
		if t.After(at[ev.Reason][node]) {
			at[ev.Reason][node] = t
		}
	}
	avg := func(from, to string) time.Duration {
		var sum time.Duration
		n := 0
		for node, t0 := range at[from] {
			if t1, ok := at[to][node]; ok && t1.After(t0) {
				sum += t1.Sub(t0)
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return sum / time.Duration(n)
	}
	b.ReportMetric(avg(appsv1alpha1.EventNodeDetaching, appsv1alpha1.EventNodeUpdating).Seconds(), "detach-to-update-s")
	b.ReportMetric(avg(appsv1alpha1.EventNodeUpdating, appsv1alpha1.EventNodeReattached).Seconds(), "update-to-reattach-s")
}

func podSpec(version string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		Containers:                    []corev1.Container{{Name: "proxy", Image: "proxy:" + version}},
	}
}

// calibrate measures how long one batch of nodes takes to have its pods
// replaced and ready without edgeplane: benchMaxDegraded plain Deployments
// of the per-node shape (2 replicas, maxUnavailable 1, maxSurge 0), one per
// node, updated at the same moment, as a batch of the rollout is. It also
// returns the time for a single such Deployment alone, for reference.
func calibrate(ctx context.Context, b *testing.B, c client.Client) (batch, single time.Duration) {
	names := make([]string, benchMaxDegraded)
	for i := range names {
		names[i] = fmt.Sprintf("calibrate-%d", i)
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: benchNS},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](benchPerNode),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": names[i]}},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": names[i]}}, Spec: podSpec("c0")},
			},
		}
		d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: fmt.Sprintf("n%02d", i)}
		if err := c.Create(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	waitDeployments(ctx, b, c, names)
	roll := func(which []string, image string) time.Duration {
		start := time.Now()
		for _, n := range which {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: n}, d); err != nil {
				b.Fatal(err)
			}
			d.Spec.Template.Spec.Containers[0].Image = image
			if err := c.Update(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
		waitDeployments(ctx, b, c, which)
		return time.Since(start)
	}
	const rounds = 3
	for i := range rounds {
		single += roll(names[:1], fmt.Sprintf("proxy:s%d", i))
		batch += roll(names, fmt.Sprintf("proxy:b%d", i))
	}
	for _, n := range names {
		if err := c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: n}}); err != nil {
			b.Fatal(err)
		}
	}
	return batch / rounds, single / rounds
}

func waitDeployments(ctx context.Context, b *testing.B, c client.Client, names []string) {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: n}, d); err != nil {
				return false, err
			}
			if !ingressdaemonset.DeploymentRolledOut(d) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func waitIDS(ctx context.Context, b *testing.B, c client.Client) {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		o := &appsv1alpha1.IngressDaemonSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: "bench"}, o); err != nil {
			return false, err
		}
		r := meta.FindStatusCondition(o.Status.Conditions, appsv1alpha1.TypeReady)
		return o.Status.ObservedGeneration == o.Generation && r != nil && r.Status == metav1.ConditionTrue &&
			o.Status.UpdatedNodes == benchNodes && o.Status.AvailableNodes == benchNodes, nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func retryUpdate(ctx context.Context, c client.Client, f func(*appsv1alpha1.IngressDaemonSet)) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		o := &appsv1alpha1.IngressDaemonSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: "bench"}, o); err != nil {
			return false, err
		}
		f(o)
		if err := c.Update(ctx, o); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
}
