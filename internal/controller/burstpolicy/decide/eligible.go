package decide

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Virtual nodes reserve this port range for themselves.
const (
	ReservedPortLow  = 61000
	ReservedPortHigh = 65534
)

// Legacy names the restrictions read.
const (
	// SysctlLocalPortRange is the sysctl whose range must stay clear of the
	// reserved ports.
	SysctlLocalPortRange = "net.ipv4.ip_local_port_range"
	// AnnotationVPCIPClaimDeletePolicy marks a pod with a fixed VPC IP.
	AnnotationVPCIPClaimDeletePolicy = "tke.cloud.tencent.com/vpc-ip-claim-delete-policy"
	// AnnotationENIIPPool puts a pod's float IP in a pool that outlives it.
	AnnotationENIIPPool = "tke.cloud.tencent.com/eni-ip-pool"
	// AnnotationReleasePolicy is galaxy's float IP release policy.
	AnnotationReleasePolicy = "k8s.v1.cni.galaxy.io/release-policy"
	// ResourceENIIP is the extended resource a float-IP pod requests.
	ResourceENIIP corev1.ResourceName = "tke.cloud.tencent.com/eni-ip"
	// AnnotationGPUType is the annotation a GPU pod must carry on EKS; the
	// bare key GPUTypeKey is accepted too.
	AnnotationGPUType = "eks.tke.cloud.tencent.com/gpu-type"
	// GPUTypeKey is the bare legacy key.
	GPUTypeKey = "gpu-type"
)

// DefaultExcludedNamespaces are used when no ClusterBurstPolicy says otherwise.
var DefaultExcludedNamespaces = []string{"kube-system", "tke-eni-ip-webhook"}

// allowedPVProvisioners are the StorageClass provisioners whose volumes a
// virtual node can mount.
var allowedPVProvisioners = []string{"cloud.tencent.com/qcloud-cbs", "com.tencent.cloud.csi.cbs", "com.tencent.cloud.csi.cfs"}

// allowedPVCSIDrivers are the CSI drivers of PVs a virtual node can mount.
var allowedPVCSIDrivers = []string{"com.tencent.cloud.csi.cbs", "com.tencent.cloud.csi.cfs"}

// Restrictions are the cluster-wide settings of MayBurst.
type Restrictions struct {
	// ExcludedNamespaces: pods there never burst.
	ExcludedNamespaces []string
	// AllowFixedIP lets pods with fixed IPs burst.
	AllowFixedIP bool
}

// Claim is what MayBurst needs to know about a PersistentVolumeClaim.
type Claim struct {
	// PV is the bound volume, nil while the claim is unbound.
	PV *corev1.PersistentVolume
	// Provisioner of the claim's StorageClass ("" if none or unknown).
	Provisioner string
}

// Refusal says why a pod may not burst. The zero value means it may.
type Refusal struct {
	// Reason is one of schedulingv1alpha1's NotBurstable* constants.
	Reason string
	// Message says exactly what is in the way.
	Message string
}

// Refused reports whether r refuses the burst.
func (r Refusal) Refused() bool { return r.Reason != "" }

func refuse(reason, format string, args ...any) Refusal {
	return Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// MayBurst says whether pod may run on a virtual node, and if not, why. The
// checks run in a fixed order and the first refusal wins, so the reason is
// stable. claims maps the pod's claim names to what is known of them; a
// claim missing from the map is treated as unbound without a known class.
func MayBurst(pod *corev1.Pod, r Restrictions, claims map[string]Claim) Refusal {
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" {
		return refuse(schedulingv1alpha1.NotBurstableDaemonSetPod, "pod is managed by DaemonSet %s", ref.Name)
	}
	if slices.Contains(r.ExcludedNamespaces, pod.Namespace) {
		return refuse(schedulingv1alpha1.NotBurstableExcludedNamespace, "namespace %s is excluded from bursting", pod.Namespace)
	}
	if ref := checkPorts(pod); ref.Refused() {
		return ref
	}
	if ref := checkSysctls(pod); ref.Refused() {
		return ref
	}
	if ref := checkVolumes(pod, claims); ref.Refused() {
		return ref
	}
	if !r.AllowFixedIP {
		if what := fixedIP(pod); what != "" {
			return refuse(schedulingv1alpha1.NotBurstableFixedIP, "pod has a fixed IP (%s)", what)
		}
	}
	if requestsGPU(pod) && pod.Annotations[AnnotationGPUType] == "" && pod.Annotations[GPUTypeKey] == "" {
		return refuse(schedulingv1alpha1.NotBurstableGPUWithoutType, "pod requests GPUs but has no %s annotation", AnnotationGPUType)
	}
	return Refusal{}
}

func reserved(port int32) bool { return port >= ReservedPortLow && port <= ReservedPortHigh }

// allContainers returns init containers first, then containers.
func allContainers(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	out = append(out, pod.Spec.InitContainers...)
	return append(out, pod.Spec.Containers...)
}

func checkPorts(pod *corev1.Pod) Refusal {
	for _, c := range allContainers(pod) {
		for _, p := range c.Ports {
			if reserved(p.ContainerPort) {
				return refuse(schedulingv1alpha1.NotBurstableReservedPort, "container %s uses port %d, reserved on virtual nodes (%d-%d)", c.Name, p.ContainerPort, ReservedPortLow, ReservedPortHigh)
			}
			if reserved(p.HostPort) {
				return refuse(schedulingv1alpha1.NotBurstableReservedPort, "container %s uses host port %d, reserved on virtual nodes (%d-%d)", c.Name, p.HostPort, ReservedPortLow, ReservedPortHigh)
			}
		}
	}
	for _, c := range allContainers(pod) {
		probes := []struct {
			kind  string
			probe *corev1.Probe
		}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}}
		for _, p := range probes {
			if port, ok := probePort(c, p.probe); ok && reserved(port) {
				return refuse(schedulingv1alpha1.NotBurstableReservedProbePort, "container %s has a %s probe on port %d, reserved on virtual nodes (%d-%d)", c.Name, p.kind, port, ReservedPortLow, ReservedPortHigh)
			}
		}
	}
	return Refusal{}
}

