package ingressdaemonset_test

// BenchmarkRollout50Nodes (run by `make bench`, never a test) measures a
// rollout over 50 kwok nodes with maxDegradedNodes 5 and a 2 s detach grace
// period against its floor, ⌈N / k⌉ × T(lone): T(lone) is one node's whole
// cycle (detached, grace, updated, pods ready, reattached) measured on the
// same cluster, by the same manager, with the same settings, as a separate
// one-node IngressDaemonSet rolled alone just before. The budget lets at most
// k nodes be in the rollout at any moment, so the nodes' cycles can be laid
// on k lanes without overlap (an interval graph of depth k is k-colourable);
// one lane carries at least ⌈N / k⌉ cycles one after another, and no node's
// cycle is shorter than a node's alone on a quiet cluster: no rollout of N
// nodes can end sooner, however promptly each node starts once another
// finishes. The time a batch of plain Deployments of the per-node shape
// takes to roll, without edgeplane, is reported too (the control plane's
// share), with the requests kube-controller-manager's Deployment and
// ReplicaSet controllers make per plain Deployment and per node of the
// rollout, and kcm-floor-s: the time the Deployment controller's client
// limit alone needs for N plain Deployments' requests (a per-node
// Deployment asks at least as much), and kcm-contract-s: the same for N
// Deployments rolled by hand the way the detach contract rolls a node's
// (calibrateContract).
//
// It runs twice, on two control planes that differ only in
// kube-controller-manager's client rate limit: its defaults (20 requests
// per second and a burst of 30 per controller; the Deployment and
// ReplicaSet controllers then set the pace of any multi-node rollout, and
// their request rates are reported to show it), and 500 per second, where
// the pace is edgeplane's and the pods'. The manager is edgeplane's own as
// a user runs it: its cache settings and client limits.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/test/bench/scale"
)

const (
	benchNodes       = 50
	benchMaxDegraded = 5
	benchGrace       = 2 * time.Second
	benchPerNode     = 2
	benchNS          = "bench"
	// benchIDS rolls the 50 nodes; loneIDS, with the same settings, the
	// one node loneNode, to measure T(lone).
	benchIDS   = "bench"
	loneIDS    = "lone"
	loneNode   = "lone"
	loneRounds = 3
)

func BenchmarkRollout50Nodes(b *testing.B) {
	for _, kcm := range []struct {
		name  string
		flags []string
		// qps and burst are the client limit the flags give each of
		// kube-controller-manager's controllers.
		qps, burst float64
	}{
		{"kcm-defaults", nil, 20, 30},
		{"kcm-qps-500", []string{"--kube-api-qps=500", "--kube-api-burst=500"}, 500, 500},
	} {
		b.Run(kcm.name, func(b *testing.B) { benchmarkRollout(b, kcm.flags, kcm.qps, kcm.burst) })
	}
}

