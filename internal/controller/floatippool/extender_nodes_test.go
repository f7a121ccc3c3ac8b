package floatippool

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/edgeplane/edgeplane/internal/runtime/informerstore"
)

func TestNamedNodes(t *testing.T) {
	node := func(name, ip string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	inStore := node("n1", "10.0.0.1")
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, nil)
	if err := indexer.Add(inStore); err != nil {
		t.Fatal(err)
	}
	// The client holds a node the store does not: which one answers shows
	// which source was read.
	listed := fake.NewClientBuilder().WithObjects(node("n1", "10.0.0.1"), node("n2", "10.0.0.2")).Build()
	for _, tc := range []struct {
		name      string
		store     *informerstore.Store[*corev1.Node]
		wantIPs   []string // per requested name; "" for an unknown node
		fromStore bool
	}{
		{name: "no cache: listed", wantIPs: []string{"10.0.0.1", "10.0.0.2", ""}},
		{name: "cache not synced: listed", store: informerstore.New[*corev1.Node](indexer, func() bool { return false }), wantIPs: []string{"10.0.0.1", "10.0.0.2", ""}},
		{name: "synced cache: the store's nodes, uncopied", store: informerstore.New[*corev1.Node](indexer, nil), wantIPs: []string{"10.0.0.1", "", ""}, fromStore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Extender{Nodes: listed, NodeStore: tc.store}
			got, err := e.namedNodes(context.Background(), []string{"n1", "n2", "gone"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("got %d nodes, want 3", len(got))
			}
			for i, want := range tc.wantIPs {
				var ip string
				if addr, ok := nodeInternalIP(got[i]); ok {
					ip = addr.String()
				}
				if ip != want || got[i].Name != []string{"n1", "n2", "gone"}[i] {
					t.Errorf("node %d: %s with IP %q, want IP %q", i, got[i].Name, ip, want)
				}
			}
			if (got[0] == inStore) != tc.fromStore {
				t.Errorf("node n1 is the store's object: %v, want %v", got[0] == inStore, tc.fromStore)
			}
		})
	}
}
