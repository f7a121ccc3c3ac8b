package ingressdaemonset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/decide"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
)

// objectsVersion is part of every revision: bump it when the way templates
// are turned into Deployments changes, so nodes are rolled to the new shape.
const objectsVersion = "1"

// hashOf returns a short stable hash of v's JSON.
func hashOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only unsupported types fail; API types never do.
		panic(fmt.Sprintf("hashing %T: %v", v, err))
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())[:10]
}

// Revision is the revision of a template: nodes whose Deployment has another
// revision are rolled.
func Revision(t appsv1alpha1.PodTemplate) string {
	return hashOf(struct {
		V string
		T appsv1alpha1.PodTemplate
	}{objectsVersion, t})
}

// ownerLabels are the labels of every object generated for ids.
func ownerLabels(ids *appsv1alpha1.IngressDaemonSet) map[string]string {
	return map[string]string{appsv1alpha1.LabelIngressDaemonSet: naming.LabelValue(ids.Name)}
}

// nodeLabels are the labels edgeplane adds to a node's Deployment, its
// selector and its pods.
func nodeLabels(ids *appsv1alpha1.IngressDaemonSet, node string) map[string]string {
	l := ownerLabels(ids)
	l[appsv1alpha1.LabelNode] = naming.LabelValue(node)
	return l
}

func ownerRef(ids *appsv1alpha1.IngressDaemonSet) metav1.OwnerReference {
	return *metav1.NewControllerRef(ids, appsv1alpha1.GroupVersion.WithKind("IngressDaemonSet"))
}

// NodeMatches reports whether node should run ids's replicas: spec.nodeSelector
// and the template's nodeSelector both match, and the node is not being deleted.
func NodeMatches(ids *appsv1alpha1.IngressDaemonSet, node *corev1.Node) bool {
	if node.DeletionTimestamp != nil {
		return false
	}
	return nodeSelector(ids).Matches(labels.Set(node.Labels))
}

// nodeSelector selects the nodes whose labels both spec.nodeSelector and
// the template's nodeSelector match (a key the two give different values
// matches no node).
func nodeSelector(ids *appsv1alpha1.IngressDaemonSet) labels.Selector {
	reqs, _ := labels.SelectorFromSet(ids.Spec.NodeSelector).Requirements()
	tmpl, _ := labels.SelectorFromSet(ids.Spec.Template.Spec.NodeSelector).Requirements()
	return labels.NewSelector().Add(append(reqs, tmpl...)...)
}

// SelectorMatchesTemplate reports whether spec.selector selects the template's labels.
func SelectorMatchesTemplate(ids *appsv1alpha1.IngressDaemonSet) (bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(ids.Spec.Selector)
	if err != nil {
		return false, fmt.Errorf("parsing spec.selector: %w", err)
	}
	return !sel.Empty() && sel.Matches(labels.Set(ids.Spec.Template.Metadata.Labels)), nil
}

// deploymentStrategy is a node's Deployment strategy: the spec's per-node
// knobs, defaulting to one pod at a time without surge (host ports and
// hostNetwork need that), or all pods at once in detach mode (the node
// serves no traffic then).
func deploymentStrategy(ids *appsv1alpha1.IngressDaemonSet) appsv1.DeploymentStrategy {
	ru := ids.Spec.UpdateStrategy.RollingUpdate
	maxUnavailable := intstr.FromInt32(1)
	if decide.DetachMode(ru) {
		maxUnavailable = intstr.FromString("100%")
	}
	maxSurge := intstr.FromInt32(0)
	if ru != nil && ru.MaxUnavailablePodsPerNode != nil {
		maxUnavailable = *ru.MaxUnavailablePodsPerNode
	}
	if ru != nil && ru.MaxSurgedPodsPerNode != nil {
		maxSurge = *ru.MaxSurgedPodsPerNode
	}
	return appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge},
	}
}

