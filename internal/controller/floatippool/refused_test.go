package floatippool

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestRefusedForIP(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  FilterResult
		want bool
	}{
		{"no IP left on every node", FilterResult{Failed: map[string]string{"n1": msgNoIPLeft, "n2": msgNoConfigNode}}, true},
		{"workload holds every IP", FilterResult{Failed: map[string]string{"n1": "deployment api has allocated 2 ips"}, capacity: true}, true},
		{"a node passed", FilterResult{Passed: []string{"n2"}, Failed: map[string]string{"n1": msgNoIPLeft}}, false},
		{"no node hosts the pool", FilterResult{Failed: map[string]string{"n1": msgNoConfigNode}}, false},
		{"wrong subnet", FilterResult{Failed: map[string]string{"n1": msgWrongSubnet}}, false},
		{"no nodes", FilterResult{}, false},
	} {
		if got := refusedForIP(tc.res); got != tc.want {
			t.Errorf("%s: refusedForIP = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFreedBy(t *testing.T) {
	fip := func(key, uid string) *networkingv1alpha1.FloatIP {
		return &networkingv1alpha1.FloatIP{Spec: networkingv1alpha1.FloatIPSpec{Key: key}, Status: networkingv1alpha1.FloatIPStatus{PodUID: uid}}
	}
	for _, tc := range []struct {
		name     string
		old, cur *networkingv1alpha1.FloatIP
		ns       string
		freed    bool
	}{
		{"deployment pod gone: reserved for its workload", fip("dp_ns_api_api-1", "u1"), fip("dp_ns_api_", ""), "ns", true},
		{"sharing-pool pod gone: reserved for the pool", fip("pool__g_dp_ns_api_api-1", "u1"), fip("pool__g_", ""), "", true},
		{"pool member of a workload reserved", fip("pool__g_dp_ns_api_api-1", "u1"), fip("pool__g_dp_ns_api_", ""), "ns", true},
		{"reservation claimed", fip("dp_ns_api_", ""), fip("dp_ns_api_api-2", "u2"), "", false},
		{"StatefulSet pod gone: kept under its key", fip("sts_ns_db_db-0", "u1"), fip("sts_ns_db_db-0", ""), "", false},
		{"status only", fip("dp_ns_api_api-1", "u1"), fip("dp_ns_api_api-1", "u1"), "", false},
		{"unparsable key", fip("dp_ns_api_api-1", "u1"), fip("garbage", ""), "", false},
		{"no old object", nil, fip("dp_ns_api_", ""), "", false},
	} {
		ns, freed := freedBy(tc.old, tc.cur)
		if ns != tc.ns || freed != tc.freed {
			t.Errorf("%s: freedBy = %q, %v; want %q, %v", tc.name, ns, freed, tc.ns, tc.freed)
		}
	}
}

func TestSplitDue(t *testing.T) {
	p := func(ns, name string) refusedPod {
		return refusedPod{uid: types.UID(ns + "/" + name), key: types.NamespacedName{Namespace: ns, Name: name}}
	}
	pods := []refusedPod{p("a", "1"), p("b", "1"), p("a", "2"), p("a", "3")}
	for _, tc := range []struct {
		name      string
		ns        string
		limit     int
		due, keep []refusedPod
	}{
		{"any namespace", "", 10, pods, nil},
		{"one namespace, in order", "a", 10, []refusedPod{p("a", "1"), p("a", "2"), p("a", "3")}, []refusedPod{p("b", "1")}},
		{"the oldest first, at most limit", "a", 2, []refusedPod{p("a", "1"), p("a", "2")}, []refusedPod{p("b", "1"), p("a", "3")}},
		{"nobody there", "c", 10, nil, pods},
	} {
		due, keep := splitDue(pods, tc.ns, tc.limit)
		opt := cmp.AllowUnexported(refusedPod{})
		if d := cmp.Diff(tc.due, due, opt); d != "" {
			t.Errorf("%s: due (-want +got):\n%s", tc.name, d)
		}
		if d := cmp.Diff(tc.keep, keep, opt); d != "" {
			t.Errorf("%s: keep (-want +got):\n%s", tc.name, d)
		}
	}
}

// TestRefusedPodsOrdering: a pod refused for want of an IP is nudged by
// the next free; one whose filter read the FloatIPs before a free it did
// not see is nudged at once (its release's nudge may have come and gone);
// a pod let through, or bound, is not nudged.
func TestRefusedPodsOrdering(t *testing.T) {
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)}}
	}
	noIP := FilterResult{Failed: map[string]string{"n1": msgNoIPLeft}}
	passed := FilterResult{Passed: []string{"n1"}}
	names := func(keys []types.NamespacedName) []string {
		var out []string
		for _, k := range keys {
			out = append(out, k.String())
		}
		return out
	}
	woken := func(r *refusedPods) bool {
		select {
		case <-r.wake:
			return true
		default:
			return false
		}
	}

	r := newRefusedPods()
	seen := r.seen()
	r.filtered(pod("ns", "a"), noIP, seen)
	r.filtered(pod("ns", "b"), noIP, seen)
	r.filtered(pod("other", "c"), noIP, seen)
	r.filtered(pod("ns", "d"), noIP, seen)
	r.filtered(pod("ns", "d"), passed, seen) // let through after all
	r.forget(pod("ns", "b").UID)             // bound
	if woken(r) || len(r.take()) != 0 {
		t.Fatal("pods due before any IP was freed")
	}
	r.freed("ns") // a reservation of namespace ns
	if !woken(r) {
		t.Fatal("no wake-up after a free")
	}
	if got, want := names(r.take()), []string{"ns/a"}; !slices.Equal(got, want) {
		t.Errorf("due after a free in ns = %v, want %v", got, want)
	}
	r.freed("ns")
	if got := r.take(); len(got) != 0 {
		t.Errorf("nudged twice for one refusal: %v", names(got))
	}
	r.freed("") // a deletion
	if got, want := names(r.take()), []string{"other/c"}; !slices.Equal(got, want) {
		t.Errorf("due after a deletion = %v, want %v", got, want)
	}

	// The filter read the FloatIPs, the informer then reported a free, and
	// only then did the filter refuse: due at once.
	stale := r.seen()
	r.freed("")
	_ = r.take()
	r.filtered(pod("ns", "e"), noIP, stale)
	if !woken(r) {
		t.Fatal("no wake-up for a refusal that may have missed a free")
	}
	if got, want := names(r.take()), []string{"ns/e"}; !slices.Equal(got, want) {
		t.Errorf("due after a stale refusal = %v, want %v", got, want)
	}

	// Bounded: the oldest refusals go first.
	seen = r.seen()
	for i := range maxRefused + 3 {
		r.filtered(pod("many", fmt.Sprint(i)), noIP, seen)
	}
	if n := len(r.pods); n != maxRefused {
		t.Errorf("%d refusals remembered, want at most %d", n, maxRefused)
	}
	r.freed("many")
	if got := r.take(); len(got) != maxNudges || got[0].Name != "3" {
		t.Errorf("first free nudged %d pods starting at %v, want %d starting at many/3", len(got), got[:1], maxNudges)
	}

	var none *refusedPods // an allocator without nudging
	none.filtered(pod("ns", "a"), noIP, none.seen())
	none.freed("")
	none.forget("x")
}

