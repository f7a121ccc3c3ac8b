//go:build e2e

// Package burstpolicy_test runs BurstPolicy end to end on the local cluster
// (real kube-scheduler, kube-controller-manager and kwok nodes): one local
// node with room for one replica and one Tencent EKS virtual node.
package burstpolicy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/bptest"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/k8sbin"
	"github.com/edgeplane/edgeplane/internal/localcluster"
	"github.com/edgeplane/edgeplane/internal/manager"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

// waitTimeout only keeps a broken cluster from hanging the run; nothing here
// asserts on durations.
const waitTimeout = 3 * time.Minute

const (
	localNode   = "local-1"
	virtualNode = "eklet-subnet-e2e"
	image       = "nginx" // never pulled: kwok runs no containers
)

// e2e is the shared state of the scenarios.
type e2e struct {
	cluster *localcluster.Cluster
	c       client.Client
}

func TestBurstPolicy(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:    t.TempDir(),
		Scheme: scheme,
		Log:    testr.New(t),
		Nodes: []localcluster.NodeSpec{
			// Room for one 600m replica.
			{Name: localNode, CPU: resource.MustParse("1"), Memory: resource.MustParse("4Gi")},
			{Name: virtualNode, CPU: resource.MustParse("64"), Memory: resource.MustParse("256Gi"),
				Labels: map[string]string{corev1.LabelInstanceTypeStable: "eklet", "eks.tke.cloud.tencent.com/version": "v2"},
				Taints: []corev1.Taint{{Key: decide.TencentEKSTaint, Effect: corev1.TaintEffectNoSchedule}}},
		},
	})
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
			for _, name := range []string{localcluster.ControllerManager, localcluster.Scheduler} {
				t.Logf("logs of %s: %s", name, cluster.LogPath(name))
			}
		}
	})

	paths, err := bptest.CRDPaths()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}

	// A third-party kind with a scale subresource, installed before the
	// manager starts: the translators discover such kinds at start-up.
	if _, err := bptest.InstallWidgetCRD(ctx, cluster.RESTConfig()); err != nil {
		t.Fatal(err)
	}

	// The pod webhook, served by the manager below on loopback with a
	// certificate envtest makes; the configuration mirrors the
	// +kubebuilder:webhook marker of the burstpolicy package.
	whOpts := &envtest.WebhookInstallOptions{
		LocalServingHost:    "127.0.0.1",
		LocalServingCertDir: t.TempDir(),
		MutatingWebhooks:    []*admissionregistrationv1.MutatingWebhookConfiguration{podWebhookConfiguration()},
	}
	if err := whOpts.Install(cluster.RESTConfig()); err != nil {
		t.Fatalf("installing the webhook configuration: %v", err)
	}

	ctrl.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 0}))
	mgr, err := ctrl.NewManager(cluster.RESTConfig(), ctrl.Options{
		Scheme: scheme,
		// The manager's own cache, transforms included: the controllers must
		// work from what it keeps of each pod.
		Cache:                  manager.CacheOptions(""),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: whOpts.LocalServingHost, Port: whOpts.LocalServingPort, CertDir: whOpts.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := burstpolicy.DefaultOptions()
	opts.FloorHandoff = 10 * time.Minute // the rollout below must keep its floor without the hand-off
	if err := opts.Setup(ctx, mgr, setup.Config{}); err != nil {
		t.Fatalf("setting up the controllers: %v", err)
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	startedCtx, cancelStarted := context.WithTimeout(ctx, waitTimeout)
	defer cancelStarted()
	if err := wait.PollUntilContextCancel(startedCtx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	}); err != nil {
		t.Fatalf("waiting for the webhook server: %v", err)
	}

	e := &e2e{cluster: cluster, c: cluster.Client()}
	// The scenarios share the one local slot, so they run in order.
	steps := []struct {
		name string
		run  func(*testing.T, *e2e)
	}{
		{"seed: 4 replicas with LOCAL_REPLICAS 1 end 1 local and 3 virtual", testSeed},
		{"scaling to 3 removes a virtual pod first", testScaleIn},
		{"global off and local unset: nothing bursts", testSwitchedOff},
		{"restricted pods are refused with their reason", testRestrictions},
		{"a rolling update keeps the local floor", testRollingUpdate},
		{"with spare local room, the gated replicas beyond the floor are pinned to the virtual node", testPinned},
		{"rebalancing moves one burst pod home once local room frees; deleting the policy reverts the pods", testRebalanceAndRevert},
		{"cluster-wide: an unannotated Deployment that does not fit locally ends with its excess on the virtual node", testClusterWide},
		{"every workload kind keeps its own LOCAL_REPLICAS floor and no pod is released from the gate un-burst", testEveryKind},
		{"a pod naming tke-scheduler is moved to the default scheduler and runs", testTKEScheduler},
		{"the examples apply and become Ready", testExamples},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, e) }) {
			t.FailNow()
		}
	}
}

