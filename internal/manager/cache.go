package manager

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// What the caches hold, with every controller on (see docs/operations.md,
// "Memory"). Cluster-wide informers of built-in kinds and their readers:
//
//   - Pods: PodElasticIP (annotations, ownerReferences, nodeName, hostNetwork,
//     readinessGates, status IPs, phase, conditions), FloatIPPool
//     (annotations, ownerReferences, nodeName, extended resources of the
//     containers, phase), BurstPolicy (labels, annotations, tolerations,
//     nodeName, phase, conditions; and of a pod not yet bound to a node:
//     volumes, container ports, probes, sysctls, affinity, topology spread,
//     nodeSelector, schedulingGates). Nobody reads a container's command,
//     arguments, environment, mounts, lifecycle hooks or security context,
//     nor the container statuses, nor the native limits (CPU, memory,
//     storage, hugepages; extended limits are looked up by name: GPUs, float
//     IPs): stripPod drops them. Once a pod is bound to a node (most pods,
//     most of the time) the controllers read only its metadata, node name,
//     hostNetwork, readiness gates, tolerations, phase, IPs and
//     readiness-gate conditions, and its containers only when they use an
//     extended resource (float IPs): slimBoundPod keeps only those. (BurstPolicy's rebalancing, which adds up
//     the requests of the pods on each node like the scheduler, reads those
//     pods uncached, page by page, when a burst pod is about to move home.)
//     Every pod write is a patch of the fields it changes, never an Update
//     of a cached pod.
//   - Nodes: AnycastIPBinding and NodeElasticIP (labels, annotations, taints, providerID),
//     FloatIPPool (labels, addresses), IngressDaemonSet (labels, annotations,
//     taints, unschedulable), BurstPolicy (labels, taints, unschedulable,
//     allocatable, the Ready condition). stripNode drops the rest of the
//     status: images, capacity, system info, the other conditions, volume
//     and runtime bookkeeping. Node writes are patches.
//   - Deployments and StatefulSets: the BurstPolicy translator (pod-template
//     annotations), FloatIPPool (replicas, strategy, pod-template
//     annotations) and IngressDaemonSet (its own Deployments, in full, which
//     it Updates). ReplicaSets and Jobs: the BurstPolicy translator
//     (pod-template annotations, owner references). stripWorkload drops the
//     pod template's spec of every workload an IngressDaemonSet does not
//     control. (Other kinds with a scale subresource are read by the
//     BurstPolicy translator through a cache of its own, which keeps only
//     their metadata and pod-template metadata.)
//   - DaemonSets: only the IngressDaemonSet controller reads them, its
//     health checkers in the platform's namespace, through a cache of its
//     own (label-selected, that namespace only); none here.
//   - Namespaces (FloatIPPool: labels) are few and small, kept as they are.
//
// ConfigMaps are read through a single-object cache (BurstPolicy's
// eks-config) or uncached, Secrets always uncached.

// CacheOptions returns the manager's cache settings: managedFields dropped
// from everything, the transforms and label selectors above, and
// watchNamespace (if set) as the only namespace watched.
func CacheOptions(watchNamespace string) cache.Options {
	strip := cache.TransformStripManagedFields()
	share := newMetaSharer()
	opts := cache.Options{
		// No controller reads managedFields; dropping them before they reach
		// the cache cuts its memory by about a third for pods and nodes.
		DefaultTransform: strip,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:         {Transform: chain(strip, stripPod, share.transform)},
			&corev1.Node{}:        {Transform: chain(strip, stripNode, share.transformNode)},
			&appsv1.Deployment{}:  {Transform: chain(strip, stripWorkload)},
			&appsv1.StatefulSet{}: {Transform: chain(strip, stripWorkload)},
			&appsv1.ReplicaSet{}:  {Transform: chain(strip, stripWorkload)},
			&batchv1.Job{}:        {Transform: chain(strip, stripWorkload)},
		},
	}
	if watchNamespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{watchNamespace: {}}
	}
	return opts
}