// TestRefusedPodNudgedWhenItsIPIsFreed is the rollout of an immutable
// Deployment: the new pod is refused while the old pod's IP is held, and
// the release then reserves that IP for the Deployment. Here the release's
// own nudge (nudgeWaitingPods, which lists the cache's unscheduled pods)
// does not run, as when the cache did not show the new pod yet, or the
// filter answered from FloatIPs older than the release after the nudge
// reached the scheduler: the scheduler retries the pod only if something
// else nudges it. On main nothing did, and kube-scheduler parked the pod
// until its five-minute flush. The extender's own FloatIP informer now
// shows the free and nudges the pod it refused.
func TestRefusedPodNudgedWhenItsIPIsFreed(t *testing.T) {
	f := newFixture(t, "refused", []string{"10.0.7.10~10.0.7.20"}, networkingv1alpha1.ReleasePolicyImmutable)
	nodes := ensureNodes(t, f.ctx)
	c := env.Client
	must(t, c.Create(f.ctx, apiDeployment(f.ns)))

	// The manager's wiring: an allocator over the FloatIP informer, whose
	// frees wake the nudger.
	fipCache, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	must(t, err)
	refusals := newRefusedPods()
	index, err := NewFloatIPIndex(f.ctx, fipCache, refusals.freed)
	must(t, err)
	ctx, cancel := context.WithCancel(f.ctx)
	t.Cleanup(cancel)
	go func() { _ = fipCache.Start(ctx) }()
	if !fipCache.WaitForCacheSync(ctx) {
		t.Fatal("FloatIP cache did not sync")
	}
	go func() { _ = (&refusalNudger{pods: refusals, client: c}).Start(ctx) }()
	f.ext = &Extender{Allocator: &Allocator{Reader: c, Live: c, Client: c, Index: index, refusals: refusals}, Nodes: c}

	immutable := map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}
	old := f.pod("api-5d8f9c-old", rsOwner("api"), immutable)
	if msg := f.bind(old, "n1"); msg != "" {
		t.Fatalf("bind the old pod: %s", msg)
	}
	const ip, name = "10.0.7.10", "10-0-7-10"
	waitIndex(t, ctx, "the old pod's FloatIP", func() bool { return len(index.withKey("dp_refused_api_api-5d8f9c-old")) == 1 })

	next := f.pod("api-7b6c5d-new", rsOwner("api"), immutable)
	if res := f.filter(next, nodes[:1]); len(res.FailedNodes) != 1 || res.Nodes == nil || len(res.Nodes.Items) != 0 {
		t.Fatalf("filter of the new pod while the old one holds the IP: %+v, want n1 failed", res)
	}

	// The release, as the GC writes it, without its cache-listed nudge.
	var fip networkingv1alpha1.FloatIP
	must(t, c.Get(f.ctx, client.ObjectKey{Name: name}, &fip))
	before := fip.DeepCopy()
	fip.Spec.Key = "dp_refused_api_"
	fip.Status.Phase = networkingv1alpha1.FloatIPReserved
	fip.Status.PodUID, fip.Status.PodName, fip.Status.PodNamespace, fip.Status.NodeName = "", "", "", ""
	must(t, c.Patch(f.ctx, &fip, client.MergeFrom(before)))

	var nudged corev1.Pod
	waitIndex(t, ctx, "the refused pod's nudge", func() bool {
		return c.Get(f.ctx, client.ObjectKeyFromObject(next), &nudged) == nil && nudged.Annotations[AnnotationRetry] != ""
	})
	// The scheduler's retry then gets the reserved IP.
	if res := f.filter(&nudged, nodes[:1]); res.Nodes == nil || len(res.Nodes.Items) != 1 {
		t.Fatalf("filter after the release: %+v, want n1", res)
	}
	if msg := f.bind(&nudged, "n1"); msg != "" {
		t.Fatalf("bind the new pod: %s", msg)
	}
	if got := f.fips()[ip]; got.Spec.Key != "dp_refused_api_api-7b6c5d-new" {
		t.Errorf("%s has key %q after the rollout, want the new pod's", ip, got.Spec.Key)
	}
}

