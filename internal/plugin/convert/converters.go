package convert

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	burst "github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
	fip "github.com/edgeplane/edgeplane/internal/controller/floatippool/translate"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/importer"
	eip "github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
)

// Converters are the legacy inputs `kubectl edgeplane convert` understands,
// one entry per input kind.
func Converters() []Converter {
	return []Converter{
		{Name: "mumoshu IngressDaemonSet", Match: isLegacyIngressDaemonSet, Convert: convertIngressDaemonSet},
		{Name: "TKE resilience workload", Match: isBurstWorkload, Convert: convertBurstWorkload},
		{Name: "eks-config ConfigMap", Match: isEKSConfig, Convert: convertEKSConfig},
		{Name: "galaxy floatingip-config ConfigMap", Match: isFloatingIPConfig, Convert: convertFloatingIPConfig},
		{Name: "galaxy Pool", Match: isGalaxyPool, Convert: convertGalaxyPool},
		// Phase 1: a FloatingIP's pool is found among the pools above.
		{Name: "galaxy FloatingIP", Phase: 1, Match: isGalaxyFloatingIP, Convert: convertGalaxyFloatingIP},
		{Name: "aia-ip-controller node", Match: isAIANode, Convert: convertAIANode},
		{Name: "aws-pod-eip-controller pod", Match: isEIPPod, Convert: convertEIPPod},
		{Name: "aws-pod-eip-controller workload", Match: isEIPWorkload, Convert: convertEIPWorkload},
		{Name: "kubeip DaemonSet", Match: isKubeIPDaemonSet, Convert: convertKubeIPDaemonSet},
		// Phase 1: a node is converted for the kubeip DaemonSets above.
		{Name: "kubeip node", Phase: 1, Match: isAWSNode, Convert: convertKubeIPNode},
	}
}

// aws-samples aws-pod-eip-controller: a pod with the type annotation gets a
// PodElasticIP named after it, as the in-cluster translator makes.

func isEIPPod(u *unstructured.Unstructured) bool {
	return isKind(u, "", "Pod") && eip.Parse(u.GetAnnotations()).Present
}

func convertEIPPod(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	d := eip.Parse(u.GetAnnotations())
	if d.Invalid != "" {
		return nil, []string{fmt.Sprintf("not converted: %s", d.Invalid)}, nil
	}
	p := &networkingv1alpha1.PodElasticIP{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()},
		Spec:       networkingv1alpha1.PodElasticIPSpec{PodName: u.GetName(), Allocation: d.Allocation},
	}
	return []client.Object{p}, nil, nil
}

// A workload's pod template with the annotation: its pods' names are not
// known ahead, so there is nothing to write; the annotation keeps working.

func isEIPWorkload(u *unstructured.Unstructured) bool {
	if u.GroupVersionKind().Group != appsv1.GroupName {
		return false
	}
	ann, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "annotations")
	return eip.Parse(ann).Present
}

func convertEIPWorkload(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	return nil, []string{"its pod template's aws-pod-eip-controller annotations keep working: edgeplane's translator makes a PodElasticIP for each pod (pod names are not known ahead, so nothing is written)"}, nil
}

// tkestack aia-ip-controller: a node labelled need-aia-ip=true gets a binding
// named after it, with the manager's defaults (AnycastEIP, default config).

func isAIANode(u *unstructured.Unstructured) bool {
	return isKind(u, "", "Node") && u.GetLabels()[networkingv1alpha1.LegacyLabelNeedAIAIP] == "true"
}

func convertAIANode(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	b := &networkingv1alpha1.AnycastIPBinding{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName()},
		Spec:       networkingv1alpha1.AnycastIPBindingSpec{NodeName: u.GetName(), AddressType: networkingv1alpha1.AddressTypeAnycastEIP},
	}
	var warns []string
	if id := u.GetAnnotations()[networkingv1alpha1.LegacyAnnotationAnycastIPID]; id != "" {
		// Already bound by aia-ip-controller: adopt that address.
		b.Spec.AddressID = id
		warns = append(warns, fmt.Sprintf("adopts the address %s aia-ip-controller bound to the node", id))
	}
	return []client.Object{b}, warns, nil
}

// mumoshu/ingress-daemonset-controller.

func isLegacyIngressDaemonSet(u *unstructured.Unstructured) bool {
	return isKind(u, importer.LegacyGroup, "IngressDaemonSet")
}

