package httpserve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var testLimits = Limits{
	ReadHeaderTimeout: time.Second, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 2 * time.Second,
	IdleTimeout: time.Second, MaxHeaderBytes: 4 << 10, MaxBodyBytes: 1 << 10,
}

// TestHTTPServerSetsEveryLimit: the http.Server carries every limit, and a
// limit left at zero (which net/http reads as none) is refused.
func TestHTTPServerSetsEveryLimit(t *testing.T) {
	s := &Server{Name: "test", Handler: http.NotFoundHandler(), Limits: testLimits}
	srv, err := s.HTTPServer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadHeaderTimeout != testLimits.ReadHeaderTimeout || srv.ReadTimeout != testLimits.ReadTimeout ||
		srv.WriteTimeout != testLimits.WriteTimeout || srv.IdleTimeout != testLimits.IdleTimeout || srv.MaxHeaderBytes != testLimits.MaxHeaderBytes {
		t.Errorf("server limits %+v, want %+v", srv, testLimits)
	}
	for name, edit := range map[string]func(*Limits){
		"no read timeout":   func(l *Limits) { l.ReadTimeout = 0 },
		"no write timeout":  func(l *Limits) { l.WriteTimeout = 0 },
		"no idle timeout":   func(l *Limits) { l.IdleTimeout = 0 },
		"no header timeout": func(l *Limits) { l.ReadHeaderTimeout = 0 },
		"no body cap":       func(l *Limits) { l.MaxBodyBytes = 0 },
		"no header cap":     func(l *Limits) { l.MaxHeaderBytes = 0 },
	} {
		l := testLimits
		edit(&l)
		if _, err := (&Server{Name: "test", Limits: l}).HTTPServer(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if err := (&Server{Name: "test", Limits: l, Addr: "127.0.0.1:0"}).Start(context.Background()); err == nil {
			t.Errorf("%s: started", name)
		}
	}
}

// TestServerCutsOffAStalledRequest: a client that announces a body and
// never sends it loses the connection once the read timeout passes, instead
// of holding a handler forever.
func TestServerCutsOffAStalledRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handlerDone := make(chan error, 1)
	s := &Server{Name: "test", Listener: ln, Limits: testLimits, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		handlerDone <- err
	})}
	go func() { _ = s.Start(ctx) }()
	conn := stall(t, ln.Addr().String(), handlerDone)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(bufio.NewReader(conn)); err != nil {
		t.Fatalf("the connection was not closed: %v", err)
	}
}

// TestBody: a body over the limit is refused with 413, at once when its
// length is announced and after at most the limit when it is not; a
// handler sees a body within the limit whole.
func TestBody(t *testing.T) {
	h := Body(10, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if IsTooLarge(err) {
			TooLarge(w, 10)
			return
		}
		_, _ = w.Write(b)
	}))
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		want    int
	}{
		{"within the limit", "0123456789", false, http.StatusOK},
		{"announced over the limit", "0123456789x", false, http.StatusRequestEntityTooLarge},
		{"unannounced over the limit", "0123456789x", true, http.StatusRequestEntityTooLarge},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
		if tc.chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
		}
		if tc.want == http.StatusOK && rec.Body.String() != tc.body {
			t.Errorf("%s: handler read %q", tc.name, rec.Body.String())
		}
	}
}

// TestDeadlinesCutOffAStalledRequest: a server built without timeouts
// (controller-runtime's) gets them per request from Deadlines.
func TestDeadlinesCutOffAStalledRequest(t *testing.T) {
	handlerDone := make(chan error, 1)
	srv := httptest.NewUnstartedServer(Deadlines(300*time.Millisecond, time.Second, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		handlerDone <- err
	})))
	srv.Start()
	defer srv.Close()
	stall(t, srv.Listener.Addr().String(), handlerDone)
}

// stall sends a request announcing a body of 100 bytes and sends 3, then
// waits until the handler's read of the body has failed (handlerDone).
func stall(t *testing.T, addr string, handlerDone <-chan error) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-handlerDone:
		if err == nil {
			t.Fatal("the handler read a whole body that was never sent")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled request still holds its handler after 30 s")
	}
	return conn
}
