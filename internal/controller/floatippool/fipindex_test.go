package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

func TestKeyPrefixes(t *testing.T) {
	cases := map[string][]string{
		"dp_ns_web_web-1":           {"dp_", "dp_ns_", "dp_ns_web_"},
		"dp_ns_web_":                {"dp_", "dp_ns_", "dp_ns_web_"},
		"pool__g_sts_ns_db_db-0":    {"pool_", "pool__", "pool__g_", "pool__g_sts_", "pool__g_sts_ns_", "pool__g_sts_ns_db_"},
		"NULL_ns_NULL_pod":          {"NULL_", "NULL_ns_", "NULL_ns_NULL_"},
		"":                          nil,
		"no-underscore":             nil,
		"deployment_ns_app_pod-x_y": {"deployment_", "deployment_ns_", "deployment_ns_app_", "deployment_ns_app_pod-x_"},
	}
	for key, want := range cases {
		if got := keyPrefixes(key); !slices.Equal(got, want) {
			t.Errorf("keyPrefixes(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestFloatIPIndexAnswersAsAList: the informer's indexes answer every
// question of the allocator exactly as one list of every FloatIP does.
func TestFloatIPIndexAnswersAsAList(t *testing.T) {
	fip := func(ip, key string) networkingv1alpha1.FloatIP {
		name := ipam.NameForIP(netip.MustParseAddr(ip))
		return networkingv1alpha1.FloatIP{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1alpha1.FloatIPSpec{IP: ip, Pool: "p", Key: key}}
	}
	items := []networkingv1alpha1.FloatIP{
		fip("10.0.0.1", "dp_ns_web_web-1"),
		fip("10.0.0.2", "dp_ns_web_"),
		fip("10.0.0.3", "dp_ns_web_"),
		fip("10.0.0.4", "dp_ns_webx_webx-1"),
		fip("10.0.0.5", "pool__g_dp_ns_web_web-2"),
		fip("10.0.0.6", "pool__g_"),
		fip("10.0.0.7", "sts_ns_db_db-0"),
		fip("10.0.0.8", ""), // admin reserved
		fip("2001:db8::1", "NULL_ns_NULL_pod"),
	}
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, fipIndexers())
	for i := range items {
		if err := indexer.Add(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	index := &FloatIPIndex{indexer: indexer}
	list := &listedFIPs{items: items}
	names := func(fs []*networkingv1alpha1.FloatIP) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, ip := range []string{"10.0.0.1", "10.0.0.8", "10.0.0.9", "2001:db8::1", "2001:db8::2", "::ffff:10.0.0.1"} {
		addr := netip.MustParseAddr(ip).Unmap()
		if got, want := index.taken(addr), list.taken(addr); got != want || (ip == "10.0.0.1" && !got) {
			t.Errorf("taken(%s) = %v, a list says %v", ip, got, want)
		}
	}
	for _, key := range []string{"dp_ns_web_web-1", "dp_ns_web_", "pool__g_", "sts_ns_db_db-0", "", "nope"} {
		if got, want := names(index.withKey(key)), names(list.withKey(key)); !slices.Equal(got, want) {
			t.Errorf("withKey(%q) = %v, a list says %v", key, got, want)
		}
	}
	for _, prefix := range []string{"dp_ns_web_", "dp_ns_", "pool__g_", "pool__g_dp_ns_web_", "sts_ns_db_", "none_"} {
		got, want := names(index.withKeyPrefix(prefix)), names(list.withKeyPrefix(prefix))
		if !slices.Equal(got, want) {
			t.Errorf("withKeyPrefix(%q) = %v, a list says %v", prefix, got, want)
		}
		if prefix == "dp_ns_web_" && len(got) != 3 {
			t.Errorf("withKeyPrefix(dp_ns_web_) = %v, want web-1 and both reservations, not webx", got)
		}
	}
	// Changes show at once (an informer stores a new object).
	changed := items[0].DeepCopy()
	changed.Spec.Key = "dp_ns_other_other-1"
	if err := indexer.Update(changed); err != nil {
		t.Fatal(err)
	}
	if got := index.withKey("dp_ns_web_web-1"); len(got) != 0 {
		t.Errorf("after a key change withKey still finds %v", names(got))
	}
	if err := indexer.Delete(&items[1]); err != nil {
		t.Fatal(err)
	}
	if index.taken(netip.MustParseAddr("10.0.0.2")) {
		t.Error("a deleted FloatIP's IP is still taken")
	}
}

func TestPoolsConcerned(t *testing.T) {
	fip := func(pool, key string) *networkingv1alpha1.FloatIP {
		return &networkingv1alpha1.FloatIP{Spec: networkingv1alpha1.FloatIPSpec{Pool: pool, Key: key}}
	}
	cases := map[string]struct {
		fips []*networkingv1alpha1.FloatIP
		pre  []string
		want []string
	}{
		"its pool":                    {fips: []*networkingv1alpha1.FloatIP{fip("a", "dp_ns_web_web-1")}, want: []string{"a"}},
		"and the group its key names": {fips: []*networkingv1alpha1.FloatIP{fip("a", "pool__g_dp_ns_web_web-1")}, want: []string{"a", "g"}},
		"a group's reservation":       {fips: []*networkingv1alpha1.FloatIP{fip("a", "pool__g_")}, want: []string{"a", "g"}},
		"old and new versions once": {
			fips: []*networkingv1alpha1.FloatIP{fip("a", "pool__g_"), fip("a", "pool__g_sts_ns_db_db-0")},
			want: []string{"a", "g"},
		},
		"every pre-allocating pool too": {
			fips: []*networkingv1alpha1.FloatIP{fip("a", "dp_ns_web_web-1")}, pre: []string{"g", "a", "h"},
			want: []string{"a", "g", "h"},
		},
		"nothing": {},
	}
	for name, tc := range cases {
		if got := poolsConcerned(tc.fips, tc.pre); !slices.Equal(got, tc.want) {
			t.Errorf("%s: poolsConcerned = %v, want %v", name, got, tc.want)
		}
	}
}

func TestPreAllocating(t *testing.T) {
	size := int32(3)
	pool := func(name string, pre bool, size *int32) networkingv1alpha1.FloatIPPool {
		return networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1alpha1.FloatIPPoolSpec{PreAllocate: pre, Size: size}}
	}
	got := preAllocating([]networkingv1alpha1.FloatIPPool{pool("a", true, &size), pool("b", false, &size), pool("c", true, nil), pool("d", true, &size)})
	if !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("preAllocating = %v, want [a d]", got)
	}
}

func TestHolderMayBeGone(t *testing.T) {
	pod := func(uid string, phase corev1.PodPhase, terminating bool, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
		if terminating {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	cases := map[string]struct {
		old, cur *corev1.Pod
		want     bool
	}{
		"bound":                      {pod("u", corev1.PodPending, false, ""), pod("u", corev1.PodPending, false, "n1"), false},
		"started running":            {pod("u", corev1.PodPending, false, "n1"), pod("u", corev1.PodRunning, false, "n1"), false},
		"began terminating":          {pod("u", corev1.PodRunning, false, "n1"), pod("u", corev1.PodRunning, true, "n1"), true},
		"succeeded":                  {pod("u", corev1.PodRunning, false, "n1"), pod("u", corev1.PodSucceeded, false, "n1"), true},
		"failed":                     {pod("u", corev1.PodRunning, false, "n1"), pod("u", corev1.PodFailed, false, "n1"), true},
		"finished, then failed":      {pod("u", corev1.PodSucceeded, false, "n1"), pod("u", corev1.PodFailed, false, "n1"), false},
		"another pod of that name":   {pod("u", corev1.PodRunning, false, "n1"), pod("v", corev1.PodPending, false, ""), true},
		"terminating, status update": {pod("u", corev1.PodRunning, true, "n1"), pod("u", corev1.PodRunning, true, "n1"), false},
	}
	for name, tc := range cases {
		if got := holderMayBeGone(tc.old, tc.cur); got != tc.want {
			t.Errorf("%s: holderMayBeGone = %v, want %v", name, got, tc.want)
		}
	}
}

// countingLookup counts taken lookups.
type countingLookup struct {
	fipLookup
	lookups int
}

func (c *countingLookup) taken(ip netip.Addr) bool { c.lookups++; return c.fipLookup.taken(ip) }

// TestScanPoolLowWater: the scan for the lowest free IP starts past the IPs
// an earlier scan found taken, and from the first IP again once a FloatIP
// was deleted, so it still finds the lowest free IP.
func TestScanPoolLowWater(t *testing.T) {
	pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-1", Generation: 1},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.0.0.1~10.0.0.10"}, Subnet: "10.0.0.0/24", NodeSubnets: []string{"192.168.0.0/24"}}}
	v := parsePool(pool)
	if v.err != nil {
		t.Fatal(v.err)
	}
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, fipIndexers())
	x := &FloatIPIndex{indexer: indexer}
	add := func(ip string) *networkingv1alpha1.FloatIP {
		f := &networkingv1alpha1.FloatIP{ObjectMeta: metav1.ObjectMeta{Name: ipam.NameForIP(netip.MustParseAddr(ip))}, Spec: networkingv1alpha1.FloatIPSpec{IP: ip, Pool: "p", Key: "k"}}
		if err := indexer.Add(f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	firstFree := func() (string, int) {
		c := &countingLookup{fipLookup: x}
		found := ""
		scanPool(v, c, func(ip netip.Addr, taken bool) bool {
			if !taken {
				found = ip.String()
				return false
			}
			return true
		})
		return found, c.lookups
	}
	var fips []*networkingv1alpha1.FloatIP
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		fips = append(fips, add(ip))
	}
	if ip, n := firstFree(); ip != "10.0.0.5" || n != 5 {
		t.Fatalf("first scan: %s after %d lookups, want 10.0.0.5 after 5", ip, n)
	}
	add("10.0.0.5")
	if ip, n := firstFree(); ip != "10.0.0.6" || n != 2 {
		t.Fatalf("second scan: %s after %d lookups, want 10.0.0.6 after 2 (from the mark)", ip, n)
	}
	// A delete below the mark: the scan starts over and finds it.
	if err := indexer.Delete(fips[1]); err != nil {
		t.Fatal(err)
	}
	x.deleted()
	if ip, _ := firstFree(); ip != "10.0.0.2" {
		t.Fatalf("after 10.0.0.2 was released the scan found %s", ip)
	}
	// Another generation of the pool (its ranges may have changed): no mark.
	add("10.0.0.2")
	firstFree()
	if off, _ := x.lowWater(v); off != 5 {
		t.Fatalf("mark = %d, want 5", off)
	}
	next := parsePool(func() *networkingv1alpha1.FloatIPPool { p := pool.DeepCopy(); p.Generation = 2; return p }())
	if off, _ := x.lowWater(next); off != 0 {
		t.Fatalf("mark of generation 2 = %d, want none", off)
	}
	// Every IP taken: the scan wraps around once and finds none; the mark
	// stays inside the set.
	for _, ip := range []string{"10.0.0.6", "10.0.0.7", "10.0.0.8", "10.0.0.9", "10.0.0.10"} {
		add(ip)
	}
	if ip, n := firstFree(); ip != "" || n != 10 {
		t.Fatalf("full pool: found %q after %d lookups, want none after 10", ip, n)
	}
	if off, _ := x.lowWater(v); off != 10 {
		t.Fatalf("mark of a full pool = %d, want 10", off)
	}
	if ip, n := firstFree(); ip != "" || n != 10 {
		t.Fatalf("full pool again: found %q after %d lookups, want none after 10", ip, n)
	}
}

// TestScanCountsOwnReservations: IPs this allocator is creating count as
// taken, so scans pass them and the mark moves past them; one given back
// (a failed create, a rollback) is found again.
func TestScanCountsOwnReservations(t *testing.T) {
	pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-1", Generation: 1},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.0.0.1~10.0.0.10"}, Subnet: "10.0.0.0/24", NodeSubnets: []string{"192.168.0.0/24"}}}
	v := parsePool(pool)
	x := &FloatIPIndex{indexer: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, fipIndexers())}
	a := &Allocator{Index: x}
	firstFree := func() string {
		found := ""
		scanPool(v, withOwn{x, a}, func(ip netip.Addr, taken bool) bool {
			if !taken {
				found = ip.String()
				return false
			}
			return true
		})
		return found
	}
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		if !a.tryReserve(netip.MustParseAddr(ip)) {
			t.Fatalf("reserving %s", ip)
		}
	}
	if got := firstFree(); got != "10.0.0.4" {
		t.Fatalf("first free past three reservations = %s, want 10.0.0.4", got)
	}
	if off, _ := x.lowWater(v); off != 3 {
		t.Fatalf("mark = %d, want 3", off)
	}
	a.unreserve(netip.MustParseAddr("10.0.0.2"))
	if got := firstFree(); got != "10.0.0.2" {
		t.Fatalf("after giving 10.0.0.2 back the first free is %s", got)
	}
}

// noPools lists no FloatIPPools (poolsOfFloatIP reads which pre-allocate).
type noPools struct{ client.Reader }

func (noPools) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// TestPoolsOfFloatIPCoalesces: a wave of FloatIP changes enqueues each
// pool concerned once, delay later, not once per change.
func TestPoolsOfFloatIPCoalesces(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	h := poolsOfFloatIP(noPools{}, 3*time.Second)
	ctx := context.Background()
	for i := range 50 {
		f := &networkingv1alpha1.FloatIP{Spec: networkingv1alpha1.FloatIPSpec{Pool: "a", Key: fmt.Sprintf("dp_ns_web_web-%d", i)}}
		if i%10 == 0 {
			f.Spec.Key = "pool__g_dp_ns_web_web-x"
		}
		h.Create(ctx, event.CreateEvent{Object: f}, q)
	}
	if q.Len() != 0 {
		t.Fatalf("%d pools queued at once, want none before the delay", q.Len())
	}
	clk.Step(3 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // anything more would show now
	var got []string
	for q.Len() > 0 {
		r, _ := q.Get()
		got = append(got, r.Name)
		q.Done(r)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "g"}) {
		t.Fatalf("queued %v after 50 changes, want [a g] once each", got)
	}
}
