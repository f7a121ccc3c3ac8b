package translator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// nodes is a Nodes translator of clusterWidgets whose spec.address is the
// node they are for.
func nodes(c client.Client) *Nodes[*clusterWidget] {
	return &Nodes[*clusterWidget]{
		Name: "test-nodes", Client: c, Recorder: events.NewFakeRecorder(20),
		Selector: labels.SelectorFromSet(labels.Set{"want": "true"}),
		New:      func() *clusterWidget { return &clusterWidget{} },
		NodeOf:   func(w *clusterWidget) string { return w.Spec.Address },
		ForNode: func(ctx context.Context, node string) ([]*clusterWidget, error) {
			// The fake client has no index: read every candidate by name.
			var out []*clusterWidget
			for _, name := range []string{node, "persons-" + node} {
				w := &clusterWidget{}
				if err := c.Get(ctx, client.ObjectKey{Name: name}, w); err == nil && w.Spec.Address == node {
					out = append(out, w)
				}
			}
			return out, nil
		},
		Mutate: func(w *clusterWidget, node *corev1.Node, stored bool) {
			if !stored {
				w.Spec.Address = node.Name
			}
		},
	}
}

func TestNodesTranslator(t *testing.T) {
	ctx := context.Background()
	labelled := func() *corev1.Node {
		n := testNode()
		n.Labels = map[string]string{"want": "true"}
		return n
	}
	get := func(c client.Client, name string) *clusterWidget {
		w := &clusterWidget{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, w); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			t.Fatal(err)
		}
		return w
	}
	pass := func(tr *Nodes[*clusterWidget]) {
		t.Helper()
		if _, err := tr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: "node-1"}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a labelled node gets its object, owned and marked", func(t *testing.T) {
		c := newClient(t, &writeCounter{}, interceptor.Funcs{}, labelled())
		pass(nodes(c))
		w := get(c, "node-1")
		if w == nil || !IsTranslated(w) || w.Spec.Address != "node-1" || len(w.OwnerReferences) != 1 || w.OwnerReferences[0].UID != "node-uid" {
			t.Fatalf("translated object: %+v", w)
		}
	})
	t.Run("an unlabelled node loses it", func(t *testing.T) {
		n := labelled()
		c := newClient(t, &writeCounter{}, interceptor.Funcs{}, n)
		tr := nodes(c)
		pass(tr)
		n.Labels = nil
		if err := c.Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		pass(tr)
		if w := get(c, "node-1"); w != nil {
			t.Fatalf("object of an unlabelled node kept: %+v", w)
		}
	})
	t.Run("a node gone loses it", func(t *testing.T) {
		n := labelled()
		c := newClient(t, &writeCounter{}, interceptor.Funcs{}, n)
		tr := nodes(c)
		pass(tr)
		if err := c.Delete(ctx, n); err != nil {
			t.Fatal(err)
		}
		pass(tr)
		if w := get(c, "node-1"); w != nil {
			t.Fatalf("object of a deleted node kept: %+v", w)
		}
	})
	t.Run("a person's object wins", func(t *testing.T) {
		persons := &clusterWidget{ObjectMeta: metav1.ObjectMeta{Name: "persons-node-1"}, Spec: widgetSpec{Address: "node-1"}}
		c := newClient(t, &writeCounter{}, interceptor.Funcs{}, labelled(), persons)
		tr := nodes(c)
		pass(tr)
		if w := get(c, "node-1"); w != nil {
			t.Fatalf("translated an object next to a person's: %+v", w)
		}
		if get(c, "persons-node-1") == nil {
			t.Fatal("the person's object was deleted")
		}
	})
	t.Run("Mutate is told whether the object is stored", func(t *testing.T) {
		c := newClient(t, &writeCounter{}, interceptor.Funcs{}, labelled())
		tr := nodes(c)
		var seen []bool
		mutate := tr.Mutate
		tr.Mutate = func(w *clusterWidget, n *corev1.Node, stored bool) {
			seen = append(seen, stored)
			mutate(w, n, stored)
		}
		pass(tr)
		pass(tr)
		if len(seen) != 2 || seen[0] || !seen[1] {
			t.Fatalf("stored flags %v, want [false true]", seen)
		}
	})
}

func TestParseNodeSelector(t *testing.T) {
	for _, bad := range []string{"", "  ", "a in (", "!"} {
		if _, err := ParseNodeSelector(bad); err == nil {
			t.Errorf("ParseNodeSelector(%q) accepted", bad)
		}
	}
	sel, err := ParseNodeSelector("kubeip.com/public=true,pool in (a,b)")
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set{"kubeip.com/public": "true", "pool": "b"}) || sel.Matches(labels.Set{"kubeip.com/public": "true"}) {
		t.Errorf("selector %s matches wrongly", sel)
	}
}