// benchmarkRollout runs the benchmark on a cluster whose
// kube-controller-manager runs with kcmFlags, which give each of its
// controllers a client limit of qps requests per second and a burst of burst.
func benchmarkRollout(b *testing.B, kcmFlags []string, qps, burst float64) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		b.Fatal(err)
	}
	var specs []localcluster.NodeSpec
	for i := range benchNodes {
		specs = append(specs, localcluster.NodeSpec{Name: fmt.Sprintf("n%02d", i), Labels: map[string]string{"bench": benchIDS}})
	}
	specs = append(specs, localcluster.NodeSpec{Name: loneNode, Labels: map[string]string{"bench": loneIDS}})
	// EDGEPLANE_BENCH_AUDIT=<dir> writes the API server's audit log there
	// (every request's user, verb, object and timing), to see which
	// component makes how many requests per node; it costs the API server
	// CPU, so the figures of such a run are not comparable.
	auditDir := os.Getenv("EDGEPLANE_BENCH_AUDIT")
	var apiFlags []string
	if auditDir != "" {
		policy := filepath.Join(auditDir, "policy.yaml")
		if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived, ResponseStarted]\nrules:\n- level: Metadata\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		apiFlags = []string{"--audit-policy-file=" + policy, "--audit-log-path=" + filepath.Join(auditDir, "audit.log"), "--audit-log-format=json"}
	}
	// EDGEPLANE_BENCH_APISERVER_PROFILE=<file> writes there a CPU profile
	// of the API server over the (first) rollout, to see which requests its
	// CPU goes to.
	apiProfile := os.Getenv("EDGEPLANE_BENCH_APISERVER_PROFILE")
	if apiProfile != "" {
		apiFlags = append(apiFlags, "--profiling=true")
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: b.TempDir(), Scheme: scheme, Nodes: specs, StartTimeout: 5 * time.Minute,
		ControllerManagerFlags: kcmFlags, APIServerFlags: apiFlags,
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
	c, err := client.NewWithWatch(cluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}

	podTime, singleTime, plainReqs := calibrate(ctx, b, c, cluster)
	detach := benchIngressDaemonSet(benchIDS).Spec.UpdateStrategy.RollingUpdate.AnnotateDeploymentToDetach
	contractReqs := calibrateContract(ctx, b, c, cluster, detach.Key, detach.Value)

	// The manager as a user runs it: its client limits and its cache (the
	// transforms drop managedFields, which every pass would copy).
	mcfg := cluster.RESTConfig()
	defaults := manager.DefaultOptions()
	clientlimit.Apply(mcfg, defaults.KubeAPIQPS, defaults.KubeAPIBurst)
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{Scheme: scheme, Cache: manager.CacheOptions(""),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// Each run (-count, and each control plane) has a manager of its own
		// in this one process; the figures read from the shared metrics
		// registry are differences over a rollout.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := ingressdaemonset.Setup(ctx, mgr, setup.Config{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	for _, name := range []string{benchIDS, loneIDS} {
		if err := c.Create(ctx, benchIngressDaemonSet(name)); err != nil {
			b.Fatal(err)
		}
	}
	waitIDS(ctx, b, c, benchIDS, benchNodes)
	waitIDS(ctx, b, c, loneIDS, 1)

	// T(lone): the lone node's cycle, rolled alone on the quiet cluster.
	var loneCycles, loneWalls []time.Duration
	var loneLags []lags
	for i := range loneRounds {
		start := time.Now()
		w := watchDeployments(ctx, b, c, loneIDS)
		roll(ctx, b, c, loneIDS, fmt.Sprintf("l%d", i+1), 1)
		loneWalls = append(loneWalls, time.Since(start))
		cycles := nodeCycles(ctx, b, c, loneIDS, start, 1)
		loneCycles = append(loneCycles, cycles[loneNode].total())
		loneLags = append(loneLags, lagsOf(cycles, w.stop()))
	}
	lone := median(loneCycles)
	batches := (benchNodes + benchMaxDegraded - 1) / benchMaxDegraded
	floor := time.Duration(batches) * lone

	var total time.Duration
	var cycles map[string]cycle
	var start, end time.Time
	cpu0 := cpuTimes(b, cluster)
	passes0, pass0, queued0 := controllerMetrics(b)
	kcm0 := kcmRequests(ctx, b, cluster)
	b.ResetTimer()
	var seen map[string]seenDeployment
	for i := range b.N {
		w := watchDeployments(ctx, b, c, benchIDS)
		if apiProfile != "" && i == 0 {
			defer profileAPIServer(ctx, b, cluster, apiProfile, floor)()
		}
		start = time.Now()
		roll(ctx, b, c, benchIDS, fmt.Sprintf("v%d", i+1), benchNodes)
		end = time.Now()
		total += end.Sub(start)
		b.StopTimer()
		cycles = nodeCycles(ctx, b, c, benchIDS, start, benchNodes)
		seen = w.stop()
		b.StartTimer()
	}
	b.StopTimer()
	if auditDir != "" {
		b.Logf("audit log %s: the rollout ran from %s to %s", auditDir, start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano))
	}
	cpu1 := cpuTimes(b, cluster)
	passes1, pass1, queued1 := controllerMetrics(b)
	kcm1 := kcmRequests(ctx, b, cluster)
	wall := total / time.Duration(b.N)
	b.ReportMetric(wall.Seconds(), "wall-s/rollout")
	b.ReportMetric(lone.Seconds(), "lone-node-s")
	b.ReportMetric(median(loneWalls).Seconds(), "lone-rollout-s")
	b.ReportMetric(floor.Seconds(), "floor-s/rollout")
	b.ReportMetric(float64(wall)/float64(floor), "wall/floor")
	reportCycles(b, cycles, lone, start, end)
	l := lagsOf(cycles, seen)
	b.ReportMetric(l.update.Seconds(), "update-lag-s")
	b.ReportMetric(l.pods.Seconds(), "pods-s")
	b.ReportMetric(l.reattach.Seconds(), "reattach-lag-s")
	slices.SortFunc(loneLags, func(a, b lags) int { return cmp.Compare(a.pods, b.pods) })
	lonel := loneLags[len(loneLags)/2]
	b.ReportMetric(lonel.update.Seconds(), "lone-update-lag-s")
	b.ReportMetric(lonel.pods.Seconds(), "lone-pods-s")
	b.ReportMetric(lonel.reattach.Seconds(), "lone-reattach-lag-s")
	passes := passes1 - passes0
	b.ReportMetric(passes/float64(b.N), "passes/rollout")
	b.ReportMetric((pass1-pass0).Seconds()*1000/passes, "pass-ms")
	b.ReportMetric((queued1-queued0).Seconds()*1000/passes, "queued-ms")
	b.ReportMetric(podTime.Seconds(), "pod-ready-s/batch")
	b.ReportMetric(singleTime.Seconds(), "pod-ready-s/lone-node")
	for name, t0 := range cpu0 {
		b.ReportMetric((cpu1[name]-t0).Seconds()/float64(b.N), "cpu-s/"+name)
	}
	// The last rollout's Events of the Deployment and ReplicaSet
	// controllers; their other requests over all rollouts.
	events := kcmEvents(ctx, b, c, start, end)
	for _, name := range []string{deploymentController, replicaSetController} {
		perRollout := (kcm1[name]-kcm0[name])/float64(b.N) + events[name]
		b.ReportMetric(perRollout/wall.Seconds(), name+"-req/s")
		// Per node, and per roll of a plain Deployment of the per-node
		// shape: load-independent, what the rollout asks of the controller.
		b.ReportMetric(perRollout/benchNodes, name+"-req/node")
		b.ReportMetric(plainReqs[name], "plain-"+name+"-req/deployment")
	}
	// kube-controller-manager's share: its Deployment controller makes
	// every request of every node's Deployment rollout through one client
	// limited to qps (after a burst), and a node's Deployment asks at least
	// what a plain Deployment of the same shape asks (edgeplane's detach
	// and reattach writes add to it). No rollout of the N nodes ends sooner,
	// whatever the budget; where this exceeds the floor, the control plane,
	// not the rollout, sets the pace.
	kcmFloor := max(benchNodes*plainReqs[deploymentController]-burst, 0) / qps
	b.ReportMetric(kcmFloor, "kcm-floor-s")
	b.ReportMetric(kcmFloor/floor.Seconds(), "kcm-floor/floor")
	// The same for N Deployments rolled by hand under the detach contract
	// (calibrateContract), for the busier of the two controllers: what the
	// control plane's limit alone makes such a rollout take, edgeplane or
	// not. Not a floor: its requests are counted one Deployment at a time,
	// and a controller held at its limit merges some status writes (one
	// write for several pods' changes), so a rollout may ask for fewer.
	kcmContract := 0.0
	for _, name := range []string{deploymentController, replicaSetController} {
		b.ReportMetric(contractReqs[name], "contract-"+name+"-req/deployment")
		kcmContract = max(kcmContract, max(benchNodes*contractReqs[name]-burst, 0)/qps)
	}
	b.ReportMetric(kcmContract, "kcm-contract-s")
	b.ReportMetric(wall.Seconds()/kcmContract, "wall/kcm-contract")
}

