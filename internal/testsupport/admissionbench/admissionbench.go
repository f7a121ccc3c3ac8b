// Package admissionbench drives an admission webhook handler the way the
// API server does (an AdmissionReview in a POST body, the answer decoded
// back), for load-independent micro-benchmarks of each webhook: ns/op,
// B/op and allocs/op of the whole request, review decoding and response
// encoding included.
package admissionbench

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// quiet gives controller-runtime a logger that discards, as the manager
// has one (its own, at a level that logs no request): without one, its
// delegating logger queues every request's logger until one is set.
var quiet = sync.OnceFunc(func() { log.SetLogger(logr.Discard()) })

// Review encodes an AdmissionReview of op on obj (old: the stored object of
// an update, or nil) as the API server sends it.
func Review(tb testing.TB, op admissionv1.Operation, gvr metav1.GroupVersionResource, gvk metav1.GroupVersionKind, namespace, name string, obj, old runtime.Object) []byte {
	tb.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			tb.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("0d8f4b2a-5c1e-4f7a-9a3b-2e6c8d1f0a97"), Kind: gvk, Resource: gvr,
			RequestKind: &gvk, RequestResource: &gvr, Name: name, Namespace: namespace, Operation: op,
			Object: raw(obj), OldObject: raw(old),
		},
	}
	b, err := json.Marshal(&review)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Serve posts body to h once and returns the decoded response.
func Serve(tb testing.TB, h http.Handler, body []byte) *admissionv1.AdmissionResponse {
	tb.Helper()
	quiet()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(body))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Response == nil {
		tb.Fatalf("not an AdmissionReview answer (%v): %s", err, w.Body.String())
	}
	return out.Response
}

// Bench posts body to h b.N times, reporting allocations; it fails when an
// answer is not a 200.
func Bench(b *testing.B, h http.Handler, body []byte) {
	b.Helper()
	quiet()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	start := cpuTime()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, post(body))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
	}
	// The process's CPU time per request: unlike ns/op, it does not grow
	// with the machine's load (on a shared machine the wall time does).
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func post(body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// NodeTainter benchmarks a node webhook that taints selected nodes, as
// test/bench/webhooks calls it: the creation of a kubelet-sized node with
// label (patched with taint) and an update of that node once it carries
// the taint (allowed unchanged).
func NodeTainter(b *testing.B, h http.Handler, label string, taint corev1.Taint) {
	gvr := metav1.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvk := metav1.GroupVersionKind{Version: "v1", Kind: "Node"}
	node := Node("node-1", map[string]string{label: "true"})
	tainted := node.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{taint}
	updated := tainted.DeepCopy()
	updated.Labels["bench.edgeplane.io/updated"] = "true"
	for _, c := range []struct {
		name    string
		body    []byte
		patched bool
	}{
		{"create", Review(b, admissionv1.Create, gvr, gvk, "", node.Name, node, nil), true},
		{"update", Review(b, admissionv1.Update, gvr, gvk, "", node.Name, updated, tainted), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if r := Serve(b, h, c.body); !r.Allowed || (len(r.Patch) > 0) != c.patched {
				b.Fatalf("unexpected answer: allowed %v, patch %s", r.Allowed, r.Patch)
			}
			Bench(b, h, c.body)
		})
	}
}