// probePort returns the port number a probe targets, resolving a named port
// against the container's ports.
func probePort(c corev1.Container, p *corev1.Probe) (int32, bool) {
	if p == nil {
		return 0, false
	}
	var port *intstr.IntOrString
	switch {
	case p.HTTPGet != nil:
		port = &p.HTTPGet.Port
	case p.TCPSocket != nil:
		port = &p.TCPSocket.Port
	case p.GRPC != nil:
		return p.GRPC.Port, true
	default:
		return 0, false
	}
	if port.Type == intstr.Int {
		return port.IntVal, true
	}
	for _, cp := range c.Ports {
		if cp.Name == port.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func checkSysctls(pod *corev1.Pod) Refusal {
	if pod.Spec.SecurityContext == nil {
		return Refusal{}
	}
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		if s.Name != SysctlLocalPortRange {
			continue
		}
		lo, hi, err := ParsePortRange(s.Value)
		if err != nil {
			return refuse(schedulingv1alpha1.NotBurstableLocalPortRange, "%s: %v", SysctlLocalPortRange, err)
		}
		if hi >= ReservedPortLow && lo <= ReservedPortHigh {
			return refuse(schedulingv1alpha1.NotBurstableLocalPortRange, "%s %d-%d reaches into %d-%d, reserved on virtual nodes", SysctlLocalPortRange, lo, hi, ReservedPortLow, ReservedPortHigh)
		}
	}
	return Refusal{}
}

// ParsePortRange parses an ip_local_port_range value: two port numbers
// separated by blanks (the kernel also accepts a tab), low first.
func ParsePortRange(v string) (lo, hi int, err error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("value %q is not two port numbers", v)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 0 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("value %q is not a port range", v)
	}
	return lo, hi, nil
}

func checkVolumes(pod *corev1.Pod, claims map[string]Claim) Refusal {
	for _, v := range pod.Spec.Volumes {
		s := v.VolumeSource
		switch {
		case s.EmptyDir != nil, s.Secret != nil, s.NFS != nil, s.ConfigMap != nil, s.DownwardAPI != nil,
			s.HostPath != nil, s.GitRepo != nil, s.ISCSI != nil, s.Projected != nil, s.CSI != nil, s.Ephemeral != nil:
			continue
		case s.PersistentVolumeClaim != nil:
			if ref := checkClaim(v.Name, s.PersistentVolumeClaim.ClaimName, claims); ref.Refused() {
				return ref
			}
		default:
			return refuse(schedulingv1alpha1.NotBurstableUnsupportedVolume, "volume %s is of a type virtual nodes cannot mount", v.Name)
		}
	}
	return Refusal{}
}

func checkClaim(volume, claim string, claims map[string]Claim) Refusal {
	c := claims[claim]
	if c.PV == nil {
		if slices.Contains(allowedPVProvisioners, c.Provisioner) {
			return Refusal{}
		}
		if c.Provisioner == "" {
			return refuse(schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume, "volume %s: claim %s is not bound and has no known provisioner", volume, claim)
		}
		return refuse(schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume, "volume %s: claim %s uses provisioner %s, which virtual nodes cannot mount", volume, claim, c.Provisioner)
	}
	s := c.PV.Spec.PersistentVolumeSource
	switch {
	case s.NFS != nil, s.CephFS != nil, s.HostPath != nil:
		return Refusal{}
	case s.CSI != nil && slices.Contains(allowedPVCSIDrivers, s.CSI.Driver):
		return Refusal{}
	case s.FlexVolume != nil && s.FlexVolume.Driver == "cloud.tencent.com/qcloud-cbs":
		return Refusal{}
	}
	return refuse(schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume, "volume %s: claim %s is bound to PV %s of a type virtual nodes cannot mount (allowed: nfs, cephfs, hostPath, CBS)", volume, claim, c.PV.Name)
}

// fixedIP says which fixed-IP feature the pod uses, or "".
func fixedIP(pod *corev1.Pod) string {
	if _, ok := pod.Annotations[AnnotationVPCIPClaimDeletePolicy]; ok {
		return "annotation " + AnnotationVPCIPClaimDeletePolicy
	}
	if pod.Annotations[AnnotationENIIPPool] != "" {
		return "annotation " + AnnotationENIIPPool
	}
	if p := pod.Annotations[AnnotationReleasePolicy]; p == "immutable" || p == "never" {
		return "annotation " + AnnotationReleasePolicy + "=" + p
	}
	for _, c := range allContainers(pod) {
		if _, ok := c.Resources.Requests[ResourceENIIP]; ok {
			return "requests " + string(ResourceENIIP)
		}
		if _, ok := c.Resources.Limits[ResourceENIIP]; ok {
			return "requests " + string(ResourceENIIP)
		}
	}
	return ""
}

// requestsGPU reports whether any container asks for a GPU resource (a
// resource name containing "gpu", e.g. nvidia.com/gpu).
func requestsGPU(pod *corev1.Pod) bool {
	for _, c := range allContainers(pod) {
		for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for name, q := range l {
				if strings.Contains(strings.ToLower(string(name)), "gpu") && !q.IsZero() {
					return true
				}
			}
		}
	}
	return false
}
