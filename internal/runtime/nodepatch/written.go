package nodepatch

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// Written gives a controller that patches nodes read-your-writes on them
// (runtime/expect): the pass right after a patch, which the patch's own
// watch event often triggers, may be served by the cache the node as it
// was before the patch, and a patch computed from that copy — removing a
// taint already removed — is refused (422) and costs a read of the node
// and a second patch. With Written the pass starts from the node as this
// process patched it instead, as long as the cache shows no newer version.
type Written struct {
	w *expect.Writes[string, *corev1.Node]
}

// NewWritten remembers patched nodes for ttl, at most size of them.
func NewWritten(ttl time.Duration, size int, clk clock.PassiveClock) *Written {
	return &Written{w: expect.New[string, *corev1.Node](ttl, size, clk)}
}

// Record remembers patched, the node as stored after a patch computed from
// the version before.
func (w *Written) Record(before string, patched *corev1.Node) {
	if patched == nil || patched.ResourceVersion == "" || patched.ResourceVersion == before {
		return
	}
	w.w.Record(patched.Name, patched.DeepCopy(), patched.ResourceVersion, before)
}

// Latest returns the newer of cached and the node this process last
// patched (a copy): the patched one when cached predates the patch.
func (w *Written) Latest(cached *corev1.Node) *corev1.Node {
	if cached == nil {
		return nil
	}
	patched, verdict := w.w.Check(cached.Name, cached.ResourceVersion)
	return Latest(cached, patched, verdict)
}

// Latest picks the copy of a node a controller should work from: the one
// it patched (a copy of it) when the cached copy is behind that patch and
// is the same node (not one deleted and created again under its name),
// else the cached copy.
func Latest(cached, patched *corev1.Node, verdict expect.Verdict) *corev1.Node {
	if verdict != expect.Behind || patched == nil || cached == nil || patched.UID != cached.UID {
		return cached
	}
	return patched.DeepCopy()
}
