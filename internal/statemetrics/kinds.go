package statemetrics

import (
	"context"
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Kind reads the objects of one kind for the collector.
type Kind struct {
	// Name is the kind, the metrics' kind label.
	Name string
	// Controller is the manager's controller that reconciles it: the kind
	// is read only when that controller runs, so a kind whose CRD is not
	// installed (its controller switched off) is never listed.
	Controller string
	list       func(ctx context.Context, r client.Reader) ([]State, error)
}

// Kinds lists every kind with a Ready condition, by the controller that
// reconciles it.
func Kinds() []Kind {
	return []Kind{
		{Name: "ClusterProviderConfig", Controller: "providerconfig", list: listManaged(&cloudv1alpha1.ClusterProviderConfigList{})},
		{Name: "ProviderConfig", Controller: "providerconfig", list: listManaged(&cloudv1alpha1.ProviderConfigList{})},
		{Name: "PodElasticIP", Controller: "podelasticip", list: listManaged(&networkingv1alpha1.PodElasticIPList{})},
		{Name: "AnycastIPBinding", Controller: "anycastipbinding", list: listManaged(&networkingv1alpha1.AnycastIPBindingList{})},
		{Name: "NodeElasticIP", Controller: "nodeelasticip", list: listManaged(&networkingv1alpha1.NodeElasticIPList{})},
		{Name: "FloatIPPool", Controller: "floatippool", list: listConditioned(&networkingv1alpha1.FloatIPPoolList{})},
		{Name: "FloatIP", Controller: "floatippool", list: listConditioned(&networkingv1alpha1.FloatIPList{})},
		{Name: "IngressDaemonSet", Controller: "ingressdaemonset", list: listConditioned(&appsv1alpha1.IngressDaemonSetList{})},
		{Name: "BurstPolicy", Controller: "burstpolicy", list: listConditioned(&schedulingv1alpha1.BurstPolicyList{})},
		{Name: "ClusterBurstPolicy", Controller: "burstpolicy", list: listConditioned(&schedulingv1alpha1.ClusterBurstPolicyList{})},
	}
}

// managed is a crossplane-style kind: xpv2 conditions.
type managed interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
	GetObservedGeneration() int64
}

// conditioned is an in-cluster kind: metav1 conditions.
type conditioned interface {
	client.Object
	GetConditions() []metav1.Condition
	GetObservedGeneration() int64
}

func listManaged(list client.ObjectList) func(context.Context, client.Reader) ([]State, error) {
	return func(ctx context.Context, r client.Reader) ([]State, error) {
		return listStates(ctx, r, list, func(o client.Object) (State, bool) {
			m, ok := o.(managed)
			if !ok {
				return State{}, false
			}
			c := m.GetCondition(xpv2.TypeReady)
			s := State{Ready: string(c.Status), Reason: string(c.Reason), Since: c.LastTransitionTime.Time}
			if c.Status == "" {
				s.Ready = ""
			}
			// crossplane's conditions carry no generation of their own;
			// status.observedGeneration says which spec they describe.
			s.Stale = m.GetObservedGeneration() != 0 && m.GetObservedGeneration() < m.GetGeneration()
			return s, true
		})
	}
}

func listConditioned(list client.ObjectList) func(context.Context, client.Reader) ([]State, error) {
	return func(ctx context.Context, r client.Reader) ([]State, error) {
		return listStates(ctx, r, list, func(o client.Object) (State, bool) {
			m, ok := o.(conditioned)
			if !ok {
				return State{}, false
			}
			c := meta.FindStatusCondition(m.GetConditions(), "Ready")
			if c == nil {
				return State{}, true
			}
			return State{Ready: string(c.Status), Reason: c.Reason, Since: c.LastTransitionTime.Time,
				Stale: c.ObservedGeneration != 0 && c.ObservedGeneration < m.GetGeneration()}, true
		})
	}
}

// listStates lists one kind and reads each item's State with state. An item
// without a Ready condition starts its spell at its creation.
func listStates(ctx context.Context, r client.Reader, list client.ObjectList, state func(client.Object) (State, bool)) ([]State, error) {
	list = list.DeepCopyObject().(client.ObjectList)
	if err := r.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing %T: %w", list, err)
	}
	var out []State
	err := meta.EachListItem(list, func(item runtime.Object) error {
		o, ok := item.(client.Object)
		if !ok {
			return nil
		}
		s, ok := state(o)
		if !ok {
			return nil
		}
		s.Namespace, s.Name = o.GetNamespace(), o.GetName()
		if s.Ready == "" || s.Since.IsZero() {
			s.Since = o.GetCreationTimestamp().Time
		}
		out = append(out, s)
		return nil
	})
	return out, err
}
