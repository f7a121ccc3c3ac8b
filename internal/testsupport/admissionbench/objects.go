package admissionbench

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Node is a node as a kubelet registers it (labels, annotations, status
// with capacity, conditions, addresses, node info and 40 images), with
// extra labels; what the node webhooks receive on a real cluster.
func Node(name string, extra map[string]string) *corev1.Node {
	lbl := map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "SA5.2XLARGE16",
		"topology.kubernetes.io/region": "ap-guangzhou", "topology.kubernetes.io/zone": "ap-guangzhou-6",
		"failure-domain.beta.kubernetes.io/region": "gz", "failure-domain.beta.kubernetes.io/zone": "100006",
	}
	for k, v := range extra {
		lbl[k] = v
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("15950Mi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("103079844Ki"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
	}
	now := metav1.Now()
	var conds []corev1.NodeCondition
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady, corev1.NodeNetworkUnavailable} {
		st := corev1.ConditionFalse
		if c == corev1.NodeReady {
			st = corev1.ConditionTrue
		}
		conds = append(conds, corev1.NodeCondition{Type: c, Status: st, LastHeartbeatTime: now, LastTransitionTime: now,
			Reason: "Kubelet" + string(c), Message: "kubelet reports " + string(c)})
	}
	var images []corev1.ContainerImage
	for i := range 40 {
		images = append(images, corev1.ContainerImage{SizeBytes: int64(20_000_000 + i*1_000_000), Names: []string{
			fmt.Sprintf("ccr.ccs.tencentyun.com/library/image-%d@sha256:%064x", i, i),
			fmt.Sprintf("ccr.ccs.tencentyun.com/library/image-%d:v1.%d.0", i, i),
		}})
	}
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "5b0e6f7c-2d4a-4c1e-8f3b-9a7d6e5c4b3a", ResourceVersion: "123456",
			CreationTimestamp: now, Labels: lbl, Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"csi.volume.kubernetes.io/nodeid": `{"com.tencent.cloud.csi.cbs":"ins-abcdefgh"}`,
			}},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.3.0/24", PodCIDRs: []string{"10.244.3.0/24"}, ProviderID: "qcloud:///100006/ins-abcdefgh"},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res, Conditions: conds,
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.16.3.7"}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: "a3c4e5f6", SystemUUID: "a3c4e5f6-0000", BootID: "b1c2d3e4", KernelVersion: "5.4.241-1-tlinux4",
				OSImage: "TencentOS Server 3.1", ContainerRuntimeVersion: "containerd://1.6.9", KubeletVersion: "v1.30.0",
				OperatingSystem: "linux", Architecture: "amd64"},
			Images: images,
		},
	}
}

// Pod is a Deployment's pod as the API server hands it to a mutating
// webhook on create (defaulted: two containers with resources, probes,
// environment and mounts, the service account volume, the default
// tolerations), with the given labels.
func Pod(namespace, name string, lbl map[string]string) *corev1.Pod {
	container := func(n string) corev1.Container {
		return corev1.Container{
			Name: n, Image: "ccr.ccs.tencentyun.com/library/" + n + ":v1.2.3", ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "MODE", Value: "production"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			ReadinessProbe:           &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstrPort(8080), Scheme: corev1.URISchemeHTTP}}, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			TerminationMessagePath:   corev1.TerminationMessagePathDefault,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: "web-7d9f8c6b5-", Namespace: namespace, Labels: lbl,
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-27T10:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5",
				UID: "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("web"), container("sidecar")},
			Volumes: []corev1.Volume{{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30), DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Priority: ptr.To[int32](0), EnableServiceLinks: ptr.To(true), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable},
	}
}

func intstrPort(p int) intstr.IntOrString { return intstr.FromInt32(int32(p)) }
