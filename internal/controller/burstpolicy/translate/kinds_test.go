package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestScaleWorkloads(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "replicationcontrollers", Namespaced: true, Kind: "ReplicationController"},
			{Name: "replicationcontrollers/scale", Namespaced: true, Kind: "Scale"},
			{Name: "pods", Namespaced: true, Kind: "Pod"},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Kind: "Deployment"},
			{Name: "deployments/scale", Namespaced: true, Kind: "Scale"},
			{Name: "daemonsets", Namespaced: true, Kind: "DaemonSet"},
		}},
		{GroupVersion: "apps.kruise.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "clonesets", Namespaced: true, Kind: "CloneSet"},
			{Name: "clonesets/scale", Namespaced: true, Kind: "Scale"},
			{Name: "clonesets/status", Namespaced: true, Kind: "CloneSet"},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "fleets", Namespaced: false, Kind: "Fleet"}, // cluster-scoped: no BurstPolicy can target it
			{Name: "fleets/scale", Namespaced: false, Kind: "Scale"},
		}},
		{GroupVersion: "bad/group/version"},
	}
	want := []ScaleWorkload{
		{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ReplicationController"}, Resource: "replicationcontrollers"},
		{GroupVersionKind: schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}, Resource: "clonesets"},
	}
	if diff := cmp.Diff(want, scaleWorkloads(lists)); diff != "" {
		t.Errorf("scaleWorkloads (-want +got):\n%s", diff)
	}
}

func TestTranslatesPodsOf(t *testing.T) {
	kinds := NewKinds()
	for _, gk := range []schema.GroupKind{podGroupKind, replicaSetGroupKind, {Group: "apps.kruise.io", Kind: "CloneSet"}} {
		kinds.add(gk)
	}
	ref := func(apiVersion, kind string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind}
	}
	cases := []struct {
		name       string
		kinds      *Kinds
		controller *metav1.OwnerReference
		want       bool
	}{
		{"a bare pod", kinds, nil, true},
		{"a ReplicaSet's pod", kinds, ref("apps/v1", "ReplicaSet"), true},
		{"a CloneSet's pod", kinds, ref("apps.kruise.io/v1alpha1", "CloneSet"), true},
		{"same kind, other group", kinds, ref("example.com/v1", "CloneSet"), false},
		{"a DaemonSet's pod", kinds, ref("apps/v1", "DaemonSet"), false},
		{"a bad apiVersion", kinds, ref("a/b/c", "ReplicaSet"), false},
		{"translators off", nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.kinds.TranslatesPodsOf(tc.controller); got != tc.want {
				t.Errorf("TranslatesPodsOf = %v, want %v", got, tc.want)
			}
		})
	}
}