func benchIngressDaemonSet(name string) *appsv1alpha1.IngressDaemonSet {
	return &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNS},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template:        appsv1alpha1.PodTemplate{Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": name}}, Spec: podSpec("v0")},
			ReplicasPerNode: benchPerNode,
			NodeSelector:    map[string]string{"bench": name},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxDegradedNodes:           ptr.To[int32](benchMaxDegraded),
				AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "apps.edgeplane.io/to-be-updated", GracePeriodSeconds: int32(benchGrace / time.Second)},
			}},
		},
	}
}

// roll changes the template of the IngressDaemonSet name and waits until
// its nodes all run it, ready and attached.
func roll(ctx context.Context, b *testing.B, c client.WithWatch, name, version string, nodes int) {
	if err := retryUpdate(ctx, c, name, func(o *appsv1alpha1.IngressDaemonSet) { o.Spec.Template.Spec = podSpec(version) }); err != nil {
		b.Fatal(err)
	}
	waitIDS(ctx, b, c, name, nodes)
}

// cycle is one node's pass through a rollout, by the controller's Events:
// detached, updated, reattached.
type cycle struct{ detach, update, reattach time.Time }

func (c cycle) total() time.Duration { return c.reattach.Sub(c.detach) }

// nodeCycles reads the cycles of the nodes of the IngressDaemonSet name
// that started after since, waiting until want nodes have one (Events are
// written asynchronously).
func nodeCycles(ctx context.Context, b *testing.B, c client.Client, name string, since time.Time, want int) map[string]cycle {
	var out map[string]cycle
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := c.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
			return false, err
		}
		out = map[string]cycle{}
		for _, ev := range list.Items {
			if ev.Regarding.Kind != "IngressDaemonSet" || ev.Regarding.Name != name || ev.Related == nil {
				continue
			}
			t := ev.EventTime.Time
			if ev.Series != nil {
				t = ev.Series.LastObservedTime.Time
			}
			if t.Before(since) {
				continue
			}
			node := strings.TrimPrefix(ev.Related.Name, name+"-")
			cy := out[node]
			switch ev.Reason {
			case appsv1alpha1.EventNodeDetaching:
				cy.detach = t
			case appsv1alpha1.EventNodeUpdating:
				cy.update = t
			case appsv1alpha1.EventNodeReattached:
				cy.reattach = t
			default:
				continue
			}
			out[node] = cy
		}
		complete := 0
		for _, cy := range out {
			if !cy.detach.IsZero() && !cy.update.IsZero() && cy.reattach.After(cy.detach) {
				complete++
			}
		}
		return complete >= want, nil
	})
	if err != nil {
		b.Fatalf("reading the node cycles of %s: %v", name, err)
	}
	return out
}