const seedNS = "seed"

func seedLabels() map[string]string { return map[string]string{"app": "nginx"} }

func testSeed(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	if err := e.cluster.CreateNamespace(ctx, seedNS); err != nil {
		t.Fatal(err)
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: seedNS, Labels: seedLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: seedLabels()},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: seedLabels(), Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}},
				Spec:       podSpec(),
			},
		},
	}
	if err := e.c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, seedNS, seedLabels(), "1 local and 3 virtual, all Running", func(pods []corev1.Pod) bool {
		local, virtual, running := placement(pods)
		return local == 1 && virtual == 3 && running == 4 && len(pods) == 4
	})
	t.Logf("placement: %s", describe(pods))

	// The translated policy reports it.
	bp := &schedulingv1alpha1.BurstPolicy{}
	e.waitFor(ctx, t, "the translated BurstPolicy to count 1 local and 3 burst", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: seedNS, Name: "deployment-nginx-deployment"}, bp); err != nil {
			return false, err.Error()
		}
		s := bp.Status
		return s.LocalReplicas == 1 && s.BurstReplicas == 3 && s.PendingReplicas == 0, fmt.Sprintf("%+v", s)
	})
	if c := cond(bp, schedulingv1alpha1.TypeBursting); c.Status != metav1.ConditionTrue {
		t.Errorf("Bursting = %+v, want True", c)
	}
}

func testScaleIn(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	// Scale-in order relies on the costs being in place first.
	e.waitPods(ctx, t, seedNS, seedLabels(), "the virtual pods to carry the burst deletion cost", func(pods []corev1.Pod) bool {
		for _, p := range pods {
			if p.Spec.NodeName == virtualNode && p.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost] != decide.BurstDeletionCost {
				return false
			}
		}
		return true
	})
	deploy := &appsv1.Deployment{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: seedNS, Name: "nginx-deployment"}, deploy); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(deploy.DeepCopy())
	deploy.Spec.Replicas = ptr.To[int32](3)
	if err := e.c.Patch(ctx, deploy, patch); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, seedNS, seedLabels(), "3 pods, none terminating", func(pods []corev1.Pod) bool {
		return len(pods) == 3 && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	})
	if local, virtual, _ := placement(pods); local != 1 || virtual != 2 {
		t.Fatalf("after scaling to 3: %d local, %d virtual, want 1 and 2: %s", local, virtual, describe(pods))
	}
}

func testSwitchedOff(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const ns = "switched-off"
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// The legacy global switch, off.
	cm := e.createEKSConfig(ctx, t, "false", func(def *schedulingv1alpha1.ClusterBurstPolicy) bool {
		return def.Spec.Enabled != nil && !*def.Spec.Enabled
	})

	labels := map[string]string{"app": "off"}
	bp := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "off", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			TargetRef: &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "off"},
			Trigger:   schedulingv1alpha1.TriggerUnschedulable,
		},
	}
	if err := e.c.Create(ctx, bp); err != nil {
		t.Fatal(err)
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "off", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()},
		},
	}
	if err := e.c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	e.waitFor(ctx, t, "both pods listed as BurstDisabled", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(bp), bp); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, nb := range bp.Status.NonBurstablePods {
			if nb.Reason == schedulingv1alpha1.NotBurstableDisabled {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%+v", bp.Status)
	})
	if c := cond(bp, schedulingv1alpha1.TypeBursting); c.Reason != schedulingv1alpha1.ReasonBurstDisabled {
		t.Errorf("Bursting = %+v, want reason BurstDisabled", c)
	}
	pods := e.waitPods(ctx, t, ns, labels, "both pods unschedulable and marked BurstDisabled", func(pods []corev1.Pod) bool {
		if len(pods) != 2 {
			return false
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" || p.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != schedulingv1alpha1.NotBurstableDisabled || unschedulable(&p) == nil {
				return false
			}
		}
		return true
	})
	for _, p := range pods {
		if slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == decide.TencentEKSTaint }) {
			t.Errorf("pod %s got the virtual-node toleration although bursting is off", p.Name)
		}
		t.Logf("pod %s stays Pending: %s; %s=%s", p.Name, unschedulable(&p).Message, schedulingv1alpha1.AnnotationNotBurstable, p.Annotations[schedulingv1alpha1.AnnotationNotBurstable])
	}

	// Clean up: the switch goes back to unset, the workload goes.
	if err := e.c.Delete(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	e.deleteEKSConfig(ctx, t, cm)
}

