package burstpolicy

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// resolvedTarget is what a policy governs.
type resolvedTarget struct {
	// name is "<Kind>/<name>" or the selector, for status.target.
	name string
	// selector selects the governed pods; nil for a Pod target.
	selector labels.Selector
	// podName is set for a Pod target: that pod is its own workload.
	podName string
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
	switch gv.WithKind(ref.Kind).GroupKind() {
	case podKind:
		return r.resolvePod(ctx, p.Namespace, ref.Name)
	case jobKind:
		return r.resolveJob(ctx, p.Namespace, ref.Name)
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

// Target kinds without a scale subresource.
var (
	// podKind: a bare pod is its own workload (LOCAL_REPLICAS on a pod).
	podKind = schema.GroupKind{Kind: "Pod"}
	// jobKind: a Job's spec.selector selects its pods.
	jobKind = schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}
)

// resolvePod resolves a Pod target: the pod itself.
func (r *Reconciler) resolvePod(ctx context.Context, namespace, name string) (resolvedTarget, *targetError) {
	target := "Pod/" + name
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Pod{})
	switch {
	case apierrors.IsNotFound(err):
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetNotFound, message: fmt.Sprintf("pod %s not found", name)}
	case err != nil:
		return resolvedTarget{}, &targetError{transient: fmt.Errorf("getting %s: %w", target, err)}
	}
	return resolvedTarget{name: target, podName: name}, nil
}

// resolveJob resolves a Job target through its spec.selector (a Job has no
// scale subresource). The Job is read uncached, as a scale would be.
func (r *Reconciler) resolveJob(ctx context.Context, namespace, name string) (resolvedTarget, *targetError) {
	target := "Job/" + name
	job := &batchv1.Job{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, job)
	switch {
	case apierrors.IsNotFound(err):
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetNotFound, message: fmt.Sprintf("Job %s not found", name)}
	case apierrors.IsForbidden(err):
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("not allowed to read %s: grant get on jobs", target)}
	case err != nil:
		return resolvedTarget{}, &targetError{transient: fmt.Errorf("getting %s: %w", target, err)}
	}
	if job.Spec.Selector == nil {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonTargetUnsupported, message: fmt.Sprintf("%s has no selector", target)}
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || sel.Empty() {
		return resolvedTarget{}, &targetError{reason: schedulingv1alpha1.ReasonInvalidSelector, message: fmt.Sprintf("%s has selector %s", target, metav1.FormatLabelSelector(job.Spec.Selector))}
	}
	return resolvedTarget{name: target, selector: sel}, nil
}

// podMatcher says which pods a policy governs: those its selector matches,
// or the one pod a Pod target names.
type podMatcher struct {
	selector labels.Selector
	podName  string
}

// matches reports whether the matcher selects pod.
func (m podMatcher) matches(pod metav1.Object) bool {
	if m.podName != "" {
		return pod.GetName() == m.podName
	}
	return m.selector.Matches(labels.Set(pod.GetLabels()))
}

// policyPods returns which pods the policy governs, as far as it last
// resolved them (from its spec or status); known is false while its
// selector is not known yet.
func policyPods(p *schedulingv1alpha1.BurstPolicy) (m podMatcher, known bool) {
	if p.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			return podMatcher{}, false
		}
		return podMatcher{selector: sel}, true
	}
	if ref := p.Spec.TargetRef; ref != nil {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.WithKind(ref.Kind).GroupKind() == podKind {
			return podMatcher{podName: ref.Name}, true
		}
	}
	if p.Status.Selector == "" {
		return podMatcher{}, false
	}
	sel, err := labels.Parse(p.Status.Selector)
	if err != nil {
		return podMatcher{}, false
	}
	return podMatcher{selector: sel}, true
}