// seenDeployment is what a watch saw of one node's Deployment in a
// rollout: when its detachment started (its label) and when it first showed
// every replica updated and ready while Updating.
type seenDeployment struct{ detachStarted, rolledOut time.Time }

type deploymentWatch struct {
	stop func() map[string]seenDeployment
}

// watchDeployments watches the Deployments of the IngressDaemonSet name
// until stop, noting per node what seenDeployment says.
func watchDeployments(ctx context.Context, b *testing.B, c client.WithWatch, name string) deploymentWatch {
	ctx, cancel := context.WithCancel(ctx)
	sel := client.MatchingLabels{appsv1alpha1.LabelIngressDaemonSet: name}
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(benchNS), sel); err != nil {
		b.Fatal(err)
	}
	seen := map[string]seenDeployment{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			w, err := c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(benchNS), sel, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				return
			}
			for ev := range w.ResultChan() {
				d, ok := ev.Object.(*appsv1.Deployment)
				if !ok {
					continue
				}
				now := time.Now()
				rv = d.ResourceVersion
				node := d.Annotations[appsv1alpha1.AnnotationNode]
				sd := seen[node]
				if t, err := strconv.ParseInt(d.Labels[appsv1alpha1.LabelDetachStartedAt], 10, 64); err == nil && sd.detachStarted.IsZero() {
					sd.detachStarted = time.UnixMilli(t)
				}
				if d.Labels[appsv1alpha1.LabelPhase] == string(appsv1alpha1.NodePhaseUpdating) && ingressdaemonset.DeploymentRolledOut(d) && sd.rolledOut.IsZero() {
					sd.rolledOut = now
				}
				seen[node] = sd
			}
			w.Stop()
		}
	}()
	return deploymentWatch{stop: func() map[string]seenDeployment {
		cancel()
		<-done
		return seen
	}}
}

// lags are the mean times the controller took to react to a node's phase
// ending, and the control plane's share in between: from the end of the
// grace period (detachment label + grace) to the update, from the update
// to the node's pods all updated and ready, and from then to the
// reattachment.
type lags struct{ update, pods, reattach time.Duration }