// createEKSConfig creates the legacy kube-system/eks-config with
// AUTO_SCALE_EKS and waits until its translation into the ClusterBurstPolicy
// "default" is done.
func (e *e2e) createEKSConfig(ctx context.Context, t *testing.T, autoScaleEKS string, translated func(*schedulingv1alpha1.ClusterBurstPolicy) bool) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "eks-config", Namespace: "kube-system"}, Data: map[string]string{"AUTO_SCALE_EKS": autoScaleEKS}}
	if err := e.c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	def := &schedulingv1alpha1.ClusterBurstPolicy{}
	e.waitFor(ctx, t, "the eks-config translation", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
			return false, err.Error()
		}
		return translated(def), fmt.Sprintf("%+v", def.Spec)
	})
	return cm
}

// deleteEKSConfig deletes eks-config and waits until the translated
// ClusterBurstPolicy is gone: the switch is back to unset.
func (e *e2e) deleteEKSConfig(ctx context.Context, t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	if err := e.c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.waitFor(ctx, t, "the translated cluster default to go", func() (bool, string) {
		err := e.c.Get(ctx, client.ObjectKey{Name: "default"}, &schedulingv1alpha1.ClusterBurstPolicy{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprint(err)
	})
}

func testRestrictions(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const ns = "restricted"
	for _, n := range []string{ns, "tke-eni-ip-webhook"} {
		if err := e.cluster.CreateNamespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"burst": "restricted"}
	for _, n := range []string{ns, "tke-eni-ip-webhook"} {
		bp := &schedulingv1alpha1.BurstPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "restricted", Namespace: n},
			Spec: schedulingv1alpha1.BurstPolicySpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Enabled:  ptr.To(true),
			},
		}
		if err := e.c.Create(ctx, bp); err != nil {
			t.Fatal(err)
		}
	}
	// A claim bound to a local PV: not a type a virtual node can mount.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "restricted-local"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
			ClaimRef:               &corev1.ObjectReference{Namespace: ns, Name: "data"},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{localNode}}}}}}},
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pv.Name, StorageClassName: ptr.To(""),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	// A DaemonSet whose pod does not fit on the local node.
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"burst": "restricted", "ds": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"burst": "restricted", "ds": "agent"}}, Spec: podSpec()},
		},
	}
	for _, o := range []client.Object{pv, pvc, ds} {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name, namespace string
		mutate          func(*corev1.Pod)
		want            string // "" = bursts
	}{
		{name: "plain", namespace: ns},
		{name: "excluded-namespace", namespace: "tke-eni-ip-webhook", want: schedulingv1alpha1.NotBurstableExcludedNamespace},
		{name: "container-port", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 61000}}
		}, want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "init-container-port", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 63000}}}}
		}, want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "host-port", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 65534}}
		}, want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "probe-port", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(64000)}}}
		}, want: schedulingv1alpha1.NotBurstableReservedProbePort},
		{name: "port-range-sysctl", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: decide.SysctlLocalPortRange, Value: "32768 65000"}}}
		}, want: schedulingv1alpha1.NotBurstableLocalPortRange},
		{name: "fc-volume", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "fc", VolumeSource: corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"500a0982991b8dc5"}, Lun: ptr.To[int32](2)}}}}
		}, want: schedulingv1alpha1.NotBurstableUnsupportedVolume},
		{name: "local-pv", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}, want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		{name: "fixed-ip", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{decide.AnnotationVPCIPClaimDeletePolicy: "Never"}
		}, want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "float-ip-pool", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{decide.AnnotationENIIPPool: "pool-a"}
		}, want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "gpu", namespace: ns, mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}, want: schedulingv1alpha1.NotBurstableGPUWithoutType},
	}
	for _, tc := range cases {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: tc.namespace, Labels: labels}, Spec: podSpec()}
		if tc.mutate != nil {
			tc.mutate(p)
		}
		if err := e.c.Create(ctx, p); err != nil {
			t.Fatalf("creating pod %s: %v", tc.name, err)
		}
	}

	bp := &schedulingv1alpha1.BurstPolicy{}
	want := map[string]string{"agent": schedulingv1alpha1.NotBurstableDaemonSetPod}
	for _, tc := range cases {
		if tc.want != "" && tc.namespace == ns {
			want[tc.name] = tc.want
		}
	}
	e.waitFor(ctx, t, "every restricted pod listed with its reason", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "restricted"}, bp); err != nil {
			return false, err.Error()
		}
		got := map[string]string{}
		for _, nb := range bp.Status.NonBurstablePods {
			name := nb.Name
			if strings.HasPrefix(name, "agent-") {
				name = "agent"
			}
			got[name] = nb.Reason
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("got %v, want %v", got, want)
	})
	excluded := &schedulingv1alpha1.BurstPolicy{}
	e.waitFor(ctx, t, "the excluded namespace's pod listed", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "tke-eni-ip-webhook", Name: "restricted"}, excluded); err != nil {
			return false, err.Error()
		}
		return len(excluded.Status.NonBurstablePods) == 1 && excluded.Status.NonBurstablePods[0].Reason == schedulingv1alpha1.NotBurstableExcludedNamespace,
			fmt.Sprintf("%+v", excluded.Status.NonBurstablePods)
	})

	// The plain pod burst and runs on the virtual node; the others wait, untouched.
	e.waitFor(ctx, t, "the plain pod to run on the virtual node", func() (bool, string) {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, p); err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName == virtualNode && p.Status.Phase == corev1.PodRunning, p.Spec.NodeName + "/" + string(p.Status.Phase)
	})
	for _, tc := range cases {
		if tc.want == "" {
			continue
		}
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: tc.namespace, Name: tc.name}, p); err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			t.Errorf("%s was scheduled to %s; a restricted pod must not burst", tc.name, p.Spec.NodeName)
		}
		if got := p.Annotations[schedulingv1alpha1.AnnotationNotBurstable]; got != tc.want {
			t.Errorf("%s: annotation %s=%q, want %q", tc.name, schedulingv1alpha1.AnnotationNotBurstable, got, tc.want)
		}
	}
	// Each refusal is an Event on its pod.
	e.waitFor(ctx, t, "an Event per refused pod", func() (bool, string) {
		var missing []string
		for _, tc := range cases {
			if tc.want == "" {
				continue
			}
			evs := &eventsv1.EventList{}
			if err := e.c.List(ctx, evs, client.InNamespace(tc.namespace)); err != nil {
				return false, err.Error()
			}
			if !slices.ContainsFunc(evs.Items, func(ev eventsv1.Event) bool { return ev.Regarding.Name == tc.name && ev.Reason == tc.want }) {
				missing = append(missing, tc.name)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no event for %v", missing)
	})

	for _, tc := range cases {
		_ = e.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: tc.namespace}}, client.GracePeriodSeconds(0))
	}
	_ = e.c.Delete(ctx, ds)
}

