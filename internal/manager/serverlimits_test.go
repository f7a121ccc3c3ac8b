package manager

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// deadlineRecorder records the deadlines http.ResponseController sets.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	read, write time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error  { d.read = t; return nil }
func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.write = t; return nil }

// registered keeps what is registered on it.
type registered struct {
	webhook.Server
	hooks map[string]http.Handler
}

func (r *registered) Register(path string, h http.Handler) { r.hooks[path] = h }

// checkDeadlines serves h once and checks it set read and write deadlines
// of about read and write from now.
func checkDeadlines(t *testing.T, name string, h http.Handler, read, write time.Duration) {
	t.Helper()
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	start := time.Now()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.read.Before(start.Add(read)) || rec.read.After(time.Now().Add(read)) {
		t.Errorf("%s: read deadline %s after the request, want %s", name, rec.read.Sub(start), read)
	}
	if rec.write.Before(start.Add(write)) || rec.write.After(time.Now().Add(write)) {
		t.Errorf("%s: write deadline %s after the request, want %s", name, rec.write.Sub(start), write)
	}
}

// TestControllerRuntimeServersGetDeadlines: every webhook registered on
// the manager's webhook server, and the metrics endpoint through its
// filter, gets read and write deadlines, which controller-runtime's options
// cannot set.
func TestControllerRuntimeServersGetDeadlines(t *testing.T) {
	inner := &registered{hooks: map[string]http.Handler{}}
	deadlineWebhookServer{inner}.Register("/hook", http.NotFoundHandler())
	checkDeadlines(t, "webhook", inner.hooks["/hook"], webhookReadTimeout, webhookWriteTimeout)

	filter, err := withDeadlines(nil)(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	checkDeadlines(t, "metrics", h, metricsReadTimeout, metricsWriteTimeout)
}
