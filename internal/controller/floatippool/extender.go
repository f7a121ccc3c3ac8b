package floatippool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
	"github.com/edgeplane/edgeplane/internal/runtime/informerstore"
)

// Extender serves galaxy-ipam's scheduler-extender contract over an
// Allocator: POST /v1/filter, /v1/priority, /v1/bind, GET /healthy.
type Extender struct {
	Allocator *Allocator
	// Nodes reads nodes when the scheduler sends only names
	// (nodeCacheCapable: true) and NodeStore cannot answer.
	Nodes client.Reader
	// NodeStore, if set, is the manager's node informer's store: once
	// synced, the named nodes are looked up in it by name, read-only,
	// instead of listed (see namedNodes).
	NodeStore *informerstore.Store[*corev1.Node]
	// Metrics records latencies; nil disables.
	Metrics *Metrics
	// Recorder puts a Warning Event on a pod whose request cannot be met as
	// written, so its owner sees why from edgeplane and not only in the
	// scheduler's FailedScheduling text; nil disables.
	Recorder events.EventRecorder
}

// ServeHTTP routes the extender's endpoints.
func (e *Extender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthy", "/healthz":
		_, _ = w.Write([]byte("ok"))
	case "/v1/filter":
		e.filter(w, r)
	case "/v1/priority":
		writeJSON(w, []wire.HostPriority{})
	case "/v1/bind":
		e.bind(w, r)
	default:
		http.NotFound(w, r)
	}
}

// ExtenderName is the reporting controller of the extender's Events on
// pods (docs/floatippool.md and docs/operations.md name it).
const ExtenderName = "floatippool-extender"

// bindTimeout bounds a bind, which finishes (or rolls back) even when the
// scheduler stops waiting.
const bindTimeout = 30 * time.Second

// decodeFailed answers a body that could not be decoded: 413 past the
// server's body cap (httpserve.Body), which the scheduler reports as an
// extender error, else the decoding error in the verb's result.
func decodeFailed(w http.ResponseWriter, err error, result any) {
	if httpserve.IsTooLarge(err) {
		httpserve.TooLarge(w, maxBody)
		return
	}
	writeJSON(w, result)
}

func (e *Extender) filter(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	args, err := wire.DecodeFilterArgs(r.Body)
	if err != nil {
		decodeFailed(w, err, wire.ExtenderFilterResult{Error: err.Error()})
		return
	}
	ctx := r.Context()
	// Pointers, not copies: a copy of every node per call was 4 MB at
	// 5,000 nodes, on every scheduling attempt of a float-IP pod.
	var nodes []*corev1.Node
	switch {
	case args.Nodes != nil:
		for i := range args.Nodes.Items {
			nodes = append(nodes, &args.Nodes.Items[i])
		}
	case args.NodeNames != nil:
		// nodeCacheCapable: the scheduler sends names.
		if nodes, err = e.namedNodes(ctx, *args.NodeNames); err != nil {
			writeJSON(w, wire.ExtenderFilterResult{Error: err.Error()})
			return
		}
	}
	res, err := e.Allocator.Filter(ctx, args.Pod, nodes)
	e.Metrics.observe("filter", start, err)
	if err != nil {
		if transient(err) {
			// An extender error makes the scheduler retry the pod with
			// backoff; "unresolvable" would park it as if its request were
			// wrong.
			log.FromContext(ctx).Error(err, "Float-IP filter failed; the scheduler retries the pod", "pod", client.ObjectKeyFromObject(args.Pod))
			writeJSON(w, wire.ExtenderFilterResult{Error: err.Error()})
			return
		}
		// The pod's own request cannot be met: no other node, and no
		// preemption, helps until the pod changes.
		reason := ReasonUnsupportedRequest
		var re *RequestError
		if errors.As(err, &re) {
			reason = re.Reason
		}
		e.refused(ctx, args.Pod, reason, err)
		failed := map[string]string{}
		for _, n := range nodes {
			failed[n.Name] = err.Error()
		}
		writeJSON(w, wire.ExtenderFilterResult{FailedAndUnresolvableNodes: failed})
		return
	}
	out := wire.ExtenderFilterResult{FailedNodes: res.Failed}
	if args.NodeNames != nil {
		names := res.Passed
		out.NodeNames = &names
	} else {
		passed := map[string]bool{}
		for _, n := range res.Passed {
			passed[n] = true
		}
		list := &corev1.NodeList{}
		for _, n := range nodes {
			if passed[n.Name] {
				list.Items = append(list.Items, *n)
			}
		}
		out.Nodes = list
	}
	writeJSON(w, out)
}

// namedNodes returns the nodes the scheduler named, read-only; an unknown
// name gets a node of that name only (the filter fails it as unknown).
// From the synced NodeStore each is a pointer into the informer's store:
// no copy at all. Otherwise (no cache yet, tests) one List of the cache,
// not deep-copied but still a copy of every node's struct, 4.5 MB at
// 5,000 nodes on every scheduling attempt of a float-IP pod: at the scale
// envelope the float-IP wave's filters held 11 MB of such copies at once
// at the manager's peak.
func (e *Extender) namedNodes(ctx context.Context, names []string) ([]*corev1.Node, error) {
	nodes := make([]*corev1.Node, 0, len(names))
	unknown := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	if e.NodeStore.Synced() {
		for _, n := range names {
			node, found, _ := e.NodeStore.Get(n)
			if !found {
				node = unknown(n)
			}
			nodes = append(nodes, node)
		}
		return nodes, nil
	}
	var list corev1.NodeList
	if err := e.Nodes.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	byName := make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	for _, n := range names {
		node, ok := byName[n]
		if !ok {
			node = unknown(n)
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

func (e *Extender) bind(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	args, err := wire.DecodeBindingArgs(r.Body)
	if err != nil {
		decodeFailed(w, err, wire.ExtenderBindingResult{Error: err.Error()})
		return
	}
	// A bind that the scheduler gives up on still finishes (or rolls back)
	// rather than stopping between creating FloatIPs and binding.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), bindTimeout)
	defer cancel()
	_, err = e.Allocator.Bind(ctx, args.PodNamespace, args.PodName, args.PodUID, args.Node)
	e.Metrics.observe("bind", start, err)
	if err != nil {
		// Only a request problem is the pod's to hear about; the rest
		// (no IP left, a holder still running) the scheduler retries.
		var re *RequestError
		if errors.As(err, &re) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID}}
			e.refused(ctx, pod, re.Reason, err)
		}
		writeJSON(w, wire.ExtenderBindingResult{Error: err.Error()})
		return
	}
	writeJSON(w, wire.ExtenderBindingResult{})
}

// refused tells the pod why its float-IP request cannot be met: a Warning
// Event with reason.
func (e *Extender) refused(ctx context.Context, pod *corev1.Pod, reason string, err error) {
	log.FromContext(ctx).V(1).Info("Float-IP request refused", "pod", client.ObjectKeyFromObject(pod), "reason", reason, "error", err.Error())
	if e.Recorder != nil {
		e.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, reason, "Schedule", "%s", err.Error())
	}
}

// transient reports whether err came from reading the cluster (an answer
// of the API server, including NotFound from a cache that lags; the
// network; a deadline) rather than from the pod's request: it says nothing
// about the pod, so the scheduler should retry it.
func transient(err error) bool {
	var status apierrors.APIStatus
	var netErr net.Error
	return errors.As(err, &status) || errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
