package burstpolicy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
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
//
// It also moves a pod naming the legacy tke-scheduler, which edgeplane
// replaces, to the default scheduler (RewriteTKEScheduler): once the legacy
// chart is gone no scheduler of that name runs, and such a pod would stay
// Pending forever. The pod records the old name in
// AnnotationSchedulerNameRewrittenFrom; SchedulerNameReporter emits the
// Event once the pod exists (at admission it has neither a UID nor, for a
// generated name, a name).
type PodGater struct {
	// Reader lists BurstPolicies and gets the ClusterBurstPolicy (the cache).
	// Handle decodes only the fields the decision and the patch read
	// (decodeGateFields), not the whole pod.
	Reader client.Reader
	// DisableGate turns the gating off (--burstpolicy-disable-pod-gate).
	DisableGate bool
	// RewriteTKEScheduler moves pods naming tke-scheduler to the default
	// scheduler.
	RewriteTKEScheduler bool
	// Legacy says how the pods' legacy annotations are read.
	Legacy LegacyTranslation
}

// LegacyTranslation says how the legacy annotations a pod carries are
// translated, for the webhook to gate a pod whose policy may not exist yet.
type LegacyTranslation struct {
	// Table applies when the ClusterBurstPolicy names none.
	Table schedulingv1alpha1.LegacySwitchTable
	// Translated reports whether the pod's workload (its controller, or the
	// pod itself when it has none) is translated into a BurstPolicy; nil
	// means none is (the translators are off), so no pod is gated for its
	// annotations alone.
	Translated func(controller *metav1.OwnerReference) bool
}

// Handle gates the pod when a policy wants it, and moves it off tke-scheduler.
func (g *PodGater) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod, err := decodeGateFields(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	// The namespace of a new pod may be only in the request. The patch is
	// built directly, so setting it here does not leak into the patch.
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	var ops []jsonpatch.JsonPatchOperation
	var why []string
	if g.RewriteTKEScheduler && pod.Spec.SchedulerName == translate.LegacySchedulerName {
		ops = append(ops, rewriteSchedulerName(pod)...)
		why = append(why, "moved from "+translate.LegacySchedulerName+" to "+corev1.DefaultSchedulerName)
	}
	if !g.DisableGate {
		gate, reason := g.gate(ctx, pod)
		if gate {
			ops = append(ops, gateOp(pod))
			why = append(why, "gated for the burst decision")
		} else if len(ops) == 0 {
			return admission.Allowed(reason)
		}
	}
	if len(ops) == 0 {
		return admission.Allowed("nothing to change")
	}
	return admission.Patched(strings.Join(why, "; "), ops...)
}

// gateFields is the part of a Pod that ShouldGate and the patch read; the
// JSON decoder skips the rest (containers, volumes, status) without
// allocating it.
type gateFields struct {
	Metadata struct {
		Name            string                  `json:"name"`
		Namespace       string                  `json:"namespace"`
		Labels          map[string]string       `json:"labels"`
		Annotations     map[string]string       `json:"annotations"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName        string                     `json:"nodeName"`
		SchedulerName   string                     `json:"schedulerName"`
		SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates"`
	} `json:"spec"`
}

// decodeGateFields decodes the fields of a Pod the webhook reads from raw
// with the API machinery's JSON rules (case-sensitive field names, as the
// admission Decoder), into a Pod that holds nothing else.
func decodeGateFields(raw []byte) (*corev1.Pod, error) {
	if len(raw) == 0 {
		return nil, errors.New("there is no content to decode")
	}
	var f gateFields
	if err := utiljson.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("decoding the pod: %w", err)
	}
	m := &f.Metadata
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations, OwnerReferences: m.OwnerReferences},
		Spec:       corev1.PodSpec{NodeName: f.Spec.NodeName, SchedulerName: f.Spec.SchedulerName, SchedulingGates: f.Spec.SchedulingGates},
	}, nil
}

