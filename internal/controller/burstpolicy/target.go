package burstpolicy

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// resolvedTarget is what a policy governs.
type resolvedTarget struct {
	// name is "<Kind>/<name>" or the selector, for status.target.
	name string
	// selector selects the governed pods.
	selector labels.Selector
}

// targetError says why a policy's pods could not be resolved: a condition
// reason for the user, or a transient error to retry.
type targetError struct {
	reason, message string
	transient       error
}

// resolveTarget finds the governed pods' selector: the policy's own selector,
// or the status.selector of the target's scale subresource.
func (r *Reconciler) resolveTarget(ctx context.Context, p *schedulingv1alpha1.BurstPolicy) (resolvedTarget, *targetError) {
	if p.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonInvalidSelector, message: err.Error()}
		}
		if sel.Empty() {
			return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonInvalidSelector, message: "the selector is empty and would select every pod of the namespace"}
		}
		return resolvedTarget{name: sel.String(), selector: sel}, nil
	}
	ref := p.Spec.TargetRef
	name := ref.Kind + "/" + ref.Name
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("apiVersion %q: %v", ref.APIVersion, err)}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
	obj.SetNamespace(p.Namespace)
	obj.SetName(ref.Name)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.Client.SubResource("scale").Get(ctx, obj, u); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetNotFound, message: fmt.Sprintf("%s %s not found (or it has no scale subresource)", ref.Kind, ref.Name)}
		case meta.IsNoMatchError(err):
			return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("kind %s of %s is not served by the API server", ref.Kind, ref.APIVersion)}
		case apierrors.IsForbidden(err):
			return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("not allowed to read the scale of %s: grant get on its scale subresource", name)}
		}
		return resolvedTarget{}, &targetError{transient: fmt.Errorf("getting the scale of %s: %w", name, err)}
	}
	scale := &autoscalingv1.Scale{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, scale); err != nil {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("the scale of %s cannot be read: %v", name, err)}
	}
	if scale.Status.Selector == "" {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("the scale of %s reports no selector", name)}
	}
	sel, err := labels.Parse(scale.Status.Selector)
	if err != nil || sel.Empty() {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonInvalidSelector, message: fmt.Sprintf("the scale of %s reports selector %q", name, scale.Status.Selector)}
	}
	return resolvedTarget{name: name, selector: sel}, nil
}

// policySelectorHint returns the selector the policy last resolved (from its
// spec or status), or nil when it is not known yet.
func policySelectorHint(p *schedulingv1alpha1.BurstPolicy) labels.Selector {
	if p.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			return nil
		}
		return sel
	}
	if p.Status.Selector == "" {
		return nil
	}
	sel, err := labels.Parse(p.Status.Selector)
	if err != nil {
		return nil
	}
	return sel
}
