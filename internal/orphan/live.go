package orphan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LivePageSize is how many objects EachLive holds at once, unless the
// caller's options set a limit.
const LivePageSize = 500

// LiveNodePageSize is the page to list nodes with: a node's metadata is
// mostly its managed fields (the kubelet's status writes), about 17 KB a
// node as listed; a page of 500 was an 8.7 MB response and as much again
// decoded, 19 MB in flight at once in the 5,000-node envelope's heap
// profile at the first manager's peak (the AnycastIPBinding sweep's owner
// listing, every 5 minutes). 100 nodes a page hold about 4 MB.
const LiveNodePageSize = 100

// EachLive calls fn for every object of a kind (list names its list kind,
// e.g. v1 NodeList) that reader lists, metadata only and LivePageSize at a
// time (or the limit in opts). A sweep reads its owners live (an uncached
// reader) and often needs only to know which exist: a full list of a large
// cluster's nodes (their status, images, managed fields) would be held all
// at once and weigh tens of MiB at 5,000 nodes, where a page of metadata
// weighs a few (LiveNodePageSize).
func EachLive(ctx context.Context, reader client.Reader, list schema.GroupVersionKind, fn func(*metav1.PartialObjectMetadata), opts ...client.ListOption) error {
	page := &client.ListOptions{Limit: LivePageSize}
	page.ApplyOptions(opts)
	for {
		var l metav1.PartialObjectMetadataList
		l.SetGroupVersionKind(list)
		if err := reader.List(ctx, &l, page); err != nil {
			return fmt.Errorf("listing %s: %w", list.Kind, err)
		}
		for i := range l.Items {
			fn(&l.Items[i])
		}
		if l.Continue == "" {
			return nil
		}
		page.Continue = l.Continue
	}
}
