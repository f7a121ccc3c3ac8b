package manager

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// requestLog records the path and query of every request sent through it.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
	next http.RoundTripper
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *requestLog) matching(f func(string) bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(l.reqs), func(s string) bool { return !f(s) })
}

// TestCachesStreamTheirInitialList: the informers fill their caches from a
// watch that sends the initial events (client-go's WatchListClient, on by
// default since v0.35, served by the API server since 1.34), one object at
// a time through the transforms, never from a LIST of every pod or node,
// which the manager would hold whole, decoded, before transforming it.
func TestCachesStreamTheirInitialList(t *testing.T) {
	ctx := testenv.Context(t)
	log := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	o := testOptions("*")
	o.LeaderElect = false
	mgr := startCapturedManager(t, ctx, cfg, o)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache never started")
	}
	for _, obj := range []client.ObjectList{&corev1.PodList{}, &corev1.NodeList{}} {
		if err := mgr.GetClient().List(ctx, obj); err != nil { // starts and syncs the informer
			t.Fatal(err)
		}
	}
	for _, res := range []string{"/api/v1/pods", "/api/v1/nodes"} {
		of := func(s string) bool { _, rest, _ := strings.Cut(s, " "); return strings.HasPrefix(rest, res+"?") }
		reqs := log.matching(of)
		if !slices.ContainsFunc(reqs, func(s string) bool {
			return strings.Contains(s, "sendInitialEvents=true") && strings.Contains(s, "watch=true")
		}) {
			t.Errorf("%s: no watch sending the initial events; requests: %q", res, reqs)
		}
		if lists := slices.DeleteFunc(reqs, func(s string) bool { return strings.Contains(s, "watch=true") }); len(lists) > 0 {
			t.Errorf("%s: the cache listed: %q", res, lists)
		}
	}
}
