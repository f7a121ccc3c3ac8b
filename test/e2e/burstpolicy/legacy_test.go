//go:build e2e

package burstpolicy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/bptest"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/localcluster"
)

// poolKey labels and taints the local nodes a scenario keeps to itself.
const poolKey = "pool"

// addPool adds a local node of the given CPU, labelled and tainted
// pool=<name>, so that only the scenario's pods (poolSpec) use it.
func (e *e2e) addPool(t *testing.T, name string, cpu resource.Quantity) {
	t.Helper()
	ctx := waitCtx(t)
	node := "local-" + name
	if err := e.cluster.AddNode(ctx, localcluster.NodeSpec{Name: node, CPU: cpu, Memory: resource.MustParse("16Gi"),
		Labels: map[string]string{poolKey: name}, Taints: []corev1.Taint{{Key: poolKey, Value: name, Effect: corev1.TaintEffectNoSchedule}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.WaitNodeReady(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// poolSpec is podSpec for the pool's node or a virtual node: nowhere else.
func poolSpec(pool string) corev1.PodSpec {
	spec := podSpec()
	spec.Tolerations = []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}}},
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"eklet"}}}},
	}}}}
	return spec
}

// onPool counts running pods on the pool's node and on the virtual node,
// and the others.
func onPool(pool string, pods []corev1.Pod) (local, virtual, other int) {
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Spec.SchedulingGates) != 0:
			other++
		case p.Spec.NodeName == "local-"+pool:
			local++
		case p.Spec.NodeName == virtualNode:
			virtual++
		default:
			other++
		}
	}
	return local, virtual, other
}

