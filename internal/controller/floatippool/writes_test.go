package floatippool

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

// countedClient is a direct client whose requests counter counts.
func countedClient(t *testing.T) (client.Client, *apicount.Counter) {
	t.Helper()
	counter := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, counter
}

// expectStamped checks that f's status is of its current generation (what
// kstatus reads as current) and records holder (or none for "").
func expectStamped(t *testing.T, f networkingv1alpha1.FloatIP, phase networkingv1alpha1.FloatIPPhase, holder string) {
	t.Helper()
	ready := meta.FindStatusCondition(f.Status.Conditions, status.TypeReady)
	if f.Status.ObservedGeneration != f.Generation || ready == nil || ready.ObservedGeneration != f.Generation {
		t.Fatalf("FloatIP %s: generation %d, status for %d, Ready %+v", f.Name, f.Generation, f.Status.ObservedGeneration, ready)
	}
	if f.Status.Phase != phase || f.Status.PodUID != holder {
		t.Fatalf("FloatIP %s: phase %q holder %q, want %q %q", f.Name, f.Status.Phase, f.Status.PodUID, phase, holder)
	}
}

// TestBindWritesOnce: a bind after a filter reads the pod once, as the
// cluster has it (here from a direct Reader; the manager's cache in the
// manager), never the filter's copy, and writes a new IP once, with its
// holder (a FloatIP has no status subresource), then binds the pod: two
// writes, where it took three. A claimed reservation is one update too, and the
// release to a reservation one patch; each leaves the status stamped with
// the generation it produced.
func TestBindWritesOnce(t *testing.T) {
	f := newFixture(t, "writes", []string{"10.0.9.10~10.0.9.20"}, networkingv1alpha1.ReleasePolicyNever)
	nodes := ensureNodes(t, f.ctx)
	c, counter := countedClient(t)
	f.ext.Allocator = &Allocator{Reader: c, Live: c, Client: c}
	f.gc = &GCReconciler{Client: c, Live: c}

	p1 := f.pod("web-5d8f9c-aaaaa", rsOwner("web"), nil)
	if res := f.filter(p1, nodes); res.Error != "" || res.Nodes == nil || len(res.Nodes.Items) != 1 {
		t.Fatalf("filter: %+v", res)
	}
	before := counter.Counts()
	if msg := f.bind(p1, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	got := promtext.Delta(counter.Counts(), before)
	if got["GET pods"] != 1 {
		t.Errorf("the bind read the pod %d times, want once", got["GET pods"])
	}
	if w := promtext.Delta(counter.WriteCounts(), before); !maps.Equal(w, map[string]int{"POST floatips": 1, "POST pods/binding": 1}) {
		t.Fatalf("a bind wrote %v, want one FloatIP create and the binding", w)
	}
	fip := f.fips()["10.0.9.10"]
	if fip.Generation != 1 || fip.Status.NodeName != "n1" || fip.Status.PodName != p1.Name {
		t.Fatalf("FloatIP after bind: generation %d, status %+v", fip.Generation, fip.Status)
	}
	expectStamped(t, fip, networkingv1alpha1.FloatIPAllocated, string(p1.UID))

	// The pod goes: its IP is reserved for the Deployment in one patch.
	f.deletePod(p1)
	before = counter.Counts()
	f.reconcileFIP("10.0.9.10")
	if w := promtext.Delta(counter.WriteCounts(), before); !maps.Equal(w, map[string]int{"PATCH floatips": 1}) {
		t.Fatalf("reserving wrote %v, want one patch", w)
	}
	fip = f.fips()["10.0.9.10"]
	if fip.Spec.Key != "dp_writes_web_" {
		t.Fatalf("key after the pod went: %q", fip.Spec.Key)
	}
	expectStamped(t, fip, networkingv1alpha1.FloatIPReserved, "")

	// The next pod claims it, key and holder in one update.
	p2 := f.pod("web-5d8f9c-bbbbb", rsOwner("web"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"})
	before = counter.Counts()
	if msg := f.bind(p2, "n1"); msg != "" {
		t.Fatalf("bind p2: %s", msg)
	}
	if w := promtext.Delta(counter.WriteCounts(), before); !maps.Equal(w, map[string]int{"PUT floatips": 1, "POST pods/binding": 1}) {
		t.Fatalf("a claim wrote %v, want one FloatIP update and the binding", w)
	}
	fip = f.fips()["10.0.9.10"]
	if fip.Spec.Key != "dp_writes_web_web-5d8f9c-bbbbb" {
		t.Fatalf("claimed key = %q", fip.Spec.Key)
	}
	expectStamped(t, fip, networkingv1alpha1.FloatIPAllocated, string(p2.UID))
}
