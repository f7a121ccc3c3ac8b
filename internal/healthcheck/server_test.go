package healthcheck

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDefaultLimitsBoundEveryPhase: the server the binary runs sets every
// timeout, a header cap and an in-flight cap, so no client can hold a
// connection, a goroutine or memory for as long as it likes.
func TestDefaultLimitsBoundEveryPhase(t *testing.T) {
	srv := NewServer("127.0.0.1:0", http.NotFoundHandler(), DefaultLimits())
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		if d <= 0 {
			t.Errorf("%s = %v, want a bound", name, d)
		}
	}
	if srv.ReadHeaderTimeout > srv.ReadTimeout {
		t.Errorf("ReadHeaderTimeout %v exceeds ReadTimeout %v", srv.ReadHeaderTimeout, srv.ReadTimeout)
	}
	// A check reads the cache with its own timeout; the answer must still fit.
	if srv.WriteTimeout <= 2*time.Second {
		t.Errorf("WriteTimeout %v leaves no room for a check (2s)", srv.WriteTimeout)
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 64<<10 {
		t.Errorf("MaxHeaderBytes = %d, want a cap of at most 64 KiB", srv.MaxHeaderBytes)
	}
	if l := DefaultLimits(); l.MaxInFlight <= 0 {
		t.Errorf("MaxInFlight = %d, want a cap", l.MaxInFlight)
	}
}

// serve runs NewServer(h, l) on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ln.Addr().String(), h, l)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// closedByServer reads from conn until the server closes it, and fails if
// it has not within a minute (far beyond the limits under test).
func closedByServer(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// TestServerDropsSlowAndIdleClients: a client that never finishes its
// headers, and one that keeps an idle connection, are disconnected.
func TestServerDropsSlowAndIdleClients(t *testing.T) {
	l := DefaultLimits()
	l.ReadHeaderTimeout, l.ReadTimeout, l.IdleTimeout = 200*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	addr := serve(t, Handler(&Checker{Reader: nil}, nil, nil), l)

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = slow.Close() }()
	if _, err := io.WriteString(slow, "GET /livez HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, slow, "headers never finished")

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = idle.Close() }()
	if _, err := io.WriteString(idle, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/livez = %d", resp.StatusCode)
	}
	closedByServer(t, idle, "idle keep-alive connection")
}

// TestServerRefusesBodies: every endpoint is a GET without a body; a
// request that brings one is refused before it is read, and the connection
// closed, so the server does not drain it either.
func TestServerRefusesBodies(t *testing.T) {
	addr := serve(t, Handler(&Checker{Reader: nil}, nil, nil), DefaultLimits())
	for name, req := range map[string]string{
		"declared length": "GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" + strings.Repeat("x", 1024),
		"chunked":         "GET /livez HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + strings.Repeat("x", 1024) + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
				t.Fatalf("status %d, close %v; want 413 and the connection closed", resp.StatusCode, resp.Close)
			}
		})
	}
}

// TestServerCapsRequestsInFlight: beyond MaxInFlight requests at once, the
// next is answered 503 at once instead of holding another goroutine.
func TestServerCapsRequestsInFlight(t *testing.T) {
	l := DefaultLimits()
	l.MaxInFlight = 2
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(l.MaxInFlight)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered.Done()
		<-release
		w.WriteHeader(http.StatusOK)
	})
	addr := serve(t, h, l)
	codes := make(chan int, l.MaxInFlight)
	get := func() (int, error) {
		resp, err := http.Get("http://" + addr + "/ok")
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	for range l.MaxInFlight {
		go func() {
			code, err := get()
			if err != nil {
				t.Error(err)
			}
			codes <- code
		}()
	}
	entered.Wait()
	code, err := get()
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable {
		t.Errorf("request beyond the cap = %d, want 503", code)
	}
	for range l.MaxInFlight {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("request within the cap = %d, want 200", c)
		}
	}
}
