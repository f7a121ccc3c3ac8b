package admissionbody

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// countingBody counts the reads that return data.
type countingBody struct {
	r     io.Reader
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.reads++
	}
	return n, err
}

func (b *countingBody) Close() error { return nil }

func TestBuffered(t *testing.T) {
	payload := strings.Repeat("x", 5000)
	for name, tc := range map[string]struct {
		body          io.Reader
		contentLength int64
		want          string
		wantErr       error
		// wantReads is how many reads of the original body returned data
		// before the handler ran (-1: not counted).
		wantReads int
	}{
		"the announced length, in one read": {body: strings.NewReader(payload), contentLength: 5000, want: payload, wantReads: 1},
		"unknown length: passed on unread":  {body: strings.NewReader(payload), contentLength: -1, want: payload, wantReads: 0},
		"too large: passed on unread":       {body: strings.NewReader(payload), contentLength: MaxBody + 1, want: payload, wantReads: 0},
		"shorter than announced":            {body: strings.NewReader("abc"), contentLength: 10, want: "abc", wantReads: 1},
		// The server never passes on more than the announced length.
		"longer than announced": {body: strings.NewReader(payload), contentLength: 10, want: payload[:10], wantReads: 1},
		"a failing body":        {body: io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errors.New("reset"))), contentLength: 10, want: "abc", wantErr: errors.New("reset"), wantReads: -1},
	} {
		t.Run(name, func(t *testing.T) {
			cb := &countingBody{r: tc.body}
			var got string
			var gotErr error
			readsBefore := -1
			h := Buffered(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				readsBefore = cb.reads
				b, err := io.ReadAll(r.Body)
				got, gotErr = string(b), err
			}))
			req := httptest.NewRequest(http.MethodPost, "/hook", cb)
			req.ContentLength = tc.contentLength
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Errorf("the handler read %d bytes, want %d", len(got), len(tc.want))
			}
			if (gotErr == nil) != (tc.wantErr == nil) || gotErr != nil && gotErr.Error() != tc.wantErr.Error() {
				t.Errorf("the handler's read ended with %v, want %v", gotErr, tc.wantErr)
			}
			if tc.wantReads >= 0 && readsBefore != tc.wantReads {
				t.Errorf("%d reads of the body before the handler, want %d", readsBefore, tc.wantReads)
			}
		})
	}
}

// registry is a webhook.Server that keeps what is registered on it.
type registry struct {
	webhook.Server
	hooks map[string]http.Handler
}

func (r *registry) Register(path string, hook http.Handler) { r.hooks[path] = hook }

// TestServer: a handler registered through Server reads the body already
// read, in one read of the original, as Buffered.
func TestServer(t *testing.T) {
	inner := &registry{hooks: map[string]http.Handler{}}
	readsBefore := -1
	cb := &countingBody{r: strings.NewReader(strings.Repeat("x", 5000))}
	Server(inner).Register("/hook", http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		readsBefore = cb.reads
		_, _ = io.ReadAll(r.Body)
	}))
	hook, ok := inner.hooks["/hook"]
	if !ok {
		t.Fatal("nothing was registered on the wrapped server")
	}
	req := httptest.NewRequest(http.MethodPost, "/hook", cb)
	req.ContentLength = 5000
	hook.ServeHTTP(httptest.NewRecorder(), req)
	if readsBefore != 1 {
		t.Errorf("%d reads of the body before the handler, want 1", readsBefore)
	}
}
