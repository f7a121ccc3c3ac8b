package orphan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LivePageSize is how many objects EachLive holds at once.
const LivePageSize = 500

// EachLive calls fn for every object of a kind (list names its list kind,
// e.g. v1 NodeList) that reader lists, metadata only and LivePageSize at a
// time. A sweep reads its owners live (an uncached reader) and often needs
// only to know which exist: a full list of a large cluster's nodes (their
// status, images, managed fields) would be held all at once and weigh tens
// of MiB at 5,000 nodes, where a page of metadata weighs about one.
func EachLive(ctx context.Context, reader client.Reader, list schema.GroupVersionKind, fn func(*metav1.PartialObjectMetadata), opts ...client.ListOption) error {
	page := &client.ListOptions{}
	page.ApplyOptions(opts)
	page.Limit = LivePageSize
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