// testClusterWide: the legacy global switch on (eks-config, translated to
// governs: AllPods) bursts an unannotated Deployment's replicas that find no
// local room; a restricted pod waits with its reason; the ClusterBurstPolicy
// counts both.
func testClusterWide(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const ns, pool = "cluster-wide", "cw"
	e.addPool(t, pool, resource.MustParse("1")) // room for one replica
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpPods(t, ns)
		}
	})
	cm := e.createEKSConfig(ctx, t, "true", func(def *schedulingv1alpha1.ClusterBurstPolicy) bool {
		return def.Spec.Governs == schedulingv1alpha1.GovernsAllPods
	})
	def := &schedulingv1alpha1.ClusterBurstPolicy{}

	labels := map[string]string{"app": "cw"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cw", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: poolSpec(pool)},
		},
	}
	if err := e.c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, labels, "1 replica local and 3 on the virtual node, all Running", func(pods []corev1.Pod) bool {
		local, virtual, other := onPool(pool, pods)
		return local == 1 && virtual == 3 && other == 0
	})
	t.Logf("placement: %s", describe(pods))
	for _, p := range pods {
		if p.Spec.NodeName == virtualNode && (p.Labels[schedulingv1alpha1.LabelBurst] != "true" || p.Annotations[schedulingv1alpha1.AnnotationBurstPolicy] != schedulingv1alpha1.ClusterWideBurstMark) {
			t.Errorf("burst pod %s lacks the cluster-wide marks: labels %v annotations %v", p.Name, p.Labels, p.Annotations)
		}
	}

	// A restricted pod with no local room waits, with its reason.
	restricted := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "reserved-port", Namespace: ns}, Spec: poolSpec(pool)}
	restricted.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 61000}}
	if err := e.c.Create(ctx, restricted); err != nil {
		t.Fatal(err)
	}
	e.waitFor(ctx, t, "the restricted pod to carry its reason and an Event", func() (bool, string) {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(restricted), p); err != nil {
			return false, err.Error()
		}
		evs := &eventsv1.EventList{}
		if err := e.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		ev := slices.ContainsFunc(evs.Items, func(ev eventsv1.Event) bool {
			return ev.Regarding.Name == p.Name && ev.Reason == schedulingv1alpha1.NotBurstableReservedPort
		})
		return p.Annotations[schedulingv1alpha1.AnnotationNotBurstable] == schedulingv1alpha1.NotBurstableReservedPort && ev && p.Spec.NodeName == "",
			fmt.Sprintf("node %q annotations %v event %v", p.Spec.NodeName, p.Annotations, ev)
	})

	// kubectl get cbp shows what it governs.
	e.waitFor(ctx, t, "the ClusterBurstPolicy to count 3 burst and 1 refused", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
			return false, err.Error()
		}
		s := def.Status
		return ptr.Deref(s.BurstPods, -1) == 3 && ptr.Deref(s.NonBurstablePods, -1) == 1 && cond2(s.Conditions, schedulingv1alpha1.TypeBursting).Status == metav1.ConditionTrue,
			fmt.Sprintf("burst %d refused %d conditions %+v", ptr.Deref(s.BurstPods, -1), ptr.Deref(s.NonBurstablePods, -1), s.Conditions)
	})

	// Clean up: the workload goes, the switch goes back to unset.
	for _, o := range []client.Object{deploy, restricted} {
		if err := e.c.Delete(ctx, o, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	e.deleteEKSConfig(ctx, t, cm)
}

// testEveryKind: AUTO_SCALE_EKS / LOCAL_REPLICAS 1 on a ReplicaSet, a Job,
// a CronJob, a bare pod and a kind with a scale subresource: each keeps its
// floor local and bursts the rest at once (a bare pod with LOCAL_REPLICAS 0
// bursts), and no pod is released from the gate un-burst.
func testEveryKind(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const ns, pool = "kinds", "kinds"
	e.addPool(t, pool, resource.MustParse("3500m")) // room for five replicas: floors never wait
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpPods(t, ns)
		}
	})
	legacy := map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}
	template := func(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
		spec := poolSpec(pool)
		spec.RestartPolicy = restart
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: legacy}, Spec: spec}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"kind": "rs"}},
			Template: template(map[string]string{"kind": "rs"}, corev1.RestartPolicyAlways)}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: ns},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3), Template: template(map[string]string{"kind": "job"}, corev1.RestartPolicyNever)}}
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cron", Namespace: ns},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3), Template: template(map[string]string{"kind": "cron"}, corev1.RestartPolicyNever)}}}}
	bare := func(name, floor string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"kind": "pod"},
			Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": floor}}, Spec: poolSpec(pool)}
	}
	widget, err := bptest.NewWidget(ns, "w", 2, legacy)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{rs, job, cron, bare("solo", "0"), bare("home", "1"), widget} {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
	// The Widget's controller: its status names its pods, and it creates
	// them (the webhook gates them; its translated policy decides them).
	if err := unstructured.SetNestedField(widget.Object, "kind=widget", "status", "selector"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Status().Update(ctx, widget); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		tmpl := template(map[string]string{"kind": "widget"}, corev1.RestartPolicyAlways)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i), Namespace: ns, Labels: tmpl.Labels, Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: bptest.WidgetGVK.GroupVersion().String(), Kind: bptest.WidgetGVK.Kind, Name: widget.GetName(), UID: widget.GetUID(), Controller: ptr.To(true)}}},
			Spec: tmpl.Spec}
		if err := e.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	// Long-running replicas: exactly the floor local, the rest burst.
	for _, tc := range []struct {
		kind, policy   string
		local, virtual int
	}{
		{kind: "rs", policy: "replicaset-rs", local: 1, virtual: 2},
		{kind: "widget", policy: "widget-w", local: 1, virtual: 1},
		{kind: "pod", local: 1, virtual: 1}, // pod-home local, pod-solo burst
	} {
		pods := e.waitPods(ctx, t, ns, map[string]string{"kind": tc.kind}, fmt.Sprintf("%s: %d local and %d on the virtual node", tc.kind, tc.local, tc.virtual), func(pods []corev1.Pod) bool {
			local, virtual, other := onPool(pool, pods)
			return local == tc.local && virtual == tc.virtual && other == 0
		})
		t.Logf("%s: %s", tc.kind, describe(pods))
		if tc.policy != "" {
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.policy}, &schedulingv1alpha1.BurstPolicy{}); err != nil {
				t.Errorf("%s: translated policy: %v", tc.kind, err)
			}
		}
	}
	// Job pods: kwok completes them, and a completed pod no longer holds
	// the floor, so a later batch may keep one more local. Each of the 3
	// pods is placed (none left at the gate), some locally and some burst.
	jobs := &batchv1.JobList{}
	e.waitFor(ctx, t, "the CronJob's first Job", func() (bool, string) {
		if err := e.c.List(ctx, jobs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, j := range jobs.Items {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "CronJob" {
				return true, j.Name
			}
		}
		return false, fmt.Sprintf("%d jobs", len(jobs.Items))
	})
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(cron), cron); err != nil {
		t.Fatal(err)
	}
	cronPatch := client.MergeFrom(cron.DeepCopy())
	cron.Spec.Suspend = ptr.To(true) // one Job is enough
	if err := e.c.Patch(ctx, cron, cronPatch); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		labels := map[string]string{batchv1.JobNameLabel: j.Name}
		pods := e.waitPods(ctx, t, ns, labels, "Job "+j.Name+": 3 pods placed, locally and on the virtual node", func(pods []corev1.Pod) bool {
			local, virtual := 0, 0
			for _, p := range pods {
				switch {
				case len(p.Spec.SchedulingGates) != 0:
				case p.Spec.NodeName == "local-"+pool:
					local++
				case p.Spec.NodeName == virtualNode:
					virtual++
				}
			}
			return len(pods) == 3 && local+virtual == 3 && local >= 1 && virtual >= 1
		})
		t.Logf("Job %s: %s", j.Name, describe(pods))
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job-" + j.Name}, &schedulingv1alpha1.BurstPolicy{}); err != nil {
			t.Errorf("Job %s: translated policy: %v", j.Name, err)
		}
	}
	solo := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "solo"}, solo); err != nil || solo.Spec.NodeName != virtualNode {
		t.Errorf("the bare pod with LOCAL_REPLICAS 0 is on %q (%v), want the virtual node", solo.Spec.NodeName, err)
	}
	evs := &eventsv1.EventList{}
	if err := e.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == burstpolicy.EventReasonGateReleased {
			t.Errorf("pod %s was released from the gate without a decision: %s", ev.Regarding.Name, ev.Note)
		}
	}
	policies := &schedulingv1alpha1.BurstPolicyList{}
	if err := e.c.List(ctx, policies, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range policies.Items {
		names = append(names, p.Name)
	}
	t.Logf("translated policies: %s", strings.Join(names, ", "))
	for _, want := range []string{"pod-solo", "pod-home", "job-job", "job-cron-"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("no translated policy %s*", want)
		}
	}

	if err := e.c.Delete(ctx, cron); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{rs, job, widget} {
		if err := e.c.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
}

