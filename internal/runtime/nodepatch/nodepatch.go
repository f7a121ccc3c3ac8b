// Package nodepatch writes the marks a controller keeps on a node — one
// taint, some labels and annotations — as a JSON patch of exactly those
// keys, never a rewrite of the node's taint list, labels or annotations:
//
//   - Ops computes the patch from a copy of the node (pure, table-tested);
//     every removal is guarded by a test of the exact value the copy shows,
//     so a concurrent change makes the API server refuse the whole patch
//     instead of removing someone else's mark;
//   - SafeOnStale says whether the patch may be sent as computed from a
//     cached copy that can be older than the stored node;
//   - Apply sends it that way, and on a refusal (or a patch that is not
//     safe on a stale copy) reads the node from the API server and patches
//     once more.
//
// The Node admission webhooks use Ops too, so a node is marked the same
// way at admission and by the controller.
package nodepatch

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Want is what a controller wants of the marks it owns on a node. Keys it
// does not name are left alone.
type Want struct {
	// Taint, when its Key is set, is the taint the node must carry (Tainted)
	// or must not carry (whatever its value) with Taint's key and effect.
	Taint   corev1.Taint
	Tainted bool
	// Labels and Annotations map a key to the value it must have, or to nil
	// when the key must be absent.
	Labels      map[string]*string
	Annotations map[string]*string
}

// Op is one JSON patch (RFC 6902) operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// escape escapes a JSON pointer segment.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// HasTaint reports whether node carries a taint with t's key and effect.
func HasTaint(node *corev1.Node, t corev1.Taint) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(n corev1.Taint) bool { return n.MatchTaint(&t) })
}

// Ops returns the JSON patch that moves node to w, or nil when it is there.
func Ops(node *corev1.Node, w Want) []Op {
	ops := metaOps(node.Labels, "/metadata/labels", w.Labels)
	ops = append(ops, metaOps(node.Annotations, "/metadata/annotations", w.Annotations)...)
	if w.Taint.Key == "" {
		return ops
	}
	has := HasTaint(node, w.Taint)
	switch {
	case w.Tainted && !has:
		if node.Spec.Taints == nil {
			ops = append(ops, Op{Op: "add", Path: "/spec/taints", Value: []corev1.Taint{w.Taint}})
		} else {
			ops = append(ops, Op{Op: "add", Path: "/spec/taints/-", Value: w.Taint})
		}
	case !w.Tainted && has:
		// From the end, so that earlier indexes stay valid.
		for i := len(node.Spec.Taints) - 1; i >= 0; i-- {
			if t := node.Spec.Taints[i]; t.MatchTaint(&w.Taint) {
				path := fmt.Sprintf("/spec/taints/%d", i)
				ops = append(ops, Op{Op: "test", Path: path, Value: t}, Op{Op: "remove", Path: path})
			}
		}
	}
	return ops
}

// metaOps moves the string map have (at path) to want.
func metaOps(have map[string]string, path string, want map[string]*string) []Op {
	var ops []Op
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v := want[k]
		cur, ok := have[k]
		key := path + "/" + escape(k)
		switch {
		case v == nil && ok:
			ops = append(ops, Op{Op: "test", Path: key, Value: cur}, Op{Op: "remove", Path: key})
		case v != nil && (!ok || cur != *v):
			if have == nil && !slices.ContainsFunc(ops, func(o Op) bool { return o.Path == path }) {
				ops = append(ops, Op{Op: "add", Path: path, Value: map[string]string{}})
			}
			ops = append(ops, Op{Op: "add", Path: key, Value: *v})
		}
	}
	return ops
}

// SafeOnStale reports whether ops, computed from a copy of the node that
// may be older than the stored one, either do on the stored node exactly
// what they would do on the copy, or make the API server refuse the whole
// patch: every removal is guarded by a test of its exact value, every add
// sets one label, one annotation or appends one taint (the API server
// refuses a node with two taints of one key and effect), never a whole map
// or list, which would overwrite what the copy does not show.
func SafeOnStale(ops []Op) bool {
	for i, op := range ops {
		switch op.Op {
		case "test":
		case "remove":
			if i == 0 || ops[i-1].Op != "test" || ops[i-1].Path != op.Path {
				return false
			}
		case "add":
			if !oneKey(op.Path, "/metadata/labels/") && !oneKey(op.Path, "/metadata/annotations/") && op.Path != "/spec/taints/-" {
				return false
			}
		default:
			return false
		}
	}
	return len(ops) > 0
}

func oneKey(path, prefix string) bool {
	return strings.HasPrefix(path, prefix) && len(path) > len(prefix)
}

// Marshal encodes ops.
func Marshal(ops []Op) ([]byte, error) {
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encoding node patch: %w", err)
	}
	return b, nil
}

// Apply moves node to what want says of it and reports whether it wrote
// anything, with the node as stored after its patch (or as read, when
// nothing was written). want is asked again for a node read afresh, so a
// rule such as "remove the label if it names my address" is judged on
// what is stored. The patch is sent as computed from node when that is
// safe on a stale copy; otherwise, or when the API server refuses it, node
// is read again through reader first (right after a patch a cache may
// still show the old taints, and appending a taint once more would be
// refused as a duplicate).
func Apply(ctx context.Context, c client.Client, reader client.Reader, node *corev1.Node, want func(*corev1.Node) Want) (bool, *corev1.Node, error) {
	ops := Ops(node, want(node))
	if len(ops) == 0 {
		return false, node, nil
	}
	if SafeOnStale(ops) {
		patched, err := send(ctx, c, node, ops)
		if err == nil {
			return true, patched, nil
		}
		if apierrors.IsNotFound(err) {
			return false, node, err
		}
	}
	fresh := &corev1.Node{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(node), fresh); err != nil {
		return false, node, fmt.Errorf("reading node %s: %w", node.Name, err)
	}
	if ops = Ops(fresh, want(fresh)); len(ops) == 0 {
		return false, fresh, nil
	}
	patched, err := send(ctx, c, fresh, ops)
	if err != nil {
		return false, fresh, err
	}
	return true, patched, nil
}

func send(ctx context.Context, c client.Client, node *corev1.Node, ops []Op) (*corev1.Node, error) {
	data, err := Marshal(ops)
	if err != nil {
		return nil, err
	}
	n := node.DeepCopy()
	if err := c.Patch(ctx, n, client.RawPatch(types.JSONPatchType, data)); err != nil {
		return nil, fmt.Errorf("patching node %s: %w", node.Name, err)
	}
	return n, nil
}
