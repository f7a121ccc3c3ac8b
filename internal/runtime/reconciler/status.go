package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/edgeplane/edgeplane/internal/status"
)

// finish writes the pass's status, once, if it changed (or leaves it to a
// later pass when the kind defers it), and returns res.
func (p *pass[T]) finish(ctx context.Context, res reconcile.Result) (reconcile.Result, error) {
	if p.skipStatus {
		return res, nil
	}
	r := p.r
	next, err := statusJSON(p.obj)
	if err != nil {
		return res, err
	}
	m := r.memoOf(p.key, p.obj)
	if next == p.storedStatus {
		if m != nil && m.deferred {
			r.update(p.key, func(m *memo[T]) { m.deferred, m.unwritten = false, *new(T) })
		}
		return res, nil
	}
	if r.o.DeferStatus != nil && m != nil && m.written != "" && m.written == p.storedStatus {
		written, err := withStatusJSON(p.obj, m.written)
		if err == nil && r.o.DeferStatus(written, p.obj, r.o.Clock.Since(m.writtenAt)) {
			unwritten := copyOf(p.obj)
			r.update(p.key, func(m *memo[T]) { m.deferred, m.unwritten = true, unwritten })
			return res, nil
		}
	}
	before := p.obj.GetResourceVersion()
	err = r.o.Client.Status().Update(ctx, p.obj)
	if apierrors.IsConflict(err) {
		var done bool
		if done, err = p.retryConflict(ctx, next); done || err != nil {
			return mergeConflict(res, err)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return res, nil
	case err != nil:
		return res, fmt.Errorf("writing the status of %s: %w", p.key, err)
	}
	at := r.o.Clock.Now()
	if m != nil && m.written == next {
		at = m.writtenAt
	}
	r.record(p.key, p.obj, before, func(m *memo[T]) {
		m.written, m.writtenAt, m.deferred, m.unwritten = next, at, false, *new(T)
	})
	return res, nil
}

// retryConflict handles a status write that lost an optimistic-lock race:
// when the stored object differs from the pass's copy only in what the
// status does not depend on (its status is still the one the pass started
// from, and its generation the same), the status is written onto the stored
// version; otherwise the next pass recomputes it from the newer object.
// done reports that nothing more is to be written.
func (p *pass[T]) retryConflict(ctx context.Context, next string) (done bool, err error) {
	r := p.r
	if r.o.Reader == nil {
		return true, nil
	}
	live := r.o.New()
	if err := r.o.Reader.Get(ctx, p.key, live); err != nil || live.GetUID() != p.obj.GetUID() {
		return true, nil
	}
	stored, err := statusJSON(live)
	if err != nil || stored != p.storedStatus || live.GetGeneration() != p.obj.GetGeneration() {
		return true, nil
	}
	if stored == next {
		r.record(p.key, live, "", func(*memo[T]) {})
		return true, nil
	}
	p.obj.SetResourceVersion(live.GetResourceVersion())
	return false, r.o.Client.Status().Update(ctx, p.obj)
}

// mergeConflict turns a lost race into a short requeue (the newer version
// also triggers a watch event; the requeue covers a missed one).
func mergeConflict(res reconcile.Result, err error) (reconcile.Result, error) {
	if err != nil && !apierrors.IsConflict(err) {
		return res, err
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > status.ConflictRequeueAfter {
		res.RequeueAfter = status.ConflictRequeueAfter
	}
	return res, nil
}

// statusJSON is obj's status as the API server would store it (the JSON of
// its Status field: sub-second times and empty fields compare equal), or
// "null" for a kind without one. It encodes only the status: converting the
// whole object to unstructured first, managed fields included, was most of
// a reconcile's CPU in a wave of new objects (8-10% of the manager's CPU in
// the node-webhook benchmarks), CPU the webhooks served meanwhile wait for.
func statusJSON(obj client.Object) (string, error) {
	var st any
	if f, ok := statusField(obj); ok {
		st = f.Interface()
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("encoding the status of %s: %w", obj.GetName(), err)
	}
	return string(raw), nil
}

// statusField is obj's Status field, if its kind has a settable one (the
// one field statusJSON encodes and withStatusJSON decodes into).
func statusField(obj client.Object) (reflect.Value, bool) {
	v := reflect.Indirect(reflect.ValueOf(obj))
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.FieldByName("Status")
	return f, f.IsValid() && f.CanSet()
}

// withStatusOf returns a copy of obj carrying from's status.
func withStatusOf[T Object](obj, from T) (T, error) {
	raw, err := statusJSON(from)
	if err != nil {
		return obj, err
	}
	return withStatusJSON(obj, raw)
}

// withStatusJSON returns a copy of obj carrying the status raw (JSON). Only
// the status is decoded, into the zeroed Status field of a deep copy (a
// decode over the copied status would keep fields the new status leaves
// out). The round trip of the whole object through unstructured that this
// replaces took 50 of 860 ms of the test process's CPU samples in a
// profiled BenchmarkConverge200 run: every pass that leaves progress
// unwritten makes one.
func withStatusJSON[T Object](obj T, raw string) (T, error) {
	out := copyOf(obj)
	f, ok := statusField(out)
	if !ok {
		return out, nil
	}
	f.SetZero()
	if err := json.Unmarshal([]byte(raw), f.Addr().Interface()); err != nil {
		return obj, fmt.Errorf("decoding a status of %s: %w", obj.GetName(), err)
	}
	return out, nil
}