func lagsOf(cycles map[string]cycle, seen map[string]seenDeployment) lags {
	var l lags
	n := 0
	for node, cy := range cycles {
		sd := seen[node]
		if sd.detachStarted.IsZero() || sd.rolledOut.IsZero() {
			continue
		}
		l.update += cy.update.Sub(sd.detachStarted.Add(benchGrace))
		l.pods += sd.rolledOut.Sub(cy.update)
		l.reattach += cy.reattach.Sub(sd.rolledOut)
		n++
	}
	if n > 0 {
		l.update, l.pods, l.reattach = l.update/time.Duration(n), l.pods/time.Duration(n), l.reattach/time.Duration(n)
	}
	return l
}

// reportCycles reports where the rollout's time went: the mean node cycle
// and its two halves, the cycle against the lone node's; the budget's slide
// (from a node's reattachment to the detachment of the node that takes its
// place, the k-th one after it); how long the budget's lanes stood idle
// between the first detachment and the last reattachment, in wall seconds;
// and the time from the template change to the first detachment and from
// the last reattachment to the end.
func reportCycles(b *testing.B, cycles map[string]cycle, lone time.Duration, start, end time.Time) {
	var sum, toUpdate, toReattach time.Duration
	var detaches, reattaches []time.Time
	for _, cy := range cycles {
		sum += cy.total()
		toUpdate += cy.update.Sub(cy.detach)
		toReattach += cy.reattach.Sub(cy.update)
		detaches = append(detaches, cy.detach)
		reattaches = append(reattaches, cy.reattach)
	}
	slices.SortFunc(detaches, time.Time.Compare)
	slices.SortFunc(reattaches, time.Time.Compare)
	n := time.Duration(len(cycles))
	b.ReportMetric((sum / n).Seconds(), "cycle-s")
	b.ReportMetric(float64(sum/n)/float64(lone), "cycle/lone")
	b.ReportMetric((toUpdate / n).Seconds(), "detach-to-update-s")
	b.ReportMetric((toReattach / n).Seconds(), "update-to-reattach-s")
	var slide time.Duration
	for i := range len(detaches) - benchMaxDegraded {
		slide += detaches[i+benchMaxDegraded].Sub(reattaches[i])
	}
	b.ReportMetric(slide.Seconds()/float64(len(detaches)-benchMaxDegraded), "slide-s")
	first, last := detaches[0], reattaches[len(reattaches)-1]
	idle := (benchMaxDegraded*last.Sub(first) - sum) / benchMaxDegraded
	b.ReportMetric(idle.Seconds(), "budget-idle-s")
	b.ReportMetric(first.Sub(start).Seconds(), "start-s")
	b.ReportMetric(end.Sub(last).Seconds(), "end-s")
}

// controllerMetrics reads, from the manager's metrics registry, how many
// passes the controller made and how long they and their queue waits took
// in all.
func controllerMetrics(b *testing.B) (passes float64, pass, queued time.Duration) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "controller_runtime_reconcile_time_seconds":
				if promtext.Labels(m)["controller"] == ingressdaemonset.Name {
					passes += float64(m.GetHistogram().GetSampleCount())
					pass += time.Duration(m.GetHistogram().GetSampleSum() * float64(time.Second))
				}
			case "workqueue_queue_duration_seconds":
				if promtext.Labels(m)["name"] == ingressdaemonset.Name {
					queued += time.Duration(m.GetHistogram().GetSampleSum() * float64(time.Second))
				}
			}
		}
	}
	return passes, pass, queued
}

// profileAPIServer starts a CPU profile of the API server for d, written
// to path when it ends; the function it returns waits for that.
func profileAPIServer(ctx context.Context, b *testing.B, cluster *localcluster.Cluster, path string, d time.Duration) (wait func()) {
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, raw, 0o644)
		}
		if err != nil {
			b.Errorf("profiling the API server: %v", err)
		}
	}()
	return func() { <-done }
}

// The kube-controller-manager controllers whose requests are counted.
const (
	deploymentController = "deployment-controller"
	replicaSetController = "replicaset-controller"
)