func testRollingUpdate(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	deploy := &appsv1.Deployment{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: seedNS, Name: "nginx-deployment"}, deploy); err != nil {
		t.Fatal(err)
	}
	// Watch every pod change until the rollout is complete: after each one,
	// at least one replica is on the local node or held for it (pending
	// without the virtual-node toleration).
	wc, err := client.NewWithWatch(e.cluster.RESTConfig(), client.Options{Scheme: e.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	list := &corev1.PodList{}
	if err := e.c.List(ctx, list, client.InNamespace(seedNS), client.MatchingLabels(seedLabels())); err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(seedNS), client.MatchingLabels(seedLabels()), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}

	patch := client.MergeFrom(deploy.DeepCopy())
	deploy.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
	if err := e.c.Patch(ctx, deploy, patch); err != nil {
		t.Fatal(err)
	}

	minHeld, minBound, changes := 1<<30, 1<<30, 0
	current := func() []corev1.Pod {
		out := make([]corev1.Pod, 0, len(pods))
		for _, p := range pods {
			out = append(out, p)
		}
		return out
	}
	// The ticker re-checks the Deployment's status when no pod changes.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("rolling update did not finish: %v; pods: %s", ctx.Err(), describe(current()))
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("pod watch closed; pods: %s", describe(current()))
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			if ev.Type == "DELETED" {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = *p
			}
			changes++
		}
		held, bound := 0, 0
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			switch {
			case p.Spec.NodeName == localNode:
				held++
				bound++
			case p.Spec.NodeName == "" && !slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == decide.TencentEKSTaint }):
				held++
			}
		}
		minHeld, minBound = min(minHeld, held), min(minBound, bound)
		if held < 1 {
			t.Fatalf("the local floor was given up after %d pod changes: %s", changes, describe(current()))
		}
		all := current()
		local, virtual, running := placement(all)
		if len(all) != 3 || local != 1 || virtual != 2 || running != 3 {
			continue
		}
		d := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(deploy), d); err != nil {
			t.Fatal(err)
		}
		if d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == 3 && d.Status.Replicas == 3 && d.Status.AvailableReplicas == 3 {
			break
		}
	}
	t.Logf("rollout done after %d pod changes: min replicas local or held for local %d, min bound to the local node %d; final %s", changes, minHeld, minBound, describe(current()))
}

