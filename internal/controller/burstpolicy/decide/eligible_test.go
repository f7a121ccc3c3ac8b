package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func basePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
		}}},
	}
}

func podWith(f func(*corev1.Pod)) *corev1.Pod {
	p := basePod()
	f(p)
	return p
}

func TestMayBurst(t *testing.T) {
	defaults := Restrictions{ExcludedNamespaces: DefaultExcludedNamespaces}
	cases := []struct {
		name   string
		pod    *corev1.Pod
		r      Restrictions
		claims map[string]Claim
		want   string // reason; "" = may burst
	}{
		{name: "plain pod", pod: basePod()},
		{name: "DaemonSet pod", pod: podWith(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u", Controller: ptr.To(true)}}
		}), want: schedulingv1alpha1.NotBurstableDaemonSetPod},
		{name: "ReplicaSet pod", pod: podWith(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "u", Controller: ptr.To(true)}}
		})},
		{name: "kube-system", pod: podWith(func(p *corev1.Pod) { p.Namespace = "kube-system" }), want: schedulingv1alpha1.NotBurstableExcludedNamespace},
		{name: "tke-eni-ip-webhook", pod: podWith(func(p *corev1.Pod) { p.Namespace = "tke-eni-ip-webhook" }), want: schedulingv1alpha1.NotBurstableExcludedNamespace},
		{name: "configured excluded namespace", pod: basePod(), r: Restrictions{ExcludedNamespaces: []string{"shop"}}, want: schedulingv1alpha1.NotBurstableExcludedNamespace},
		{name: "kube-system allowed when not in the list", pod: podWith(func(p *corev1.Pod) { p.Namespace = "kube-system" }), r: Restrictions{ExcludedNamespaces: []string{}}},
		{name: "container port low edge", pod: podWith(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 61000 }), want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "container port high edge", pod: podWith(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 65534 }), want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "container port just below", pod: podWith(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 60999 })},
		{name: "container port just above", pod: podWith(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 65535 })},
		{name: "host port", pod: podWith(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = 62000 }), want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "init container port", pod: podWith(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 63000}}}}
		}), want: schedulingv1alpha1.NotBurstableReservedPort},
		{name: "liveness probe port", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(61001)}}}
		}), want: schedulingv1alpha1.NotBurstableReservedProbePort},
		{name: "readiness tcp probe port", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(65000)}}}
		}), want: schedulingv1alpha1.NotBurstableReservedProbePort},
		{name: "startup grpc probe port", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 64000}}}
		}), want: schedulingv1alpha1.NotBurstableReservedProbePort},
		{name: "probe on a low port", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}}
		})},
		{name: "named probe port resolving into the range", pod: podWith(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "side", Image: "x",
				Ports:          []corev1.ContainerPort{{Name: "admin", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("admin")}}}}}
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090})
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("metrics")}}}
		})},
		{name: "local port range into reserved", pod: sysctlPod("32768 61000"), want: schedulingv1alpha1.NotBurstableLocalPortRange},
		{name: "local port range inside reserved", pod: sysctlPod("62000\t63000"), want: schedulingv1alpha1.NotBurstableLocalPortRange},
		{name: "local port range clear", pod: sysctlPod("32768 60999")},
		{name: "local port range above", pod: sysctlPod("65535 65535")},
		{name: "local port range unparsable", pod: sysctlPod("lots"), want: schedulingv1alpha1.NotBurstableLocalPortRange},
		{name: "other sysctl", pod: podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "62000"}}}
		})},
		{name: "allowed volumes", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "d", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
				{Name: "e", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
				{Name: "f", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
				{Name: "g", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
				{Name: "h", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "x"}}},
				{Name: "i", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
				{Name: "j", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}},
				{Name: "k", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{}}},
			}
		})},
		{name: "fibre channel volume", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "fc", VolumeSource: corev1.VolumeSource{FC: &corev1.FCVolumeSource{}}}}
		}), want: schedulingv1alpha1.NotBurstableUnsupportedVolume},
		{name: "inline cephfs volume", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "ceph", VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}}}
		}), want: schedulingv1alpha1.NotBurstableUnsupportedVolume},
		{name: "claim bound to NFS PV", pod: claimPod("data"), claims: map[string]Claim{"data": {PV: pv(corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{}})}}},
		{name: "claim bound to CephFS PV", pod: claimPod("data"), claims: map[string]Claim{"data": {PV: pv(corev1.PersistentVolumeSource{CephFS: &corev1.CephFSPersistentVolumeSource{}})}}},
		{name: "claim bound to CBS CSI PV", pod: claimPod("data"), claims: map[string]Claim{"data": {PV: pv(corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "com.tencent.cloud.csi.cbs"}})}}},
		{name: "claim bound to local PV", pod: claimPod("data"), claims: map[string]Claim{"data": {PV: pv(corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt"}})}}, want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		{name: "claim bound to EBS CSI PV", pod: claimPod("data"), claims: map[string]Claim{"data": {PV: pv(corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com"}})}}, want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		{name: "unbound claim with CFS class", pod: claimPod("data"), claims: map[string]Claim{"data": {Provisioner: "com.tencent.cloud.csi.cfs"}}},
		{name: "unbound claim with other class", pod: claimPod("data"), claims: map[string]Claim{"data": {Provisioner: "rancher.io/local-path"}}, want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		{name: "unknown claim", pod: claimPod("data"), want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		{name: "vpc ip claim", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationVPCIPClaimDeletePolicy: "Never"}
		}), want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "vpc ip claim allowed", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationVPCIPClaimDeletePolicy: "Never"}
		}), r: Restrictions{AllowFixedIP: true}},
		{name: "float ip request", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{ResourceENIIP: resource.MustParse("1")}
		}), want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "float ip pool", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationENIIPPool: "pool-a"}
		}), want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "float ip released on delete is not fixed", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationReleasePolicy: ""}
		})},
		{name: "immutable float ip", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationReleasePolicy: "immutable"}
		}), want: schedulingv1alpha1.NotBurstableFixedIP},
		{name: "gpu without type", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}), want: schedulingv1alpha1.NotBurstableGPUWithoutType},
		{name: "gpu with type", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{AnnotationGPUType: "T4"}
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		})},
		{name: "gpu with bare gpu-type", pod: podWith(func(p *corev1.Pod) {
			p.Annotations = map[string]string{GPUTypeKey: "V100"}
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		})},
		{name: "first refusal wins: DaemonSet in kube-system", pod: podWith(func(p *corev1.Pod) {
			p.Namespace = "kube-system"
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u", Controller: ptr.To(true)}}
		}), want: schedulingv1alpha1.NotBurstableDaemonSetPod},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.ExcludedNamespaces == nil {
				r.ExcludedNamespaces = defaults.ExcludedNamespaces
			}
			got := MayBurst(tc.pod, r, tc.claims)
			if got.Reason != tc.want {
				t.Fatalf("MayBurst reason = %q (%s), want %q", got.Reason, got.Message, tc.want)
			}
			if got.Refused() && got.Message == "" {
				t.Errorf("refusal %s has no message", got.Reason)
			}
			if again := MayBurst(tc.pod, r, tc.claims); !cmp.Equal(got, again) {
				t.Errorf("MayBurst is not stable: %+v then %+v", got, again)
			}
		})
	}
}

func sysctlPod(v string) *corev1.Pod {
	return podWith(func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: SysctlLocalPortRange, Value: v}}}
	})
}

func claimPod(claim string) *corev1.Pod {
	return podWith(func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	})
}

func pv(src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src}}
}
