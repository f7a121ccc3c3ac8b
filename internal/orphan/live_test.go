package orphan

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pagedReader serves n objects' metadata a page at a time, as the API
// server does, and records every request.
type pagedReader struct {
	client.Reader
	n        int
	requests []string
	failAt   int // fail the request of this index (1-based), 0: never
}

func (r *pagedReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	l, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("listed %T, not metadata", list)
	}
	r.requests = append(r.requests, fmt.Sprintf("%s limit=%d continue=%q ns=%q", l.GroupVersionKind().Kind, o.Limit, o.Continue, o.Namespace))
	if len(r.requests) == r.failAt {
		return errors.New("boom")
	}
	from := 0
	if o.Continue != "" {
		from, _ = strconv.Atoi(o.Continue)
	}
	to := min(r.n, from+int(o.Limit))
	for i := from; i < to; i++ {
		l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Namespace: o.Namespace}})
	}
	if to < r.n {
		l.Continue = strconv.Itoa(to)
	}
	return nil
}

func TestEachLive(t *testing.T) {
	nodes := corev1.SchemeGroupVersion.WithKind("NodeList")
	for _, tc := range []struct {
		name     string
		n        int
		opts     []client.ListOption
		requests []string
	}{
		{"empty", 0, nil, []string{`NodeList limit=500 continue="" ns=""`}},
		{"one page", 500, nil, []string{`NodeList limit=500 continue="" ns=""`}},
		{"pages, the caller's options kept", 1201, []client.ListOption{client.InNamespace("a")}, []string{
			`NodeList limit=500 continue="" ns="a"`, `NodeList limit=500 continue="500" ns="a"`, `NodeList limit=500 continue="1000" ns="a"`}},
		{"the caller's page size", 250, []client.ListOption{client.Limit(LiveNodePageSize)}, []string{
			`NodeList limit=100 continue="" ns=""`, `NodeList limit=100 continue="100" ns=""`, `NodeList limit=100 continue="200" ns=""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pagedReader{n: tc.n}
			var seen int
			err := EachLive(context.Background(), r, nodes, func(o *metav1.PartialObjectMetadata) {
				if want := fmt.Sprintf("n%d", seen); o.Name != want {
					t.Errorf("object %d is %s, want %s", seen, o.Name, want)
				}
				seen++
			}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if seen != tc.n {
				t.Errorf("saw %d objects, want %d", seen, tc.n)
			}
			if diff := cmp.Diff(tc.requests, r.requests); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a failed page fails the listing", func(t *testing.T) {
		r := &pagedReader{n: 1200, failAt: 2}
		if err := EachLive(context.Background(), r, nodes, func(*metav1.PartialObjectMetadata) {}); err == nil {
			t.Fatal("EachLive succeeded with a failed second page")
		}
	})
}
