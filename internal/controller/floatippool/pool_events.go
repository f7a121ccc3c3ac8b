package floatippool

import (
	"context"
	"slices"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
)

// poolStatusDelay coalesces the pool reconciles a wave of FloatIP changes
// triggers: a pool's status follows its FloatIPs within about this long, at
// one reconcile (and at most one status write) per pool per delay instead of
// one per FloatIP change. Without it, each allocation of a wave cost a
// status write of every pool, competing with the binds for the API server;
// at one second, a wave of 2,000 allocations in 5 pools still cost 130 pool
// status writes.
const poolStatusDelay = 3 * time.Second

// poolChanges passes the events of a pool that its reconcile must follow:
// creation, deletion, a changed spec (generation), labels or annotations,
// the start of its deletion, and its finalizers (the reconcile adds its own
// and comes back on that update). Not a change of status alone, which is
// what the reconcile itself writes: following it re-ran the reconcile at
// once, which during a wave of allocations found new FloatIPs and wrote the
// status again, one write per round trip per pool instead of one per
// poolStatusDelay (25 pool status writes for 500 float-IP pods in 4 pools).
// A status changed by someone else is set right on the pool's next FloatIP
// change or resync.
func poolChanges() predicate.Predicate {
	return predicate.Or(reconciler.Changes(), predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld != nil && e.ObjectNew != nil && !slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers())
	}})
}

// poolsOfFloatIP enqueues, delay after a FloatIP changes, the pools whose
// reconcile reads it (see poolsConcerned); pools not yet enqueued by an
// earlier change of that delay are.
func poolsOfFloatIP(c client.Reader, delay time.Duration) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q queue, objs ...client.Object) {
		var fips []*networkingv1alpha1.FloatIP
		for _, o := range objs {
			if f, ok := o.(*networkingv1alpha1.FloatIP); ok {
				fips = append(fips, f)
			}
		}
		// Read-only: only names and pre-allocation settings are read.
		var pools networkingv1alpha1.FloatIPPoolList
		if err := c.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
			pools.Items = nil // the FloatIPs' own pools still get their turn
		}
		for _, name := range poolsConcerned(fips, preAllocating(pools.Items)) {
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { enqueue(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { enqueue(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { enqueue(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// preAllocating names the pools that keep size IPs reserved up front.
func preAllocating(pools []networkingv1alpha1.FloatIPPool) []string {
	var out []string
	for i := range pools {
		if pools[i].Spec.PreAllocate && pools[i].Spec.Size != nil {
			out = append(out, pools[i].Name)
		}
	}
	return out
}

// poolsConcerned are the pools whose reconcile reads one of fips (the
// versions of a changed FloatIP): each one's pool, which counts it; the
// sharing group its key names (pool__<group>_...), which counts it against
// its size; and every pre-allocating pool, which may top up from an IP the
// change freed. Each once, in that order.
func poolsConcerned(fips []*networkingv1alpha1.FloatIP, preAllocating []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, f := range fips {
		add(f.Spec.Pool)
		add(ipam.GroupOfKey(f.Spec.Key))
	}
	for _, name := range preAllocating {
		add(name)
	}
	return out
}
