package manager

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// fullContainer sets every field stripContainer considers.
func fullContainer(name string) corev1.Container {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
	return corev1.Container{
		Name: name, Image: "nginx:1.27", Command: []string{"/bin/app"}, Args: []string{"--flag"}, WorkingDir: "/srv",
		Ports:   []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 80}},
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
		Env:     []corev1.EnvVar{{Name: "A", Value: "b"}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), "tke.cloud.tencent.com/eni-ip": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("2Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1"), "kubernetes.io/batteries": resource.MustParse("1")},
			Claims:   []corev1.ResourceClaim{{Name: "gpu"}},
		},
		ResizePolicy:             []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}},
		RestartPolicy:            ptr.To(corev1.ContainerRestartPolicyAlways),
		VolumeMounts:             []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		VolumeDevices:            []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}},
		LivenessProbe:            probe,
		ReadinessProbe:           probe,
		StartupProbe:             probe,
		Lifecycle:                &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		SecurityContext:          &corev1.SecurityContext{Privileged: ptr.To(true)},
		Stdin:                    true, StdinOnce: true, TTY: true,
	}
}

func keptContainer(name string) corev1.Container {
	c := fullContainer(name)
	resources := corev1.ResourceRequirements{
		Requests: c.Resources.Requests,
		Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
		Claims:   []corev1.ResourceClaim{{Name: "gpu"}},
	}
	return corev1.Container{Name: c.Name, Image: c.Image, Ports: c.Ports, Resources: resources,
		LivenessProbe: c.LivenessProbe, ReadinessProbe: c.ReadinessProbe, StartupProbe: c.StartupProbe, RestartPolicy: c.RestartPolicy}
}

func TestStripPod(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "a"},
		Annotations:     map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "auto"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u"}}}
	volumes := []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	virtual := corev1.Toleration{Key: "virtual-kubelet.io/provider", Operator: corev1.TolerationOpExists}
	admission := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	// A toleration of the same key that is not the admission plugin's stays.
	custom := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tolerations := []corev1.Toleration{admission[0], virtual, admission[1], custom}
	spec := func(node string, volumes []corev1.Volume, containers ...corev1.Container) corev1.PodSpec {
		s := corev1.PodSpec{
			NodeName: node, NodeSelector: map[string]string{"zone": "a"}, HostNetwork: true,
			Volumes:         volumes,
			Tolerations:     tolerations,
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "scheduling.edgeplane.io/burst"}},
			ReadinessGates:  []corev1.PodReadinessGate{{ConditionType: "networking.edgeplane.io/ElasticIPReady"}},
			SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}},
			Affinity:        &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
		}
		if len(containers) > 0 {
			s.InitContainers, s.Containers = containers[:1], containers[1:]
			s.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
		}
		return s
	}
	conditions := []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: "networking.edgeplane.io/ElasticIPReady", Status: corev1.ConditionTrue},
	}
	status := func(conds []corev1.PodCondition) corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.0.0.7", PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}}, Conditions: conds}
	}
	// plain drops the extended resources fullContainer sets.
	plain := func(c corev1.Container) corev1.Container {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		return c
	}
	full := func(node string, containers ...corev1.Container) *corev1.Pod {
		in := &corev1.Pod{ObjectMeta: meta, Spec: spec(node, volumes, containers...), Status: status(conditions)}
		in.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}
		in.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", Ready: true, Image: "nginx:1.27"}}
		in.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init"}}
		in.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug"}}
		if node != "" {
			// Read of no bound pod: dropped.
			in.Status.StartTime, in.Status.QOSClass = &metav1.Time{Time: time.Unix(1700000000, 0)}, corev1.PodQOSBurstable
			in.Spec.ServiceAccountName, in.Spec.PriorityClassName = "default", "high"
		}
		return in
	}
	withTolerations := func(s corev1.PodSpec, t []corev1.Toleration) corev1.PodSpec {
		s.Tolerations = t
		return s
	}
	// Only the readiness gate's condition is read of a bound pod.
	read := []corev1.PodCondition{conditions[5]}
	// bound is what stays of a bound pod's spec.
	bound := func(s corev1.PodSpec) corev1.PodSpec {
		return corev1.PodSpec{NodeName: s.NodeName, HostNetwork: s.HostNetwork, ReadinessGates: s.ReadinessGates, SchedulingGates: s.SchedulingGates,
			Tolerations:    []corev1.Toleration{virtual, custom},
			InitContainers: s.InitContainers, Containers: s.Containers, Overhead: s.Overhead}
	}
	for _, tc := range []struct {
		name string
		in   *corev1.Pod
		want *corev1.Pod
	}{{
		name: "pending: everything a burst decision reads stays",
		in:   full("", fullContainer("init"), fullContainer("a"), fullContainer("b")),
		want: &corev1.Pod{ObjectMeta: meta, Spec: spec("", volumes, keptContainer("init"), keptContainer("a"), keptContainer("b")), Status: status(conditions)},
	}, {
		name: "bound, with extended resources: the containers stay, the volumes and the kubelet's conditions go",
		in:   full("n1", fullContainer("init"), fullContainer("a"), fullContainer("b")),
		want: &corev1.Pod{ObjectMeta: meta, Spec: bound(spec("n1", nil, keptContainer("init"), keptContainer("a"), keptContainer("b"))), Status: status(read)},
	}, {
		name: "bound, native resources only: the containers and the overhead go too",
		in:   full("n1", plain(fullContainer("init")), plain(fullContainer("a"))),
		want: &corev1.Pod{ObjectMeta: meta, Spec: bound(spec("n1", nil)), Status: status(read)},
	}, {
		name: "bound, only unread conditions (Ready too) and tolerations",
		in: &corev1.Pod{ObjectMeta: meta, Spec: withTolerations(spec("n1", nil, plain(fullContainer("init")), plain(fullContainer("a"))), admission),
			Status: status([]corev1.PodCondition{conditions[0], conditions[1], conditions[2], conditions[4]})},
		want: &corev1.Pod{ObjectMeta: meta, Spec: withTolerations(bound(spec("n1", nil)), nil), Status: status(nil)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stripPod(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stripPod (-want +got):\n%s", diff)
			}
			// Idempotent: a second pass changes nothing.
			again, _ := stripPod(got.(*corev1.Pod).DeepCopy())
			if diff := cmp.Diff(tc.want, again); diff != "" {
				t.Errorf("stripPod twice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStripNode(t *testing.T) {
	kept := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"tke.cloud.tencent.com/need-aia-ip": "true"}, Annotations: map[string]string{"a": "b"}},
			Spec:       corev1.NodeSpec{ProviderID: "qcloud:///ins-1", Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, Unschedulable: true},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			},
		}
	}
	in := kept()
	in.Status.Capacity = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
	in.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"}
	in.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
	}
	in.Status.Images = []corev1.ContainerImage{{Names: []string{"nginx:1.27"}, SizeBytes: 1 << 20}}
	in.Status.VolumesInUse = []corev1.UniqueVolumeName{"v"}
	in.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "v", DevicePath: "/dev/x"}}
	in.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}}
	in.Status.Config = &corev1.NodeConfigStatus{}
	in.Status.RuntimeHandlers = []corev1.NodeRuntimeHandler{{Name: "runc"}}
	in.Status.Features = &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(true)}
	got, err := stripNode(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kept(), got); diff != "" {
		t.Errorf("stripNode (-want +got):\n%s", diff)
	}
}

