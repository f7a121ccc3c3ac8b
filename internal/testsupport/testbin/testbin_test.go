package testbin

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestBuild(t *testing.T) {
	paths := Build(t, t.TempDir(), "edgeplane-healthcheck")
	if len(paths) != 1 {
		t.Fatalf("paths = %v", paths)
	}
	if fi, err := os.Stat(paths[0]); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: %v", paths[0], err)
	}
}

func TestWaitHTTPOK(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := WaitHTTPOK(context.Background(), srv.URL, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 3 {
		t.Fatalf("returned after %d calls, before the server answered 200", calls.Load())
	}
	if err := WaitHTTPOK(context.Background(), srv.URL, time.Minute, func() bool { return true }); err == nil {
		t.Fatal("no error although the process exited")
	}
}

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("FreeAddr() = %q (%v), want 127.0.0.1:<port>", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	_ = l.Close()
}
