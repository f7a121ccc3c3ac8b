package burstpolicy_test

import (
	"context"
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/testsupport/admissionbench"
)

// policyReader serves the cache's read-only answers the webhook asks for:
// the namespace's BurstPolicies, and no ClusterBurstPolicy.
type policyReader struct {
	policies []schedulingv1alpha1.BurstPolicy
}

func (r policyReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: schedulingv1alpha1.GroupVersion.Group, Resource: "clusterburstpolicies"}, key.Name)
}

func (r policyReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l, ok := list.(*schedulingv1alpha1.BurstPolicyList)
	if !ok {
		return fmt.Errorf("unexpected list %T", list)
	}
	l.Items = r.policies
	return nil
}

// BenchmarkPodWebhook is the pod webhook's cost per request (the whole
// HTTP handler, as the API server calls it) on a Deployment's defaulted
// pod: a pod a Pending-trigger policy governs (gated) and one it does not
// (allowed unchanged), in a namespace with three policies.
func BenchmarkPodWebhook(b *testing.B) {
	var policies []schedulingv1alpha1.BurstPolicy
	for i, app := range []string{"web", "api", "worker"} {
		policies = append(policies, schedulingv1alpha1.BurstPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "bench"},
			Spec: schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Trigger: schedulingv1alpha1.TriggerPending},
		})
	}
	h := &webhook.Admission{Handler: &burstpolicy.PodGater{Reader: policyReader{policies}}}
	gvr := metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	gvk := metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, c := range []struct {
		name, app string
		patched   bool
	}{{"gated", "worker", true}, {"ungoverned", "other", false}} {
		b.Run(c.name, func(b *testing.B) {
			pod := admissionbench.Pod("bench", "web-7d9f8c6b5-x2k9p", map[string]string{"app": c.app, "pod-template-hash": "7d9f8c6b5"})
			body := admissionbench.Review(b, admissionv1.Create, gvr, gvk, "bench", pod.Name, pod, nil)
			if r := admissionbench.Serve(b, h, body); !r.Allowed || (len(r.Patch) > 0) != c.patched {
				b.Fatalf("unexpected answer: allowed %v, patch %s", r.Allowed, r.Patch)
			}
			admissionbench.Bench(b, h, body)
		})
	}
}