func testPinned(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	// Room for six more 600m replicas locally.
	if err := e.cluster.AddNode(ctx, localcluster.NodeSpec{Name: "local-2", CPU: resource.MustParse("4"), Memory: resource.MustParse("16Gi")}); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.WaitNodeReady(ctx, "local-2"); err != nil {
		t.Fatal(err)
	}
	const ns = "pinned"
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "pinned"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}},
				Spec:       podSpec(),
			},
		},
	}
	if err := e.c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpPods(t, ns)
		}
	})
	pods := e.waitPods(ctx, t, ns, labels, "1 local and 3 virtual replicas, all Running and ungated", func(pods []corev1.Pod) bool {
		local, virtual := 0, 0
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning || len(p.Spec.SchedulingGates) != 0 {
				return false
			}
			switch p.Spec.NodeName {
			case localNode, "local-2":
				local++
			case virtualNode:
				virtual++
			}
		}
		return len(pods) == 4 && local == 1 && virtual == 3
	})
	for _, p := range pods {
		if p.Spec.NodeName == virtualNode && p.Spec.NodeSelector[corev1.LabelInstanceTypeStable] != "eklet" {
			t.Errorf("burst pod %s is not pinned to virtual nodes: nodeSelector %v", p.Name, p.Spec.NodeSelector)
		}
	}
	t.Logf("placement with spare local room: %s", describe(pods))
}