// gate decides whether the pod gets the burst-decision gate; when not, it
// says why.
func (g *PodGater) gate(ctx context.Context, pod *corev1.Pod) (bool, string) {
	// Read-only views of the cache: no deep copies on the admission path.
	policies := &schedulingv1alpha1.BurstPolicyList{}
	if err := g.Reader.List(ctx, policies, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, "cannot list BurstPolicies; not gated"
	}
	defaults := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := g.Reader.Get(ctx, client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, defaults, client.UnsafeDisableDeepCopy); client.IgnoreNotFound(err) != nil {
		return false, "cannot read the cluster default; not gated"
	}
	if !ShouldGate(pod, policies.Items, &defaults.Spec, g.Legacy) {
		return false, "no BurstPolicy with trigger Pending governs the pod"
	}
	return true, ""
}

// gateOp adds the burst-decision gate.
func gateOp(pod *corev1.Pod) jsonpatch.JsonPatchOperation {
	gate := corev1.PodSchedulingGate{Name: schedulingv1alpha1.SchedulingGateBurst}
	if pod.Spec.SchedulingGates == nil {
		return jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/schedulingGates", Value: []corev1.PodSchedulingGate{gate}}
	}
	return jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/schedulingGates/-", Value: gate}
}

// rewriteSchedulerName replaces the pod's schedulerName by the default
// scheduler's and records the old name.
func rewriteSchedulerName(pod *corev1.Pod) []jsonpatch.JsonPatchOperation {
	ops := []jsonpatch.JsonPatchOperation{{Operation: "replace", Path: "/spec/schedulerName", Value: corev1.DefaultSchedulerName}}
	if pod.Annotations == nil {
		return append(ops, jsonpatch.JsonPatchOperation{Operation: "add", Path: "/metadata/annotations",
			Value: map[string]string{schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom: pod.Spec.SchedulerName}})
	}
	key := strings.ReplaceAll(strings.ReplaceAll(schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom, "~", "~0"), "/", "~1")
	return append(ops, jsonpatch.JsonPatchOperation{Operation: "add", Path: "/metadata/annotations/" + key, Value: pod.Spec.SchedulerName})
}

// ShouldGate decides whether a new pod gets the burst-decision gate: it is
// not bound yet, not gated already, not a DaemonSet pod, not in an excluded
// namespace, and an enabled policy with trigger Pending (and room to burst)
// selects it, or it carries the legacy LOCAL_REPLICAS annotation (copied from
// its pod template) with bursting switched on and its workload is translated:
// the translated policy may not exist yet when the first replicas are
// created. A pod whose workload no translator handles is not gated for its
// annotations: nothing would decide it, and it would wait for the gate
// timeout. defaults is the ClusterBurstPolicy's spec (zero if none).
func ShouldGate(pod *corev1.Pod, policies []schedulingv1alpha1.BurstPolicy, defaults *schedulingv1alpha1.ClusterBurstPolicySpec, legacy LegacyTranslation) bool {
	if pod.Spec.NodeName != "" || hasGate(pod) {
		return false
	}
	controller := metav1.GetControllerOf(pod)
	if controller != nil && controller.Kind == "DaemonSet" {
		return false
	}
	excluded := defaults.ExcludedNamespaces
	if excluded == nil {
		excluded = decide.DefaultExcludedNamespaces
	}
	if slices.Contains(excluded, pod.Namespace) {
		return false
	}
	if legacy.Translated != nil && legacy.Translated(controller) && legacyGate(pod, defaults, effectiveTable(defaults, legacy.Table)) {
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
		if !decide.DecideSwitch(policyTable(p, defaults, legacy.Table), defaults.Enabled, p.Spec.Enabled).Burst {
			continue
		}
		if m, known := policyPods(p); known && m.matches(pod) {
			return true
		}
	}
	return false
}

// legacyGate reports whether the pod's own legacy annotations ask for the
// LOCAL_REPLICAS behaviour with bursting switched on.
func legacyGate(pod *corev1.Pod, defaults *schedulingv1alpha1.ClusterBurstPolicySpec, table schedulingv1alpha1.LegacySwitchTable) bool {
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
	return decide.DecideSwitch(table, defaults.Enabled, local).LocalReplicasEffective
}