// kcmRequests reads from the API server's request counters how many
// requests, but their Events, the Deployment and ReplicaSet controllers
// have made so far. The Deployment controller alone creates and updates
// ReplicaSets and updates Deployment status; the ReplicaSet controller
// alone updates ReplicaSet status and creates pods, and deletes as many
// pods as it creates when a rollout replaces them (its deletions cannot be
// told from kwok's in the counters, so they are counted as its creations).
func kcmRequests(ctx context.Context, b *testing.B, cluster *localcluster.Cluster) map[string]float64 {
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	families, err := promtext.APIServer(ctx, cs.Discovery().RESTClient())
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := promtext.Labels(m)
		n := m.GetCounter().GetValue()
		switch [3]string{l["verb"], l["resource"], l["subresource"]} {
		case [3]string{"POST", "replicasets", ""}, [3]string{"PUT", "replicasets", ""}, [3]string{"PUT", "deployments", "status"}:
			out[deploymentController] += n
		case [3]string{"PUT", "replicasets", "status"}:
			out[replicaSetController] += n
		case [3]string{"POST", "pods", ""}:
			out[replicaSetController] += 2 * n
		}
	}
	return out
}

// kcmEvents counts the Events the Deployment and ReplicaSet controllers
// recorded between start and end, each as often as it occurred (a
// repeated Event is one request per occurrence).
func kcmEvents(ctx context.Context, b *testing.B, c client.Client, start, end time.Time) map[string]float64 {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, ev := range list.Items {
		if t := ev.FirstTimestamp.Time; t.Before(start.Truncate(time.Second)) || t.After(end) {
			continue
		}
		if name := ev.Source.Component; name == deploymentController || name == replicaSetController {
			out[name] += float64(max(ev.Count, 1))
		}
	}
	return out
}

// cpuTimes reads the CPU time used so far by each control-plane process and
// by this one (the manager and the benchmark's client).
func cpuTimes(b *testing.B, cluster *localcluster.Cluster) map[string]time.Duration {
	out := map[string]time.Duration{}
	pids := cluster.PIDs()
	pids["manager"] = os.Getpid()
	for name, pid := range pids {
		t, err := scale.ReadCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = t
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
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
// returns the time for a single such Deployment alone, for reference, and
// the requests (Events included) the Deployment and ReplicaSet controllers
// made per Deployment rolled.
func calibrate(ctx context.Context, b *testing.B, c client.Client, cluster *localcluster.Cluster) (batch, single time.Duration, reqs map[string]float64) {
	names := createPlainDeployments(ctx, b, c, "calibrate")
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
	start, kcm0 := startCounting(ctx, b, cluster)
	const rounds = 3
	for i := range rounds {
		single += roll(names[:1], fmt.Sprintf("proxy:s%d", i))
		batch += roll(names, fmt.Sprintf("proxy:b%d", i))
	}
	// The last Events are written after the last status; wait for them.
	time.Sleep(2 * time.Second)
	kcm1 := kcmRequests(ctx, b, cluster)
	events := kcmEvents(ctx, b, c, start, time.Now())
	rolled := float64(rounds * (1 + len(names)))
	reqs = map[string]float64{}
	for _, name := range []string{deploymentController, replicaSetController} {
		reqs[name] = (kcm1[name] - kcm0[name] + events[name]) / rolled
	}
	for _, n := range names {
		if err := c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: n}}); err != nil {
			b.Fatal(err)
		}
	}
	return batch / rounds, single / rounds, reqs
}

// createPlainDeployments creates benchMaxDegraded plain Deployments of the
// per-node shape (2 replicas, maxUnavailable 1, maxSurge 0), prefix-0 on
// node n00 and so on, and waits until they are rolled out.
func createPlainDeployments(ctx context.Context, b *testing.B, c client.Client, prefix string) []string {
	names := make([]string, benchMaxDegraded)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
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
	return names
}