// testRebalanceAndRevert: a tainted local node of its own, mostly taken by a
// filler pod; a Deployment of 3 with localReplicas 1 ends 1 local and 2
// burst. Once the filler is gone the floor is raised to 2: rebalancing
// evicts exactly one burst pod (never two at a time), its replacement runs
// locally, and the floor holds. Deleting the policy then removes the
// deletion costs and marks edgeplane wrote; the burst pod keeps running
// where it is.
func testRebalanceAndRevert(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	const (
		ns   = "rebalance"
		node = "local-rb"
		pool = poolKey
	)
	e.addPool(t, "rb", resource.MustParse("2"))
	if err := e.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpPods(t, ns)
		}
	})
	tolerateRB := corev1.Toleration{Key: pool, Operator: corev1.TolerationOpEqual, Value: "rb", Effect: corev1.TaintEffectNoSchedule}
	filler := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "filler", Namespace: ns}, Spec: podSpec()}
	filler.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1200m")
	filler.Spec.NodeSelector = map[string]string{pool: "rb"}
	filler.Spec.Tolerations = []corev1.Toleration{tolerateRB}
	if err := e.c.Create(ctx, filler); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, nil, "the filler to run on "+node, func(pods []corev1.Pod) bool {
		return len(pods) == 1 && pods[0].Spec.NodeName == node && pods[0].Status.Phase == corev1.PodRunning
	})

	labels := map[string]string{"app": "rb"}
	spec := poolSpec("rb") // the local pool or a virtual node
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	bp := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			TargetRef:     &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "rb"},
			Enabled:       ptr.To(true),
			LocalReplicas: 1,
			Rebalance:     &schedulingv1alpha1.Rebalance{Enabled: true, After: &metav1.Duration{Duration: 2 * time.Second}},
		},
	}
	for _, o := range []client.Object{bp, deploy} {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	pods := e.waitPods(ctx, t, ns, labels, "1 local and 2 burst replicas, the burst ones with the deletion cost", func(pods []corev1.Pod) bool {
		local, virtual, other := onPool("rb", pods)
		if local != 1 || virtual != 2 || other != 0 {
			return false
		}
		for _, p := range pods {
			if p.Spec.NodeName == virtualNode && p.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost] != decide.BurstDeletionCost {
				return false
			}
		}
		return true
	})
	t.Logf("before: %s", describe(pods))

	// Room frees and the floor is raised: one burst pod moves home.
	if err := e.c.Delete(ctx, filler); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(bp), bp); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(bp.DeepCopy())
	bp.Spec.LocalReplicas = 2
	if err := e.c.Patch(ctx, bp, patch); err != nil {
		t.Fatal(err)
	}
	evicted := map[string]bool{}
	pods = e.waitPods(ctx, t, ns, labels, "2 local and 1 burst replicas after one eviction", func(pods []corev1.Pod) bool {
		terminating := 0
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				terminating++
				evicted[p.Name] = true
			}
		}
		if terminating > 1 {
			t.Errorf("%d evictions in flight at once: %s", terminating, describe(pods))
		}
		local, virtual, other := onPool("rb", pods)
		return local == 2 && virtual == 1 && other == 0 && len(pods) == 3
	})
	t.Logf("after: %s", describe(pods))
	e.waitFor(ctx, t, "the policy to report the eviction and a kept floor", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(bp), bp); err != nil {
			return false, err.Error()
		}
		st := bp.Status.Rebalance
		return st != nil && st.LastEvictedPod != "" && st.FloorShortSince == nil && bp.Status.LocalReplicas == 2 && bp.Status.BurstReplicas == 1,
			fmt.Sprintf("%+v", bp.Status)
	})
	if len(evicted) > 1 {
		t.Errorf("evicted %v; one burst pod had to move", evicted)
	}
	evs := &eventsv1.EventList{}
	if err := e.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var moved []string
	for _, ev := range evs.Items {
		if ev.Reason == schedulingv1alpha1.EventReasonRebalanceEvicted && ev.Regarding.Kind == "BurstPolicy" {
			moved = append(moved, ev.Note)
		}
	}
	if len(moved) != 1 {
		t.Errorf("RebalanceEvicted events on the policy: %q, want one", moved)
	}

	// Deleting the policy returns the pods to plain behaviour.
	if err := e.c.Delete(ctx, bp); err != nil {
		t.Fatal(err)
	}
	pods = e.waitPods(ctx, t, ns, labels, "no pod to carry edgeplane's deletion cost or marks", func(pods []corev1.Pod) bool {
		for _, p := range pods {
			if !decide.RevertMarks(p.Labels, p.Annotations, false).Empty() {
				return false
			}
		}
		return len(pods) == 3
	})
	for _, p := range pods {
		if p.Spec.NodeName == virtualNode && (p.Status.Phase != corev1.PodRunning || !slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == decide.TencentEKSTaint })) {
			t.Errorf("the burst pod %s was disturbed by the revert: %s", p.Name, describe([]corev1.Pod{p}))
		}
	}
	t.Logf("after the policy was deleted: %s", describe(pods))
}