// podTemplate turns the IngressDaemonSet's template into node's pod
// template: the user's labels plus edgeplane's, and a required node affinity
// on the node's name (what the DaemonSet controller does), so the real
// scheduler places the pods and accounts for their resources.
func podTemplate(ids *appsv1alpha1.IngressDaemonSet, node string) corev1.PodTemplateSpec {
	t := ids.Spec.Template.DeepCopy()
	podLabels := maps.Clone(t.Metadata.Labels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	maps.Copy(podLabels, nodeLabels(ids, node))
	spec := t.Spec
	pin := corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		// Terms are ORed: each must pin the node.
		terms[i].MatchFields = append(terms[i].MatchFields, pin)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: t.Metadata.Annotations},
		Spec:       spec,
	}
}

func replicasPerNode(ids *appsv1alpha1.IngressDaemonSet) int32 {
	if ids.Spec.ReplicasPerNode < 1 {
		return 1
	}
	return ids.Spec.ReplicasPerNode
}

// newDeployment builds node's Deployment at the update revision.
func newDeployment(ids *appsv1alpha1.IngressDaemonSet, node, revision string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.DeploymentName(ids.Name, node),
			Namespace:       ids.Namespace,
			OwnerReferences: []metav1.OwnerReference{ownerRef(ids)},
		},
	}
	sel := ids.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	maps.Copy(sel.MatchLabels, nodeLabels(ids, node))
	d.Spec.Selector = sel
	syncDeployment(ids, d, node, revision, true)
	return d
}

// syncDeployment makes d's edgeplane-owned fields match ids for node.
// withTemplate also puts the current template (revision) in; otherwise d
// keeps the template it runs (a node the rollout has not reached keeps its
// old pods), and only replicas, strategy and labels change. A node that
// runs the current revision gets the current template back, so a hand edit
// to it is undone. It reports whether the cluster's object, as d was before,
// lacks any owned field as wanted: whether d must be applied.
func syncDeployment(ids *appsv1alpha1.IngressDaemonSet, d *appsv1.Deployment, node, revision string, withTemplate bool) bool {
	before := d.DeepCopy()
	runs := d.Annotations[appsv1alpha1.AnnotationRevision]
	if withTemplate {
		runs = revision
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	maps.Copy(d.Labels, ids.Spec.Template.Metadata.Labels)
	maps.Copy(d.Labels, nodeLabels(ids, node))
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[appsv1alpha1.AnnotationNode] = node
	d.Annotations[appsv1alpha1.AnnotationRevision] = runs
	d.Spec.Replicas = ptr.To(replicasPerNode(ids))
	d.Spec.Strategy = deploymentStrategy(ids)
	if runs == revision {
		d.Spec.Template = podTemplate(ids, node)
	}
	return !covers(before, ownedDeployment(ids, d))
}

// DeploymentStatusCurrent reports whether the Deployment controller has
// observed d's latest spec, so that its status describes it (a status
// older than the spec tells nothing about the spec's replicas).
func DeploymentStatusCurrent(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation
}

// DeploymentAvailable reports whether every replica of d is ready.
func DeploymentAvailable(d *appsv1.Deployment) bool {
	want := ptr.Deref(d.Spec.Replicas, 1)
	return DeploymentStatusCurrent(d) && d.Status.ReadyReplicas >= want
}

// DeploymentPartlyReady reports whether some but not every replica of d is
// ready, by a current status: the node serves, with fewer replicas than it
// wants.
func DeploymentPartlyReady(d *appsv1.Deployment) bool {
	return DeploymentStatusCurrent(d) && d.Status.ReadyReplicas > 0 && !DeploymentAvailable(d)
}

// DeploymentRolledOut reports whether the Deployment controller has finished
// rolling d to its current template: all replicas updated and ready, no old
// or terminating pods left.
func DeploymentRolledOut(d *appsv1.Deployment) bool {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	return DeploymentStatusCurrent(d) && s.UpdatedReplicas == want && s.Replicas == want &&
		s.ReadyReplicas >= want && ptr.Deref(s.TerminatingReplicas, 0) == 0
}

// phaseOf returns the rollout phase recorded on d (Ready when none).
func phaseOf(d *appsv1.Deployment) appsv1alpha1.NodePhase {
	switch p := appsv1alpha1.NodePhase(d.Labels[appsv1alpha1.LabelPhase]); p {
	case appsv1alpha1.NodePhaseDetaching, appsv1alpha1.NodePhaseUpdating, appsv1alpha1.NodePhaseReattaching:
		return p
	default:
		return appsv1alpha1.NodePhaseReady
	}
}