// testTKEScheduler: a Deployment whose pods name tke-scheduler, which no
// longer runs: the webhook moves them to the default scheduler, they run,
// and each says so in an Event.
func testTKEScheduler(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const ns = "tke-scheduler"
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "community"}
	spec := podSpec()
	spec.SchedulerName = "tke-scheduler"
	// Room is on the virtual node only.
	spec.NodeSelector = map[string]string{corev1.LabelInstanceTypeStable: "eklet"}
	spec.Tolerations = []corev1.Toleration{{Key: decide.TencentEKSTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "community", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
	if err := e.c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, labels, "both pods Running under the default scheduler", func(pods []corev1.Pod) bool {
		if len(pods) != 2 {
			return false
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning || p.Spec.SchedulerName != corev1.DefaultSchedulerName ||
				p.Annotations[schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom] != "tke-scheduler" {
				return false
			}
		}
		return true
	})
	e.waitFor(ctx, t, "a SchedulerNameRewritten Event on each pod", func() (bool, string) {
		evs := &eventsv1.EventList{}
		if err := e.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, p := range pods {
			if !slices.ContainsFunc(evs.Items, func(ev eventsv1.Event) bool {
				return ev.Regarding.UID == p.UID && ev.Reason == schedulingv1alpha1.EventReasonSchedulerNameRewritten
			}) {
				missing = append(missing, p.Name)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no Event for %v", missing)
	})
	if err := e.c.Delete(ctx, deploy); err != nil {
		t.Fatal(err)
	}
}
