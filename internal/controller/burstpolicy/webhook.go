package burstpolicy

import (
	"context"
	"net/http"
	"slices"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
)

// PodWebhookPath is where the pod-gating webhook is served.
const PodWebhookPath = "/mutate-v1-pod-burstpolicy"

// Scope: every pod creation outside kube-system and the manager's own
// namespace (edgeplane-system here; the chart puts its release namespace):
// system pods, and the manager's own pods, never wait on the manager, so a
// manager that is down cannot slow its own restart or the cluster's
// add-ons. failurePolicy=Ignore and timeoutSeconds=3 bound what an outage
// costs any other pod creation; the reconciler still handles a pod that was
// admitted ungated (see docs/burstpolicy.md).
// +kubebuilder:webhook:path=/mutate-v1-pod-burstpolicy,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=burst.pods.scheduling.edgeplane.io,admissionReviewVersions=v1,timeoutSeconds=3,reinvocationPolicy=Never,patch=`{"namespaceSelector":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system","edgeplane-system"]}]}}`

// PodGater is a mutating admission webhook on Pod creation. It puts the
// burst-decision scheduling gate on a new pod that a BurstPolicy with trigger
// Pending governs, so the scheduler waits until the reconciler has decided
// whether the pod is one of the local replicas (the gate is removed) or
// bursts (it is pinned to virtual nodes with their node selector and
// tolerations, then the gate is removed). It fails open: a pod it does not
// gate still bursts through the tolerations alone.
type PodGater struct {
	// Reader lists BurstPolicies and gets the ClusterBurstPolicy (the cache).
	Reader  client.Reader
	Decoder admission.Decoder
}

// Handle gates the pod when a policy wants it.
func (g *PodGater) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := g.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	// The namespace of a new pod may be only in the request. The patch is
	// built directly, so setting it here does not leak into the patch.
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	// Read-only views of the cache: no deep copies on the admission path.
	policies := &schedulingv1alpha1.BurstPolicyList{}
	if err := g.Reader.List(ctx, policies, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return admission.Allowed("cannot list BurstPolicies; not gated")
	}
	defaults := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, defaults, client.UnsafeDisableDeepCopy); client.IgnoreNotFound(err) != nil {
		return admission.Allowed("cannot read the cluster default; not gated")
	}
	if !ShouldGate(pod, policies.Items, &defaults.Spec) {
		return admission.Allowed("no BurstPolicy with trigger Pending governs the pod")
	}
	gate := corev1.PodSchedulingGate{Name: schedulingv1alpha1.SchedulingGateBurst}
	op := jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/schedulingGates/-", Value: gate}
	if pod.Spec.SchedulingGates == nil {
		op = jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/schedulingGates", Value: []corev1.PodSchedulingGate{gate}}
	}
	return admission.Patched("gated for the burst decision", op)
}

// ShouldGate decides whether a new pod gets the burst-decision gate: it is
// not bound yet, not gated already, not a DaemonSet pod, not in an excluded
// namespace, and an enabled policy with trigger Pending (and room to burst)
// selects it, or it carries the legacy LOCAL_REPLICAS annotation (copied from
// its pod template) with bursting switched on: its workload's translated
// policy may not exist yet when the first replicas are created.
// defaults is the ClusterBurstPolicy's spec (zero if none).
func ShouldGate(pod *corev1.Pod, policies []schedulingv1alpha1.BurstPolicy, defaults *schedulingv1alpha1.ClusterBurstPolicySpec) bool {
	if pod.Spec.NodeName != "" || hasGate(pod) {
		return false
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" {
		return false
	}
	excluded := defaults.ExcludedNamespaces
	if excluded == nil {
		excluded = decide.DefaultExcludedNamespaces
	}
	if slices.Contains(excluded, pod.Namespace) {
		return false
	}
	if legacyGate(pod, defaults) {
		return true
	}
	for i := range policies {
		p := &policies[i]
		if !p.DeletionTimestamp.IsZero() || p.Spec.Trigger != schedulingv1alpha1.TriggerPending {
			continue
		}
		if p.Spec.MaxBurstReplicas != nil && *p.Spec.MaxBurstReplicas == 0 {
			continue
		}
		if !decide.DecideSwitch(defaults.Enabled, p.Spec.Enabled).Burst {
			continue
		}
		if sel := policySelectorHint(p); sel != nil && sel.Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// legacyGate reports whether the pod's own legacy annotations ask for the
// LOCAL_REPLICAS behaviour with bursting switched on.
func legacyGate(pod *corev1.Pod, defaults *schedulingv1alpha1.ClusterBurstPolicySpec) bool {
	v, ok := pod.Annotations[translate.AnnotationLocalReplicas]
	if !ok {
		return false
	}
	if _, err := decide.ParseLocalReplicas(v); err != nil {
		return false
	}
	local, err := decide.ParseSwitch(pod.Annotations[translate.AnnotationAutoScaleEKS])
	if err != nil {
		return false
	}
	return decide.DecideSwitch(defaults.Enabled, local).LocalReplicasEffective
}
