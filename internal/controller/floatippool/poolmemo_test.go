package floatippool

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

// TestPoolMemo: the memo hands out the same parse while the pools and the
// ledger are unchanged, and parses again after any change to a pool's spec,
// a new pool, or the ledger.
func TestPoolMemo(t *testing.T) {
	ctx := context.Background()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(name, ranges string) *networkingv1alpha1.FloatIPPool {
		return &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec:       networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{ranges}, Subnet: "10.9.0.0/16", NodeSubnets: []string{"10.1.0.0/24"}},
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pool("a", "10.9.0.1~10.9.0.9")).Build()
	var m poolMemo
	load := func() []*poolView {
		t.Helper()
		v, err := m.load(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := load()
	if len(first) != 1 || first[0].set.Size() != 9 {
		t.Fatalf("first parse: %d views", len(first))
	}
	if again := load(); again[0] != first[0] {
		t.Fatal("unchanged pools were parsed again")
	}

	// A spec change: parsed again, with the new ranges.
	var a networkingv1alpha1.FloatIPPool
	if err := c.Get(ctx, client.ObjectKey{Name: "a"}, &a); err != nil {
		t.Fatal(err)
	}
	a.Spec.Ranges = []string{"10.9.0.1~10.9.0.20"}
	if err := c.Update(ctx, &a); err != nil {
		t.Fatal(err)
	}
	changed := load()
	if changed[0] == first[0] || changed[0].set.Size() != 20 {
		t.Fatalf("after a spec change: same view %v, size %d", changed[0] == first[0], changed[0].set.Size())
	}

	// The ledger appears: parsed again (admission is checked against it).
	ledger := &networkingv1alpha1.FloatIPPoolLedger{ObjectMeta: metav1.ObjectMeta{Name: networkingv1alpha1.FloatIPPoolLedgerName, UID: "ledger"}}
	if err := c.Create(ctx, ledger); err != nil {
		t.Fatal(err)
	}
	withLedger := load()
	if withLedger[0] == changed[0] {
		t.Fatal("the ledger changed but the pools were not parsed again")
	}

	// A second pool: parsed again, both there.
	if err := c.Create(ctx, pool("b", "10.9.1.1~10.9.1.5")); err != nil {
		t.Fatal(err)
	}
	if two := load(); len(two) != 2 {
		t.Fatalf("after a new pool: %d views", len(two))
	}

	// A nil memo parses each time.
	var none *poolMemo
	x, _ := none.load(ctx, c)
	y, _ := none.load(ctx, c)
	if x[0] == y[0] {
		t.Fatal("a nil memo reused a parse")
	}
}
