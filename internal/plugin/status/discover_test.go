package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestDiscover(t *testing.T) {
	edge := []string{Category}
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "networking.edgeplane.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "floatips", Kind: "FloatIP", Categories: edge, Verbs: []string{"list", "get"}},
			{Name: "floatips/status", Kind: "FloatIP", Verbs: []string{"get", "update"}},
			{Name: "floatippools", Kind: "FloatIPPool", Categories: edge, Verbs: []string{"list"}},
			// A kind the table does not know yet: listed, without detail.
			{Name: "widgets", Kind: "Widget", Namespaced: true, Categories: edge, Verbs: []string{"list"}},
		}},
		{GroupVersion: "cloud.edgeplane.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "clusterproviderconfigs", Kind: "ClusterProviderConfig", Categories: edge, Verbs: []string{"list"}},
			// Usages are not in the category.
			{Name: "providerconfigusages", Kind: "ProviderConfigUsage", Namespaced: true, Verbs: []string{"list"}},
		}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"list"}}}},
	}}}
	got, err := Discover(disc, Kinds())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range got {
		kinds = append(kinds, s.Kind.Kind)
		if (s.Detail == nil) != (s.Kind.Kind == "Widget") {
			t.Errorf("%s: detail set %v", s.Kind.Kind, s.Detail != nil)
		}
		if s.Namespaced != (s.Kind.Kind == "Widget") {
			t.Errorf("%s: namespaced %v", s.Kind.Kind, s.Namespaced)
		}
	}
	// Table order, then unknown kinds; PodElasticIP, AnycastIPBinding and
	// the other known kinds are not served here and are skipped.
	want := "ClusterProviderConfig FloatIPPool FloatIP Widget"
	if g := join(" ", kinds...); g != want {
		t.Errorf("kinds = %q, want %q", g, want)
	}
}
