package manager

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"
)

// sharedSets is how many distinct label sets (and owner-reference lists)
// metaSharer remembers: a few hundred bytes each, so at most a few MiB.
const sharedSets = 4096

// metaSharer gives cached objects with equal labels one map, and objects
// with equal owner references one slice, instead of one copy each as the
// decoder makes them. The pods of a ReplicaSet, a DaemonSet or a Job carry
// the same labels and the same owner: on a cluster of 50,000 pods their
// maps and slices are about a sixth of the pod cache. Only the most recently
// seen sharedSets of each are remembered, so unique ones (a StatefulSet's
// pod names) cost a lookup and push out the least used, never grow memory.
//
// Sharing is safe because nobody writes to a cached object: readers get
// deep copies (controller-runtime's default) or, with UnsafeDisableDeepCopy,
// only read (see cache.go).
type metaSharer struct {
	labels, owners *lru.Cache
}

func newMetaSharer() *metaSharer {
	return &metaSharer{labels: lru.New(sharedSets), owners: lru.New(sharedSets)}
}

// transform is the cache transform: it replaces an object's labels and
// owner references by shared equal ones.
func (s *metaSharer) transform(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	if labels := m.GetLabels(); len(labels) > 0 {
		key := labelsKey(labels)
		if shared, ok := s.labels.Get(key); ok {
			m.SetLabels(shared.(map[string]string))
		} else {
			s.labels.Add(key, labels)
		}
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		key := ownersKey(refs)
		if shared, ok := s.owners.Get(key); ok {
			m.SetOwnerReferences(shared.([]metav1.OwnerReference))
		} else {
			// Clipped, so that an append to a copy of the slice header
			// never writes into the shared array.
			refs = slices.Clip(refs)
			m.SetOwnerReferences(refs)
			s.owners.Add(key, refs)
		}
	}
	return obj, nil
}

// labelsKey is a map's content, keys sorted, each key and value followed by
// a NUL (which neither may contain).
func labelsKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	n := 0
	for k, v := range labels {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// ownersKey is the owner references' content, in order.
func ownersKey(refs []metav1.OwnerReference) string {
	var b strings.Builder
	for _, r := range refs {
		for _, f := range []string{r.APIVersion, r.Kind, r.Name, string(r.UID), boolKey(r.Controller), boolKey(r.BlockOwnerDeletion)} {
			b.WriteString(f)
			b.WriteByte(0)
		}
	}
	return b.String()
}

func boolKey(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "1"
	default:
		return "0"
	}
}