// TestRefusalAfterTheReleaseNudge plays the other miss with the real
// release: the floatip controller reserves the old pod's IP and nudges the
// new pod, whose next filter still reads the FloatIPs without the release
// (the extender's informer has not delivered it) and refuses it. The
// controller's nudge came before that refusal, and no other nudge follows
// it on main. The informer's delivery of the release now nudges the pod
// again. The informer is played by hand (its store and its handler), so
// the order is deterministic.
func TestRefusalAfterTheReleaseNudge(t *testing.T) {
	f := newFixture(t, "stale", []string{"10.0.8.10~10.0.8.20"}, networkingv1alpha1.ReleasePolicyImmutable)
	nodes := ensureNodes(t, f.ctx)
	c := env.Client
	must(t, c.Create(f.ctx, apiDeployment(f.ns)))
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, fipIndexers())
	index := &FloatIPIndex{indexer: store}
	refusals := newRefusedPods()
	informer := index.handler(refusals.freed)
	ctx, cancel := context.WithCancel(f.ctx)
	t.Cleanup(cancel)
	go func() { _ = (&refusalNudger{pods: refusals, client: c}).Start(ctx) }()
	f.ext = &Extender{Allocator: &Allocator{Reader: c, Live: c, Client: c, Index: index, refusals: refusals}, Nodes: c}
	const ip, name = "10.0.8.10", "10-0-8-10"
	deliver := func() *networkingv1alpha1.FloatIP {
		var fip networkingv1alpha1.FloatIP
		must(t, c.Get(f.ctx, client.ObjectKey{Name: name}, &fip))
		old, known, err := store.GetByKey(name)
		must(t, err)
		if known {
			must(t, store.Update(&fip))
			informer.OnUpdate(old, &fip)
		} else {
			must(t, store.Add(&fip))
		}
		return &fip
	}
	retry := func(pod *corev1.Pod) string {
		var got corev1.Pod
		must(t, c.Get(f.ctx, client.ObjectKeyFromObject(pod), &got))
		return got.Annotations[AnnotationRetry]
	}

	immutable := map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}
	old := f.pod("api-5d8f9c-old", rsOwner("api"), immutable)
	if msg := f.bind(old, "n1"); msg != "" {
		t.Fatalf("bind the old pod: %s", msg)
	}
	deliver()
	next := f.pod("api-7b6c5d-new", rsOwner("api"), immutable)
	if res := f.filter(next, nodes[:1]); len(res.FailedNodes) != 1 {
		t.Fatalf("filter of the new pod while the old one holds the IP: %+v, want n1 failed", res)
	}

	// The old pod goes; the controller reserves its IP and nudges the
	// waiting pod.
	f.deletePod(old)
	f.reconcileFIP(ip)
	controllerNudge := retry(next)
	if controllerNudge == "" {
		t.Fatal("the controller did not nudge the waiting pod")
	}
	// The scheduler's retry reads the FloatIPs before the release arrives.
	if res := f.filter(next, nodes[:1]); len(res.FailedNodes) != 1 {
		t.Fatalf("filter before the informer has the release: %+v, want n1 failed", res)
	}
	// Nothing the scheduler watches changes now. The informer delivers the
	// release.
	if got := deliver(); got.Spec.Key != "dp_stale_api_" {
		t.Fatalf("released key %q, want dp_stale_api_", got.Spec.Key)
	}
	waitIndex(t, ctx, "a nudge after the last refusal", func() bool {
		stamp := retry(next)
		return stamp != "" && stamp != controllerNudge
	})
	if res := f.filter(next, nodes[:1]); res.Nodes == nil || len(res.Nodes.Items) != 1 {
		t.Fatalf("filter after the release: %+v, want n1", res)
	}
}

func waitIndex(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// apiDeployment is the one-replica Deployment "api" whose rollout the
// refusal tests play.
func apiDeployment(namespace string) *appsv1.Deployment {
	labels := map[string]string{"app": "api"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
	}
}