func convertIngressDaemonSet(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	ids, warns, err := importer.Convert(u.Object)
	if err != nil {
		return nil, nil, err
	}
	return []client.Object{ids}, warns, nil
}

// TKE resilience: a workload whose pod template (a bare pod: whose own
// metadata) carries AUTO_SCALE_EKS / LOCAL_REPLICAS, or whose pods name the
// chart's tke-scheduler.

// podTemplatePaths are where a kind keeps its pod template, by kind; other
// kinds (those with a scale subresource, by convention) keep it at
// spec.template.
var podTemplatePaths = map[string][]string{
	"Pod":     nil,
	"CronJob": {"spec", "jobTemplate", "spec", "template"},
}

// podTemplate returns the path of u's pod template (nil: u is a pod).
func podTemplate(u *unstructured.Unstructured) []string {
	if path, ok := podTemplatePaths[u.GetKind()]; ok && (u.GetKind() != "Pod" || isKind(u, "", "Pod")) {
		return path
	}
	return []string{"spec", "template"}
}

// burstAnnotations returns the annotations the translator reads: the pod
// template's, or a bare pod's own.
func burstAnnotations(u *unstructured.Unstructured) map[string]string {
	ann, _, _ := unstructured.NestedStringMap(u.Object, append(podTemplate(u), "metadata", "annotations")...)
	return ann
}

// schedulerNamePath is where u's pods name their scheduler.
func schedulerNamePath(u *unstructured.Unstructured) []string {
	return append(podTemplate(u), "spec", "schedulerName")
}

func isBurstWorkload(u *unstructured.Unstructured) bool {
	if isKind(u, appsv1.GroupName, "DaemonSet") {
		return false // DaemonSet pods never burst
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, podTemplate(u)...); !ok && !isKind(u, "", "Pod") {
		return false
	}
	name, _, _ := unstructured.NestedString(u.Object, schedulerNamePath(u)...)
	return burst.HasLegacyAnnotations(burstAnnotations(u)) || name == burst.LegacySchedulerName
}

// noteCronJob: a CronJob's policies are made in the cluster, per Job.
const noteCronJob = "its Jobs carry AUTO_SCALE_EKS/LOCAL_REPLICAS on: edgeplane's translator makes a BurstPolicy for each Job, each counting against its own floor (Job names are not known ahead, so nothing is written)"

func convertBurstWorkload(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	if err := requireName(u); err != nil {
		return nil, nil, err
	}
	var out []client.Object
	var warns []string
	ann := burstAnnotations(u)
	switch {
	case !burst.HasLegacyAnnotations(ann):
	case isKind(u, batchv1.GroupName, "CronJob"):
		warns = append(warns, noteCronJob)
	default:
		spec, problems := burst.PolicySpec(u.GetAPIVersion(), u.GetKind(), u.GetName(), ann)
		out = append(out, &schedulingv1alpha1.BurstPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: burst.PolicyName(u.GetKind(), u.GetName()), Namespace: u.GetNamespace()},
			Spec:       spec,
		})
		warns = append(warns, problems...)
	}
	path := schedulerNamePath(u)
	if name, _, _ := unstructured.NestedString(u.Object, path...); name == burst.LegacySchedulerName {
		rewritten := u.DeepCopy()
		unstructured.RemoveNestedField(rewritten.Object, path...)
		out = append(out, rewritten)
		warns = append(warns, fmt.Sprintf("%s: %s removed, so the default scheduler schedules the pods: no %s runs once the TKE resilience chart is gone, and edgeplane bursts with the stock kube-scheduler (the manager also rewrites it on new pods unless --burstpolicy-rewrite-tke-scheduler=false); apply the rewritten %s",
			strings.Join(path, "."), burst.LegacySchedulerName, burst.LegacySchedulerName, u.GetKind()))
	}
	return out, warns, nil
}

// TKE resilience: the cluster-wide switch in kube-system/eks-config.

func isEKSConfig(u *unstructured.Unstructured) bool {
	return isKind(u, "", "ConfigMap") && u.GetName() == burst.EKSConfigName &&
		(u.GetNamespace() == "" || u.GetNamespace() == burst.DefaultEKSConfigNamespace)
}

