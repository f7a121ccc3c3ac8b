package burstpolicy

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestPodStore: the store and the client's list give the same pods (the
// namespace's, that the selector selects); the store's are the cache's own
// objects, not copies.
func TestPodStore(t *testing.T) {
	pod := func(ns, name, app string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
	}
	pods := []*corev1.Pod{pod("a", "web-1", "web"), pod("a", "web-2", "web"), pod("a", "db-1", "db"), pod("b", "web-1", "web")}
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	builder := fake.NewClientBuilder()
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
		builder = builder.WithObjects(p.DeepCopy())
	}
	c := builder.Build()
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	names := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		slices.Sort(out)
		return out
	}
	for name, tc := range map[string]struct {
		ns   string
		sel  labels.Selector
		want []string
	}{
		"selected in the namespace": {ns: "a", sel: web, want: []string{"a/web-1", "a/web-2"}},
		"everything selected":       {ns: "a", sel: labels.Everything(), want: []string{"a/db-1", "a/web-1", "a/web-2"}},
		"another namespace":         {ns: "b", sel: web, want: []string{"b/web-1"}},
		"none":                      {ns: "c", sel: web},
	} {
		t.Run(name, func(t *testing.T) {
			store := &podStore{indexer: indexer}
			got, err := store.list(context.Background(), c, tc.ns, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tc.want) {
				t.Errorf("the store listed %v, want %v", names(got), tc.want)
			}
			for _, p := range got {
				if !slices.Contains(pods, p) {
					t.Errorf("pod %s/%s is a copy, not the cache's object", p.Namespace, p.Name)
				}
			}
			viaClient, err := (&podStore{}).list(context.Background(), c, tc.ns, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(viaClient), tc.want) {
				t.Errorf("the client listed %v, want %v", names(viaClient), tc.want)
			}
		})
	}
}
