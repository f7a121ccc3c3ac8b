package rbac

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxWebhookTimeoutSeconds bounds how long any request may wait on the
// manager's webhooks.
const MaxWebhookTimeoutSeconds = 3

// Webhook is what the scope rules read of one webhook of a Mutating- or
// ValidatingWebhookConfiguration.
type Webhook struct {
	Name              string
	Rules             []admissionregistrationv1.RuleWithOperations
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	TimeoutSeconds    *int32
}

// WebhookViolations lists how w oversteps its scope, given the manager's
// namespace: a timeout above MaxWebhookTimeoutSeconds (or the API server's
// default of 10 s); a webhook on pods that does not skip kube-system and
// managerNS by their kubernetes.io/metadata.name label; a webhook on nodes
// (cluster-scoped, so no namespaceSelector applies) without an
// objectSelector.
func WebhookViolations(w Webhook, managerNS string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, w.Name+": "+fmt.Sprintf(format, args...)) }
	if w.TimeoutSeconds == nil || *w.TimeoutSeconds > MaxWebhookTimeoutSeconds {
		bad("timeoutSeconds %v, want at most %d", deref(w.TimeoutSeconds), MaxWebhookTimeoutSeconds)
	}
	if matchesResource(w, "pods") {
		for _, ns := range []string{metav1.NamespaceSystem, managerNS} {
			if !excludesNamespace(w.NamespaceSelector, ns) {
				bad("sees pods in namespace %s (namespaceSelector %v)", ns, w.NamespaceSelector)
			}
		}
	}
	if matchesResource(w, "nodes") && (w.ObjectSelector == nil || len(w.ObjectSelector.MatchLabels)+len(w.ObjectSelector.MatchExpressions) == 0) {
		bad("sees every node: no objectSelector")
	}
	return out
}

func deref(p *int32) any {
	if p == nil {
		return "unset (10)"
	}
	return *p
}

func matchesResource(w Webhook, resource string) bool {
	for _, r := range w.Rules {
		if slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*") {
			return true
		}
	}
	return false
}

// excludesNamespace reports whether sel rejects a namespace named ns by its
// kubernetes.io/metadata.name label (which the API server sets on every
// namespace), whatever its other labels.
func excludesNamespace(sel *metav1.LabelSelector, ns string) bool {
	if sel == nil {
		return false
	}
	if v, ok := sel.MatchLabels[corev1.LabelMetadataName]; ok && v != ns {
		return true
	}
	for _, e := range sel.MatchExpressions {
		if e.Key != corev1.LabelMetadataName {
			continue
		}
		switch e.Operator {
		case metav1.LabelSelectorOpNotIn:
			if slices.Contains(e.Values, ns) {
				return true
			}
		case metav1.LabelSelectorOpIn:
			if !slices.Contains(e.Values, ns) {
				return true
			}
		case metav1.LabelSelectorOpDoesNotExist:
			return true
		}
	}
	return false
}

// AdmissionPolicy is what the scope rules read of one MutatingAdmissionPolicy.
type AdmissionPolicy struct {
	Name string
	// Rules are its matchConstraints' resourceRules.
	Rules             []admissionregistrationv1.NamedRuleWithOperations
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
}

// PolicyViolations lists how p oversteps its scope, by the webhooks' rules
// (a policy runs inside the API server, so it has no timeout): a policy on
// pods must skip kube-system and managerNS, one on nodes needs an
// objectSelector.
func PolicyViolations(p AdmissionPolicy, managerNS string) []string {
	w := Webhook{Name: p.Name, NamespaceSelector: p.NamespaceSelector, ObjectSelector: p.ObjectSelector, TimeoutSeconds: new(int32)}
	for _, r := range p.Rules {
		w.Rules = append(w.Rules, r.RuleWithOperations)
	}
	return WebhookViolations(w, managerNS)
}