func convertEKSConfig(_ *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	data, _, err := unstructured.NestedStringMap(u.Object, "data")
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	spec, err := burst.ClusterPolicySpec(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("%v; no ClusterBurstPolicy written, the cluster default stays on", err)}, nil
	}
	var warns []string
	if _, ok := data[burst.AnnotationAutoScaleEKS]; !ok {
		warns = append(warns, fmt.Sprintf("no %s key: the global switch is unset, which the legacy chart read as on", burst.AnnotationAutoScaleEKS))
	}
	if spec.Governs == schedulingv1alpha1.GovernsAllPods {
		warns = append(warns, "governs: AllPods: every pending pod that no BurstPolicy selects bursts once the scheduler finds no local room, as under the legacy chart with its global switch on")
	}
	p := &schedulingv1alpha1.ClusterBurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName},
		Spec:       spec,
	}
	return []client.Object{p}, warns, nil
}

// galaxy-ipam.

func isFloatingIPConfig(u *unstructured.Unstructured) bool {
	return isKind(u, "", "ConfigMap") && u.GetName() == fip.ConfigMapName &&
		(u.GetNamespace() == "" || u.GetNamespace() == fip.ConfigMapNamespace)
}

func convertFloatingIPConfig(c *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	data, _, err := unstructured.NestedStringMap(u.Object, "data")
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	v, ok := data[fip.ConfigMapKey]
	if !ok {
		return nil, []string{fmt.Sprintf("no %s key: nothing to convert", fip.ConfigMapKey)}, nil
	}
	pools, err := fip.PoolsFromConfig(v)
	if err != nil {
		return nil, nil, err
	}
	out := make([]client.Object, 0, len(pools))
	for _, p := range pools {
		c.Pools = append(c.Pools, p)
		out = append(out, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Spec: p.Spec})
	}
	return out, nil, nil
}

const galaxyGroup = "galaxy.k8s.io"

func isGalaxyPool(u *unstructured.Unstructured) bool { return isKind(u, galaxyGroup, "Pool") }

func convertGalaxyPool(c *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	if err := requireName(u); err != nil {
		return nil, nil, err
	}
	size, _, err := unstructured.NestedInt64(u.Object, "size")
	if err != nil {
		return nil, nil, fmt.Errorf("size: %w", err)
	}
	if size < 0 || size > 1<<30 {
		return nil, nil, fmt.Errorf("size %d is out of range", size)
	}
	pre, _, err := unstructured.NestedBool(u.Object, "preAllocateIP")
	if err != nil {
		return nil, nil, fmt.Errorf("preAllocateIP: %w", err)
	}
	p := fip.PoolFromGalaxyPool(u.GetName(), int32(size), pre)
	c.Pools = append(c.Pools, p)
	return []client.Object{&networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Spec: p.Spec}}, nil, nil
}

func isGalaxyFloatingIP(u *unstructured.Unstructured) bool {
	return isKind(u, galaxyGroup, "FloatingIP")
}

// noteFloatIPStatus is said once when galaxy FloatingIPs are converted.
const noteFloatIPStatus = "galaxy FloatingIPs were converted without their holders (FloatIP status is not written to manifests): " +
	"pods keep their IPs only if the manager's galaxy migration (or galaxy itself) carries the allocations over before the pods are recreated"

func convertGalaxyFloatingIP(c *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	if err := requireName(u); err != nil {
		return nil, nil, err
	}
	key, _, _ := unstructured.NestedString(u.Object, "spec", "key")
	attr, _, _ := unstructured.NestedString(u.Object, "spec", "attribute")
	policy, _, _ := unstructured.NestedInt64(u.Object, "spec", "policy")
	updated, _, _ := unstructured.NestedString(u.Object, "spec", "updateTime")
	ut, _ := time.Parse(time.RFC3339Nano, updated)
	_, reserved := u.GetLabels()[networkingv1alpha1.LabelFloatIPReserved]
	f, err := fip.FloatIPFromGalaxy(fip.GalaxyFloatingIP{
		Name: u.GetName(), Key: key, Attribute: attr, Policy: int(policy), UpdateTime: ut, Reserved: reserved,
	}, c.Pools)
	if err != nil {
		return nil, []string{fmt.Sprintf("skipped: %v (convert it together with kube-system/%s)", err, fip.ConfigMapName)}, nil
	}
	c.Note(noteFloatIPStatus)
	return []client.Object{f}, nil, nil
}
