package informerstore

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func pod(ns, name, app string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
}

func indexerOf(t *testing.T, objs ...client.Object) toolscache.Indexer {
	t.Helper()
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return indexer
}

func keys(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

// TestStore: the store answers with the cache's own objects once synced,
// and not at all before or without a store.
func TestStore(t *testing.T) {
	pods := []*corev1.Pod{pod("a", "web-1", "web"), pod("a", "web-2", "web"), pod("a", "db-1", "db"), pod("b", "web-1", "web")}
	var objs []client.Object
	for _, p := range pods {
		objs = append(objs, p)
	}
	synced := New[*corev1.Pod](indexerOf(t, objs...), nil)
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	for name, tc := range map[string]struct {
		store  *Store[*corev1.Pod]
		ns     string
		sel    labels.Selector
		want   []string
		wantOK bool
	}{
		"selected in the namespace": {store: synced, ns: "a", sel: web, want: []string{"a/web-1", "a/web-2"}, wantOK: true},
		"every pod of a namespace":  {store: synced, ns: "a", want: []string{"a/db-1", "a/web-1", "a/web-2"}, wantOK: true},
		"every namespace":           {store: synced, sel: web, want: []string{"a/web-1", "a/web-2", "b/web-1"}, wantOK: true},
		"none selected":             {store: synced, ns: "c", sel: web, wantOK: true},
		"not synced yet":            {store: New[*corev1.Pod](indexerOf(t, objs...), func() bool { return false }), ns: "a"},
		"no store":                  {store: nil, ns: "a"},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.store.List(tc.ns, tc.sel)
			if ok != tc.wantOK || !slices.Equal(keys(got), tc.want) {
				t.Errorf("List = %v, %v; want %v, %v", keys(got), ok, tc.want, tc.wantOK)
			}
			for _, p := range got {
				if !slices.Contains(pods, p) {
					t.Errorf("pod %s/%s is a copy, not the cache's object", p.Namespace, p.Name)
				}
			}
		})
	}
	if p, found, ok := synced.Get("a/db-1"); !ok || !found || p != pods[2] {
		t.Errorf("Get(a/db-1) = %v, %v, %v; want the cache's object", p, found, ok)
	}
	if _, found, ok := synced.Get("a/missing"); !ok || found {
		t.Errorf("Get(a/missing) = found %v, ok %v; want not found, ok", found, ok)
	}
	if _, _, ok := (*Store[*corev1.Pod])(nil).Get("a/db-1"); ok {
		t.Error("a nil store answered Get")
	}
}

// informers answers GetInformer only.
type informers struct {
	cache.Informers
	inf   cache.Informer
	err   error
	calls int
}

func (i *informers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	i.calls++
	return i.inf, i.err
}

// indexed is an informer with a store.
type indexed struct {
	cache.Informer
	indexer toolscache.Indexer
}

func (i indexed) HasSynced() bool                { return true }
func (i indexed) GetIndexer() toolscache.Indexer { return i.indexer }

// TestLazy: the store is found once; a failure is not remembered; an
// informer without a single store (a cache of several namespaces) gives a
// nil Store, which answers nothing.
func TestLazy(t *testing.T) {
	ctx := context.Background()
	p := pod("a", "web-1", "web")
	inf := &informers{err: errors.New("not yet")}
	var lazy Lazy[*corev1.Pod]
	if _, err := lazy.Get(ctx, inf, &corev1.Pod{}); err == nil {
		t.Fatal("the informer's error was not returned")
	}
	inf.inf, inf.err = indexed{indexer: indexerOf(t, p)}, nil
	for range 2 {
		store, err := lazy.Get(ctx, inf, &corev1.Pod{})
		if err != nil {
			t.Fatal(err)
		}
		if got, found, ok := store.Get("a/web-1"); !ok || !found || got != p {
			t.Errorf("Get = %v, %v, %v; want the cache's object", got, found, ok)
		}
	}
	if inf.calls != 2 {
		t.Errorf("GetInformer called %d times, want 2 (the failure, then once)", inf.calls)
	}

	var noStore Lazy[*corev1.Pod]
	store, err := noStore.Get(ctx, &informers{inf: struct{ cache.Informer }{}}, &corev1.Pod{})
	if err != nil || store != nil {
		t.Errorf("an informer without a store gave %v, %v; want a nil Store", store, err)
	}
	var noCache Lazy[*corev1.Pod]
	if store, err := noCache.Get(ctx, nil, &corev1.Pod{}); err != nil || store != nil {
		t.Errorf("nil informers gave %v, %v; want a nil Store", store, err)
	}
}