// chain applies the transforms in order.
func chain(fns ...toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		var err error
		for _, fn := range fns {
			if obj, err = fn(obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
}

// stripPod drops what no controller reads from a pod: per container the
// command, arguments, environment, mounts, lifecycle hooks, security context
// and terminal settings, and its native limits (CPU, memory, storage,
// hugepages); the ephemeral (debug) containers; and the container statuses.
// The pod's metadata, volumes, scheduling fields, container names, images,
// ports, requests, extended limits and probes, and its phase, conditions and
// IPs stay.
func stripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	if pod.Spec.NodeName != "" {
		slimBoundPod(pod)
	}
	for i := range pod.Spec.InitContainers {
		stripContainer(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		stripContainer(&pod.Spec.Containers[i])
	}
	pod.Spec.EphemeralContainers = nil
	pod.Status.InitContainerStatuses = nil
	pod.Status.ContainerStatuses = nil
	pod.Status.EphemeralContainerStatuses = nil
	return pod, nil
}

// slimBoundPod keeps of a pod bound to a node only what controllers read of
// bound pods: of the spec the node name, hostNetwork and readiness gates
// (PodElasticIP), the tolerations but the two every pod gets at admission
// (BurstPolicy: is it a burst pod?), scheduling gates, and the containers
// (with the pod overhead) only when one uses an extended resource (a float
// IP's tke.cloud.tencent.com/eni-ip, a GPU); of the status the phase, the
// IPs, and the readiness gates' conditions (not the kubelet's: nobody reads
// a bound pod's Ready or progress conditions). A pending pod's volumes,
// probes, affinity and the rest matter only to its burst decision, before
// it is bound; on a cluster of mostly running pods this is most of what the
// pod cache would hold.
func slimBoundPod(pod *corev1.Pod) {
	spec := corev1.PodSpec{
		NodeName:        pod.Spec.NodeName,
		HostNetwork:     pod.Spec.HostNetwork,
		ReadinessGates:  pod.Spec.ReadinessGates,
		Tolerations:     pod.Spec.Tolerations,
		SchedulingGates: pod.Spec.SchedulingGates,
	}
	if slices.ContainsFunc(spec.Tolerations, admissionToleration) {
		spec.Tolerations = without(spec.Tolerations, admissionToleration)
	}
	if usesExtendedResources(pod) {
		spec.InitContainers, spec.Containers, spec.Overhead = pod.Spec.InitContainers, pod.Spec.Containers, pod.Spec.Overhead
	}
	pod.Spec = spec
	pod.Status = corev1.PodStatus{
		Phase:      pod.Status.Phase,
		Conditions: pod.Status.Conditions,
		Reason:     pod.Status.Reason,
		HostIP:     pod.Status.HostIP,
		HostIPs:    pod.Status.HostIPs,
		PodIP:      pod.Status.PodIP,
		PodIPs:     pod.Status.PodIPs,
	}
	// Of a bound pod's conditions only its readiness gates' are read
	// (PodElasticIP's); without them most pods keep no condition at all.
	notAGate := func(c corev1.PodCondition) bool {
		return !slices.ContainsFunc(pod.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool { return g.ConditionType == c.Type })
	}
	if slices.ContainsFunc(pod.Status.Conditions, notAGate) {
		pod.Status.Conditions = without(pod.Status.Conditions, notAGate)
	}
	// The decoder gives the first of the IPs a string of its own, equal to
	// PodIP (HostIP): one copy is enough.
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP == pod.Status.PodIP {
		pod.Status.PodIPs[0].IP = pod.Status.PodIP
	}
	if len(pod.Status.HostIPs) > 0 && pod.Status.HostIPs[0].IP == pod.Status.HostIP {
		pod.Status.HostIPs[0].IP = pod.Status.HostIP
	}
}

// without returns a new slice of the elements of s that drop does not
// match, or nil: a new array, because shrinking in place would keep the old
// one alive.
func without[T any](s []T, drop func(T) bool) []T {
	var kept []T
	for _, e := range s {
		if !drop(e) {
			kept = append(kept, e)
		}
	}
	return slices.Clip(kept)
}

// unreadNodeCondition reports the node conditions no controller reads: all
// but Ready (the pressure conditions show up as taints, which are read).
func unreadNodeCondition(c corev1.NodeCondition) bool { return c.Type != corev1.NodeReady }

// admissionToleration reports the two tolerations the DefaultTolerationSeconds
// admission plugin adds to every pod (node.kubernetes.io/not-ready and
// unreachable, NoExecute): of a bound pod, controllers read only the
// tolerations of virtual nodes (is it a burst pod?).
func admissionToleration(t corev1.Toleration) bool {
	return (t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable) &&
		t.Operator == corev1.TolerationOpExists && t.Effect == corev1.TaintEffectNoExecute
}

// usesExtendedResources reports whether a container of the pod requests or
// limits an extended resource.
func usesExtendedResources(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				for name := range l {
					if !isNativeResource(name) {
						return true
					}
				}
			}
		}
	}
	return false
}