func TestStripWorkload(t *testing.T) {
	idsOwner := metav1.OwnerReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "IngressDaemonSet", Name: "ing", UID: "u", Controller: ptr.To(true)}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}, Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "tke.cloud.tencent.com/eni-ip-pool": "p"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{fullContainer("a")}},
	}
	deployment := func(owners []metav1.OwnerReference, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", OwnerReferences: owners, Labels: map[string]string{appsv1alpha1.LabelIngressDaemonSet: "ing"}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}, Template: tmpl},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 3},
		}
	}
	statefulSet := func(owners []metav1.OwnerReference, tmpl corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", OwnerReferences: owners},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Template: tmpl, VolumeClaimTemplates: claims},
		}
	}
	claims := []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	bare := corev1.PodTemplateSpec{ObjectMeta: template.ObjectMeta}
	notController := idsOwner
	notController.Controller = nil
	otherGroup := idsOwner
	otherGroup.APIVersion = "ingressdaemonsets.mumoshu.github.io/v1alpha1"

	tests := []struct {
		name    string
		in, out client.Object
	}{
		{"a user's Deployment keeps only its template's metadata, even with edgeplane's label", deployment(nil, template), deployment(nil, bare)},
		{"an owner that is not the controller does not either", deployment([]metav1.OwnerReference{notController}, template), deployment([]metav1.OwnerReference{notController}, bare)},
		{"nor a legacy IngressDaemonSet", deployment([]metav1.OwnerReference{otherGroup}, template), deployment([]metav1.OwnerReference{otherGroup}, bare)},
		{"an IngressDaemonSet's Deployment stays whole", deployment([]metav1.OwnerReference{idsOwner}, template), deployment([]metav1.OwnerReference{idsOwner}, template)},
		{"a user's StatefulSet loses its template spec and claim templates", statefulSet(nil, template, claims), statefulSet(nil, bare, nil)},
		{"an IngressDaemonSet's StatefulSet stays whole", statefulSet([]metav1.OwnerReference{idsOwner}, template, claims), statefulSet([]metav1.OwnerReference{idsOwner}, template, claims)},
		{"a ReplicaSet keeps only its template's metadata", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Template: template}},
			&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Template: bare}}},
		{"a Job keeps only its template's metadata", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Template: template}},
			&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Template: bare}}},
		{"other kinds pass through", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: template}}, &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: template}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stripWorkload(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCacheOptions(t *testing.T) {
	opts := CacheOptions("team-a")
	if diff := cmp.Diff([]string{"team-a"}, slices.Collect(maps.Keys(opts.DefaultNamespaces))); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	if len(CacheOptions("").DefaultNamespaces) != 0 {
		t.Error("no --watch-namespace must watch every namespace")
	}
	for obj, by := range opts.ByObject {
		switch obj.(type) {
		case *appsv1.DaemonSet, *corev1.ServiceAccount, *rbacv1.RoleBinding:
			// The health checkers have a cache of their own, in the
			// platform's namespace; the manager writes no ServiceAccount
			// or RoleBinding.
			t.Errorf("%T: the manager's cache must hold none", obj)
		default:
			if by.Transform == nil || by.Label != nil {
				t.Errorf("%T: want a transform and no selector, got %+v", obj, by)
			}
			// managedFields are dropped by the per-kind transforms too.
			o := obj.DeepCopyObject().(client.Object)
			o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
			out, err := by.Transform(o)
			if err != nil {
				t.Fatal(err)
			}
			if mf := out.(client.Object).GetManagedFields(); mf != nil {
				t.Errorf("%T: managedFields kept: %v", obj, mf)
			}
		}
	}
	if len(opts.ByObject) != 6 {
		t.Errorf("got %d per-kind settings, want 6", len(opts.ByObject))
	}
}

// TestManagerCacheHoldsOnlyWhatControllersRead runs a manager built by New
// against the API server and reads through its cached client.
func TestManagerCacheHoldsOnlyWhatControllersRead(t *testing.T) {
	for _, watchNamespace := range []string{"", "default"} {
		t.Run("watch namespace "+watchNamespace, func(t *testing.T) { testManagerCache(t, watchNamespace) })
	}
}

func testManagerCache(t *testing.T, watchNamespace string) {
	ctx := testenv.Context(t)
	o := testOptions("*")
	o.LeaderElect = false
	o.WatchNamespace = watchNamespace
	suffix := "-all"
	if watchNamespace != "" {
		suffix = "-ns"
	}
	mgr := startCapturedManager(t, ctx, env.Config, o)

	labels := map[string]string{"app": "cache-test"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{fullContainer("a")}}
	podSpec.Containers[0].Ports[0].HostPort = 0
	podSpec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	podSpec.Containers[0].RestartPolicy = nil
	podSpec.Containers[0].ResizePolicy = nil
	podSpec.Containers[0].StartupProbe = nil
	podSpec.Containers[0].VolumeMounts, podSpec.Containers[0].VolumeDevices = nil, nil
	podSpec.Containers[0].Stdin, podSpec.Containers[0].StdinOnce, podSpec.Containers[0].TTY = false, false, false
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cache-test" + suffix, Namespace: "default", Labels: labels}, Spec: podSpec}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"AUTO_SCALE_EKS": "true"}}, Spec: podSpec}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cache-test" + suffix, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cache-test" + suffix}, Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"nginx:1.27"}}}}}
	for _, obj := range []client.Object{pod, dep, node} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}

	cached := mgr.GetClient()
	var gotPod corev1.Pod
	var gotDep appsv1.Deployment
	var gotNode corev1.Node
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return cached.Get(ctx, client.ObjectKeyFromObject(node), &gotNode) == nil &&
			cached.Get(ctx, client.ObjectKeyFromObject(pod), &gotPod) == nil &&
			cached.Get(ctx, client.ObjectKeyFromObject(dep), &gotDep) == nil, nil
	})
	if err != nil {
		t.Fatalf("the cache never showed the objects: %v", err)
	}
	if gotNode.Status.Images != nil {
		t.Errorf("the cached node kept its image list: %v", gotNode.Status.Images)
	}
	c := gotPod.Spec.Containers[0]
	if c.Env != nil || c.EnvFrom != nil || c.Command != nil || c.Args != nil || c.Lifecycle != nil || c.SecurityContext != nil {
		t.Errorf("the cached pod's container kept fields nobody reads: %+v", c)
	}
	if c.Image != "nginx:1.27" || len(c.Ports) != 1 || c.ReadinessProbe == nil || !c.Resources.Requests.Cpu().Equal(resource.MustParse("100m")) {
		t.Errorf("the cached pod's container: got %+v, want its image, port, probe and CPU request", c)
	}
	if gotPod.ManagedFields != nil {
		t.Errorf("the cached pod kept managedFields")
	}
	if len(gotDep.Spec.Template.Spec.Containers) != 0 || gotDep.Spec.Template.Annotations["AUTO_SCALE_EKS"] != "true" {
		t.Errorf("the cached user Deployment: template %+v, want its metadata only", gotDep.Spec.Template)
	}
}

// startCapturedManager builds a manager with New on cfg and o, whose one
// controller only captures the controller-runtime manager, starts it until
// the test ends, and returns the captured manager.
func startCapturedManager(t *testing.T, ctx context.Context, cfg *rest.Config, o Options) ctrl.Manager {
	t.Helper()
	var mgr ctrl.Manager
	capture := Controller{Name: "capture", Setup: func(_ context.Context, m ctrl.Manager, _ setup.Config) error { mgr = m; return nil }}
	m, err := New(ctx, cfg, o, []Controller{capture})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Start(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with: %v", err)
		}
	})
	return mgr
}
