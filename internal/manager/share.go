package manager

import (
	"slices"
	"strconv"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"
)

// sharedSets is how many distinct string maps (label sets, a node's
// annotations), owner-reference lists and resource lists metaSharer
// remembers of each: a few hundred bytes each, so at most a few MiB.
const sharedSets = 4096

// metaSharer gives cached objects with equal labels one map, and objects
// with equal owner references one slice, instead of one copy each as the
// decoder makes them. The pods of a ReplicaSet, a DaemonSet or a Job carry
// the same labels and the same owner: on a cluster of 50,000 pods their
// maps and slices are about a sixth of the pod cache. Only the most recently
// seen sharedSets of each are remembered, so unique ones (a StatefulSet's
// pod names) cost a lookup and push out the least used, never grow memory.
// Of nodes, whose labels are unique (their host name), the annotations and
// allocatable resources are shared: equal on the nodes of one group.
//
// Sharing is safe because nobody writes to a cached object: readers get
// deep copies (controller-runtime's default) or, with UnsafeDisableDeepCopy,
// only read (see cache.go).
//
// Strings that many pods repeat (phase, generateName) are shared the same
// way: the decoder gives every pod a copy of its own. (Not a node's label
// keys: a node's labels are unique, so sharing their keys means a new map
// per node, which cost more than the keys saved; nor the namespace, whose
// decoded copies a heap profile still showed retained with it shared.)
type metaSharer struct {
	maps, owners, resources *lru.Cache
}

func newMetaSharer() *metaSharer {
	return &metaSharer{maps: lru.New(sharedSets), owners: lru.New(sharedSets), resources: lru.New(sharedSets)}
}

// transform is the cache transform: it replaces an object's labels and
// owner references by shared equal ones.
func (s *metaSharer) transform(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	m.SetLabels(s.stringMap(m.GetLabels()))
	// unique's handles are weak: a string no cached object holds any more
	// is collected.
	m.SetGenerateName(unique.Make(m.GetGenerateName()).Value())
	if p, ok := obj.(*corev1.Pod); ok {
		p.Status.Phase = unique.Make(p.Status.Phase).Value()
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

// transformNode is the cache transform for nodes: it replaces a node's
// annotations and allocatable resources by shared equal ones.
func (s *metaSharer) transformNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	n.Annotations = s.stringMap(n.Annotations)
	if len(n.Status.Allocatable) > 0 {
		key := resourcesKey(n.Status.Allocatable)
		if shared, ok := s.resources.Get(key); ok {
			n.Status.Allocatable = shared.(corev1.ResourceList)
		} else {
			s.resources.Add(key, n.Status.Allocatable)
		}
	}
	return obj, nil
}

// stringMap returns the remembered map equal to m, or remembers m.
func (s *metaSharer) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	key := labelsKey(m)
	if shared, ok := s.maps.Get(key); ok {
		return shared.(map[string]string)
	}
	s.maps.Add(key, m)
	return m
}

// resourcesKey is a resource list's content (as labelsKey).
func resourcesKey(l corev1.ResourceList) string {
	m := make(map[string]string, len(l))
	for name, q := range l {
		m[string(name)] = q.String()
	}
	return labelsKey(m)
}

// labelsKey is a map's content, keys sorted, each key and value prefixed
// with its length: two maps have the same key only if they are equal,
// whatever bytes their keys and values hold.
func labelsKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	n := 0
	for k, v := range labels {
		keys = append(keys, k)
		n += len(k) + len(v) + 8
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = appendField(b, k)
		b = appendField(b, labels[k])
	}
	return string(b)
}

// ownersKey is the owner references' content, in order (as labelsKey).
func ownersKey(refs []metav1.OwnerReference) string {
	var b []byte
	for _, r := range refs {
		for _, f := range []string{r.APIVersion, r.Kind, r.Name, string(r.UID), boolKey(r.Controller), boolKey(r.BlockOwnerDeletion)} {
			b = appendField(b, f)
		}
	}
	return string(b)
}

// appendField appends s's length, a colon and s.
func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
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
