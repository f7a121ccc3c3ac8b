package legacy_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// TKE resilience chart (tkestack/charts incubator/tke-resilience). From its
// README: the global switch `kubectl get cm -n kube-system eks-config` key
// AUTO_SCALE_EKS; the local switch
// spec.template.metadata.annotations['AUTO_SCALE_EKS'] and LOCAL_REPLICAS;
// the restrictions on kube-system and tke-eni-ip-webhook,
// securityContext.sysctls["net.ipv4.ip_local_port_range"], the annotation
// tke.cloud.tencent.com/vpc-ip-claim-delete-policy and ports 61000 - 65534.
// From the chart's templates: the virtual node label
// node.kubernetes.io/instance-type: eklet and taint
// eks.tke.cloud.tencent.com/eklet (NoSchedule).
func tkeResilience() project {
	return project{
		name: "tke-resilience",
		setup: func(w *world) {
			w.namespace("kube-system")
			// kubectl create configmap eks-config --from-literal=AUTO_SCALE_EKS=false
			w.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "eks-config"},
				Data: map[string]string{"AUTO_SCALE_EKS": "false"}})
			w.namespace("resilience")
			w.namespace("tke-eni-ip-webhook")
		},
		test: testResilience,
	}
}

func testResilience(t *testing.T, w *world) {
	// The global switch: the cluster-wide policy translated from eks-config.
	var cluster schedulingv1alpha1.ClusterBurstPolicy
	eventually.That(t.Context(), t, "a ClusterBurstPolicy translated from kube-system/eks-config", func() (bool, string) {
		var list schedulingv1alpha1.ClusterBurstPolicyList
		if err := env.Client.List(w.ctx, &list); err != nil {
			return false, err.Error()
		}
		for _, c := range list.Items {
			if c.Annotations["edgeplane.io/translated-from"] == "ConfigMap/kube-system/eks-config" {
				cluster = c
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d ClusterBurstPolicies", len(list.Items))
	})
	if cluster.Spec.Enabled == nil || *cluster.Spec.Enabled {
		t.Errorf("AUTO_SCALE_EKS=false in eks-config gave enabled %v, want false", cluster.Spec.Enabled)
	}
	for _, ns := range []string{"kube-system", "tke-eni-ip-webhook"} {
		if !slices.Contains(cluster.Spec.ExcludedNamespaces, ns) {
			t.Errorf("excluded namespaces %v lack %s", cluster.Spec.ExcludedNamespaces, ns)
		}
	}

	// The local switch and floor: the README's demo Deployment.
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "resilience", Name: "nginx-deployment", Labels: map[string]string{"app": "nginx"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"},
					Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx", ImagePullPolicy: corev1.PullIfNotPresent}}},
			},
		},
	}
	w.create(dep)
	eventually.That(t.Context(), t, "a BurstPolicy translated from the Deployment", func() (bool, string) {
		var list schedulingv1alpha1.BurstPolicyList
		if err := env.Client.List(w.ctx, &list, client.InNamespace("resilience")); err != nil {
			return false, err.Error()
		}
		for _, p := range list.Items {
			if p.Annotations["edgeplane.io/translated-from"] != "Deployment/resilience/nginx-deployment" {
				continue
			}
			ok := p.Spec.Enabled != nil && *p.Spec.Enabled && p.Spec.LocalReplicas == 1 &&
				p.Spec.TargetRef != nil && p.Spec.TargetRef.Kind == "Deployment" && p.Spec.TargetRef.Name == "nginx-deployment"
			return ok, fmt.Sprintf("spec %+v", p.Spec)
		}
		return false, fmt.Sprintf("%d BurstPolicies", len(list.Items))
	})

	// The restrictions, on pods as the API server stores them, with the
	// cluster policy's excluded namespaces.
	restrictions := decide.Restrictions{ExcludedNamespaces: cluster.Spec.ExcludedNamespaces}
	pod := func(ns, name string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if mutate != nil {
			mutate(p)
		}
		w.create(p)
		got := &corev1.Pod{}
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"plain":     {pod: pod("resilience", "plain", nil)},
		"namespace": {pod: pod("tke-eni-ip-webhook", "webhook", nil), want: schedulingv1alpha1.NotBurstableExcludedNamespace},
		"vpc-ip-claim-delete-policy": {pod: pod("resilience", "fixed-ip", func(p *corev1.Pod) {
			p.Annotations = map[string]string{"tke.cloud.tencent.com/vpc-ip-claim-delete-policy": "Never"}
		}), want: schedulingv1alpha1.NotBurstableFixedIP},
		"ip_local_port_range": {pod: pod("resilience", "sysctl", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "32768 65000"}}}
		}), want: schedulingv1alpha1.NotBurstableLocalPortRange},
		"containerPort 61000": {pod: pod("resilience", "port", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 61000}}
		}), want: schedulingv1alpha1.NotBurstableReservedPort},
		"hostPort 65534": {pod: pod("resilience", "hostport", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 65534}}}}
		}), want: schedulingv1alpha1.NotBurstableReservedPort},
	} {
		if got := decide.MayBurst(tc.pod, restrictions, nil); got.Reason != tc.want {
			t.Errorf("%s: MayBurst = %q (%s), want %q", name, got.Reason, got.Message, tc.want)
		}
	}

	// The eklet virtual nodes: what a burst pod is pinned to and tolerates.
	if got := decide.VirtualNodeSelector(schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS}); !maps.Equal(got, map[string]string{"node.kubernetes.io/instance-type": "eklet"}) {
		t.Errorf("eklet node selector %v", got)
	}
	tol := decide.VirtualNodeTolerations(schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS})
	taint := corev1.Taint{Key: "eks.tke.cloud.tencent.com/eklet", Effect: corev1.TaintEffectNoSchedule}
	if len(tol) != 1 || tol[0].Key != taint.Key || tol[0].Operator != corev1.TolerationOpExists || tol[0].Effect != taint.Effect {
		t.Errorf("eklet tolerations %v do not tolerate %v", tol, taint)
	}
}
