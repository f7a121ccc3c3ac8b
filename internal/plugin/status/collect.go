package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Served is one kind the API server serves in the edgeplane category.
type Served struct {
	Kind
	Namespaced bool
	order      int
}

// Discover lists the kinds in the edgeplane category that the API server
// serves, in table order (known kinds first, then others by name). Known
// kinds whose CRD is not installed are left out. A group that fails
// discovery is reported in the error only if nothing was found at all.
func Discover(disc discovery.DiscoveryInterface, known []Kind) ([]Served, error) {
	_, lists, err := disc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the API server's resources: %w", err)
	}
	byGR := map[schema.GroupResource]int{}
	for i, k := range known {
		byGR[k.Resource.GroupResource()] = i
	}
	var out []Served
	seen := map[schema.GroupResource]bool{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Categories, Category) || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if seen[gr] {
				continue // served in several versions: the preferred one is listed first
			}
			seen[gr] = true
			s := Served{Kind: Kind{Kind: r.Kind, Resource: gv.WithResource(r.Name)}, Namespaced: r.Namespaced, order: len(known)}
			if i, ok := byGR[gr]; ok {
				s.Detail, s.order = known[i].Detail, i
				s.Kind.Kind = known[i].Kind
			}
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Served) int {
		if a.order != b.order {
			return a.order - b.order
		}
		return strings.Compare(a.Kind.Kind, b.Kind.Kind)
	})
	return out, nil
}

// Collect lists the objects of every served kind: namespaced kinds in
// namespace (every namespace when it is empty), cluster-scoped kinds
// always. It returns the rows, sorted, and the objects in the same order. A
// kind that cannot be listed (forbidden, say) is left out and its error
// joined into the returned error, as kubectl get does with several kinds.
func Collect(ctx context.Context, dyn dynamic.Interface, kinds []Served, namespace string) ([]Row, []*unstructured.Unstructured, error) {
	type pair struct {
		row Row
		obj *unstructured.Unstructured
	}
	var pairs []pair
	var errs []error
	for _, k := range kinds {
		var ri dynamic.ResourceInterface = dyn.Resource(k.Resource)
		if k.Namespaced {
			ri = dyn.Resource(k.Resource).Namespace(namespace)
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", k.Resource.GroupResource(), err))
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			r := RowFor(k.Kind, u)
			r.order = k.order
			pairs = append(pairs, pair{r, u})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return compareRows(a.row, b.row) })
	rows := make([]Row, len(pairs))
	objs := make([]*unstructured.Unstructured, len(pairs))
	for i, p := range pairs {
		rows[i], objs[i] = p.row, p.obj
	}
	return rows, objs, errors.Join(errs...)
}