func stripContainer(c *corev1.Container) {
	*c = corev1.Container{
		Name:  c.Name,
		Image: c.Image,
		Ports: c.Ports,
		Resources: corev1.ResourceRequirements{
			Requests: c.Resources.Requests,
			Limits:   extendedOnly(c.Resources.Limits),
			Claims:   c.Resources.Claims,
		},
		LivenessProbe:  c.LivenessProbe,
		ReadinessProbe: c.ReadinessProbe,
		StartupProbe:   c.StartupProbe,
		RestartPolicy:  c.RestartPolicy,
	}
}

// extendedOnly returns the extended resources of l (those named with a
// domain, such as nvidia.com/gpu or tke.cloud.tencent.com/eni-ip), or nil
// if there are none. Controllers look for extended limits by name; no
// controller reads a pod's native limits.
func extendedOnly(l corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range l {
		if isNativeResource(name) {
			continue
		}
		if out == nil {
			out = make(corev1.ResourceList, 1)
		}
		out[name] = q
	}
	return out
}

// isNativeResource mirrors Kubernetes' helper: a name without a domain, or
// in kubernetes.io, is a native resource.
func isNativeResource(name corev1.ResourceName) bool {
	domain, _, found := strings.Cut(string(name), "/")
	return !found || domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// stripNode drops a node's image list, capacity (allocatable is what the
// fit check reads), system info, conditions other than Ready, and its
// volume, daemon-endpoint, runtime-handler, feature and config bookkeeping.
// Metadata, spec, allocatable, the Ready condition and addresses stay.
func stripNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	node.Status.Images = nil
	node.Status.Capacity = nil
	node.Status.NodeInfo = corev1.NodeSystemInfo{}
	if slices.ContainsFunc(node.Status.Conditions, unreadNodeCondition) {
		node.Status.Conditions = without(node.Status.Conditions, unreadNodeCondition)
	}
	node.Status.VolumesInUse = nil
	node.Status.VolumesAttached = nil
	node.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{}
	node.Status.Config = nil
	node.Status.RuntimeHandlers = nil
	node.Status.Features = nil
	return node, nil
}

// stripWorkload drops the pod template's spec (and a StatefulSet's volume
// claim templates) from every Deployment and StatefulSet an
// IngressDaemonSet does not control, and from every ReplicaSet and Job:
// the other readers only need the metadata, replicas, strategy, the
// template's metadata and the status, and nobody but the IngressDaemonSet
// controller, on its own objects, updates a cached workload.
func stripWorkload(obj any) (any, error) {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		if !controlledByIngressDaemonSet(w) {
			w.Spec.Template.Spec = corev1.PodSpec{}
		}
	case *appsv1.StatefulSet:
		if !controlledByIngressDaemonSet(w) {
			w.Spec.Template.Spec = corev1.PodSpec{}
			w.Spec.VolumeClaimTemplates = nil
		}
	case *appsv1.ReplicaSet:
		w.Spec.Template.Spec = corev1.PodSpec{}
	case *batchv1.Job:
		w.Spec.Template.Spec = corev1.PodSpec{}
	}
	return obj, nil
}

func controlledByIngressDaemonSet(obj client.Object) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.Kind == "IngressDaemonSet" && ref.APIVersion == appsv1alpha1.GroupVersion.String()
}