func testExamples(t *testing.T, e *e2e) {
	ctx := waitCtx(t)
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "burstpolicy")
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(kustomization, &k); err != nil {
		t.Fatal(err)
	}
	for _, res := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, res))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := e.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
				t.Fatalf("applying %s %s from %s: %v", u.GetKind(), u.GetName(), res, err)
			}
		}
	}
	for _, name := range []string{"web", "deployment-nginx-deployment"} {
		bp := &schedulingv1alpha1.BurstPolicy{}
		e.waitFor(ctx, t, "BurstPolicy "+name+" to be Ready with every pod placed", func() (bool, string) {
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: "burst-demo", Name: name}, bp); err != nil {
				return false, err.Error()
			}
			c := cond(bp, schedulingv1alpha1.TypeReady)
			return c.Status == metav1.ConditionTrue && bp.Status.ObservedGeneration == bp.Generation && bp.Status.PendingReplicas == 0 &&
				bp.Status.LocalReplicas+bp.Status.BurstReplicas > 0, fmt.Sprintf("%+v", bp.Status)
		})
		t.Logf("%s: TARGET %s LOCAL %d BURST %d PENDING %d", name, bp.Status.Target, bp.Status.LocalReplicas, bp.Status.BurstReplicas, bp.Status.PendingReplicas)
	}
	def := &schedulingv1alpha1.ClusterBurstPolicy{}
	e.waitFor(ctx, t, "the ClusterBurstPolicy to be Ready", func() (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
			return false, err.Error()
		}
		return cond2(def.Status.Conditions, schedulingv1alpha1.TypeReady).Status == metav1.ConditionTrue, fmt.Sprintf("%+v", def.Status)
	})
}

// podWebhookConfiguration mirrors the +kubebuilder:webhook marker of the
// burstpolicy package. The path has no leading slash because envtest joins
// it to the URL with one.
func podWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	path := strings.TrimPrefix(burstpolicy.PodWebhookPath, "/")
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-burstpolicy-e2e"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "burst.pods.scheduling.edgeplane.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "edgeplane", Path: &path}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](3),
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "edgeplane-system"},
			}}},
		}},
	}
}

func cond2(conds []metav1.Condition, typ string) metav1.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// ---- helpers ----

// dumpPods logs what a failed scenario needs: each pod's scheduling inputs
// and the namespace's events.
func (e *e2e) dumpPods(t *testing.T, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods := &corev1.PodList{}
	if err := e.c.List(ctx, pods, client.InNamespace(ns)); err == nil {
		for _, p := range pods.Items {
			t.Logf("pod %s created %s node %q gates %v nodeSelector %v tolerations %d annotations %v",
				p.Name, p.CreationTimestamp.Format(time.RFC3339), p.Spec.NodeName, p.Spec.SchedulingGates, p.Spec.NodeSelector, len(p.Spec.Tolerations), p.Annotations)
		}
	}
	evs := &eventsv1.EventList{}
	if err := e.c.List(ctx, evs, client.InNamespace(ns)); err == nil {
		for _, ev := range evs.Items {
			t.Logf("event %s %s/%s %s: %s", ev.CreationTimestamp.Format(time.RFC3339), ev.Regarding.Kind, ev.Regarding.Name, ev.Reason, ev.Note)
		}
	}
	cevs := &corev1.EventList{}
	if err := e.c.List(ctx, cevs, client.InNamespace(ns)); err == nil {
		for _, ev := range cevs.Items {
			t.Logf("core event %s/%s %s: %s", ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message)
		}
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "nginx", Image: image,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")}}}},
	}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func (e *e2e) waitFor(ctx context.Context, t *testing.T, what string, done func() (bool, string)) {
	t.Helper()
	var state string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, s := done()
		state = s
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last state: %s", what, err, state)
	}
}

func (e *e2e) waitPods(ctx context.Context, t *testing.T, ns string, labels map[string]string, what string, done func([]corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := e.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return false, nil
		}
		return done(pods.Items), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; pods: %s", what, err, describe(pods.Items))
	}
	return pods.Items
}

// placement counts non-terminating pods on the local and virtual node, and
// the running ones.
func placement(pods []corev1.Pod) (local, virtual, running int) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Spec.NodeName {
		case localNode:
			local++
		case virtualNode:
			virtual++
		}
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	return local, virtual, running
}

func unschedulable(p *corev1.Pod) *corev1.PodCondition {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func cond(bp *schedulingv1alpha1.BurstPolicy, typ string) metav1.Condition {
	for _, c := range bp.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func describe(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		s := fmt.Sprintf("%s@%s(%s", p.Name, p.Spec.NodeName, p.Status.Phase)
		if p.DeletionTimestamp != nil {
			s += ",terminating"
		}
		if c := p.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]; c != "" {
			s += ",cost=" + c
		}
		out = append(out, s+")")
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