// calibrateContract returns the requests (Events included) kube-controller-
// manager's Deployment and ReplicaSet controllers make per Deployment of the
// per-node shape rolled the way the detach contract rolls a node's
// Deployment, without edgeplane: the Deployment annotated with
// annotateDeploymentToDetach's annotation, its template changed once the
// Deployment controller has seen that, and the annotation removed once the
// pods are replaced. The annotation changes the Deployment's generation
// (the API server counts annotations as spec for Deployments, because they
// are copied to the ReplicaSets), so the contract itself costs the
// controllers requests a plain roll does not make: a status write each
// time and the copy to the running ReplicaSet. Each Deployment is fresh and
// rolled once, as the benchmark's rollout is the nodes' first, and they are
// rolled one at a time, so no request is a conflict the controllers' own
// contention made: what any controller honouring the contract asks of them
// at least.
func calibrateContract(ctx context.Context, b *testing.B, c client.Client, cluster *localcluster.Cluster, key, value string) map[string]float64 {
	names := createPlainDeployments(ctx, b, c, "contract")
	start, kcm0 := startCounting(ctx, b, cluster)
	for _, n := range names {
		updateDeployment(ctx, b, c, n, func(d *appsv1.Deployment) { metav1.SetMetaDataAnnotation(&d.ObjectMeta, key, value) })
		waitDeploymentsObserved(ctx, b, c, n)
		updateDeployment(ctx, b, c, n, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "proxy:contract" })
		waitDeployments(ctx, b, c, []string{n})
		updateDeployment(ctx, b, c, n, func(d *appsv1.Deployment) { delete(d.Annotations, key) })
		waitDeploymentsObserved(ctx, b, c, n)
	}
	time.Sleep(2 * time.Second)
	kcm1 := kcmRequests(ctx, b, cluster)
	events := kcmEvents(ctx, b, c, start, time.Now())
	reqs := map[string]float64{}
	for _, name := range []string{deploymentController, replicaSetController} {
		reqs[name] = (kcm1[name] - kcm0[name] + events[name]) / float64(len(names))
	}
	for _, n := range names {
		if err := c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: n}}); err != nil {
			b.Fatal(err)
		}
	}
	return reqs
}

// startCounting waits until kube-controller-manager's Deployment and
// ReplicaSet controllers have made no request for a second (a Deployment
// reported rolled out may still get status writes), then on to the next
// whole second (Events carry whole seconds), and returns that moment and
// the controllers' request counts.
func startCounting(ctx context.Context, b *testing.B, cluster *localcluster.Cluster) (time.Time, map[string]float64) {
	last := kcmRequests(ctx, b, cluster)
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, false, func(ctx context.Context) (bool, error) {
		now := kcmRequests(ctx, b, cluster)
		quiet := maps.Equal(now, last)
		last = now
		return quiet, nil
	})
	if err != nil {
		b.Fatalf("waiting for kube-controller-manager to go quiet: %v", err)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	return time.Now(), kcmRequests(ctx, b, cluster)
}

func updateDeployment(ctx context.Context, b *testing.B, c client.Client, name string, change func(*appsv1.Deployment)) {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: name}, d); err != nil {
		b.Fatal(err)
	}
	change(d)
	if err := c.Update(ctx, d); err != nil {
		b.Fatal(err)
	}
}

// waitDeploymentsObserved waits until the Deployment controller has seen
// Deployment name's latest generation.
func waitDeploymentsObserved(ctx context.Context, b *testing.B, c client.Client, name string) {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: name}, d); err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration >= d.Generation, nil
	})
	if err != nil {
		b.Fatal(err)
	}
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

// waitIDS waits until every one of nodes runs the IngressDaemonSet name's
// template, ready and attached. It watches rather than polls: a poller would
// add load of its own to the API server it measures, and up to a poll
// interval to every figure.
func waitIDS(ctx context.Context, b *testing.B, c client.WithWatch, name string, nodes int) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	only := func(opts metav1.ListOptions) *client.ListOptions {
		opts.FieldSelector = "metadata.name=" + name
		return &client.ListOptions{Namespace: benchNS, Raw: &opts}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &appsv1alpha1.IngressDaemonSetList{}
			return list, c.List(ctx, list, only(opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &appsv1alpha1.IngressDaemonSetList{}, only(opts))
		},
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &appsv1alpha1.IngressDaemonSet{}, nil, func(ev watch.Event) (bool, error) {
		o, ok := ev.Object.(*appsv1alpha1.IngressDaemonSet)
		if !ok {
			return false, nil
		}
		r := meta.FindStatusCondition(o.Status.Conditions, appsv1alpha1.TypeReady)
		return o.Status.ObservedGeneration == o.Generation && r != nil && r.Status == metav1.ConditionTrue &&
			o.Status.UpdatedNodes == int32(nodes) && o.Status.AvailableNodes == int32(nodes), nil
	})
	if err != nil {
		b.Fatalf("waiting for IngressDaemonSet %s to roll out: %v", name, err)
	}
}

func retryUpdate(ctx context.Context, c client.Client, name string, f func(*appsv1alpha1.IngressDaemonSet)) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		o := &appsv1alpha1.IngressDaemonSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: name}, o); err != nil {
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
