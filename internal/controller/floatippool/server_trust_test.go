package floatippool

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
)

// startExtender serves h as the extender does (TLS from certs' server
// directory, client certificates required) on a loopback port.
func startExtender(t *testing.T, certs floatippooltest.Certs, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	srv := ExtenderServer(ln, certs.ServerDir, h)
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("extender: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestExtenderRefusesCallersWithoutTheSchedulersCertificate: the extender
// answers only a caller presenting a client certificate of its CA; a plain
// request, TLS without a certificate and a certificate of another CA never
// reach the handler.
func TestExtenderRefusesCallersWithoutTheSchedulersCertificate(t *testing.T) {
	certs := floatippooltest.Write(t, "")
	other := floatippooltest.Write(t, "")
	var served atomic.Int32
	addr := startExtender(t, certs, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		(&Extender{}).ServeHTTP(w, r)
	}))
	body := `{"PodName":"p","PodNamespace":"ns","Node":"n1"}`
	post := func(c *http.Client, scheme string) (*http.Response, error) {
		return c.Post(scheme+"://"+addr+"/v1/bind", "application/json", strings.NewReader(body))
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: certs.TLS(t, false)}}
	otherTLS := certs.TLS(t, false)
	otherTLS.Certificates = other.TLS(t, true).Certificates
	otherCA := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: otherTLS}}
	// A server certificate is no client certificate, even of the right CA.
	serverPair, err := tls.LoadX509KeyPair(certs.ServerDir+"/tls.crt", certs.ServerDir+"/tls.key")
	must(t, err)
	asServer := certs.TLS(t, false)
	asServer.Certificates = []tls.Certificate{serverPair}
	serverCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: asServer}}
	for name, do := range map[string]func() (*http.Response, error){
		"plain HTTP":                         func() (*http.Response, error) { return post(plain, "http") },
		"TLS without a client certificate":   func() (*http.Response, error) { return post(noCert, "https") },
		"a client certificate of another CA": func() (*http.Response, error) { return post(otherCA, "https") },
		"the server's own certificate":       func() (*http.Response, error) { return post(serverCert, "https") },
	} {
		resp, err := do()
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Errorf("%s: answered %s", name, resp.Status)
			}
		}
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("the handler served %d unauthenticated requests", n)
	}
	resp, err := post(certs.Client(t), "https")
	must(t, err)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || served.Load() != 1 {
		t.Fatalf("the scheduler's certificate: %s, served %d", resp.Status, served.Load())
	}
}

// TestServersHaveEveryLimit: the extender and the galaxy API are served
// with read, write, idle and header timeouts and capped headers and
// bodies; the extender's body cap is a few MiB.
func TestServersHaveEveryLimit(t *testing.T) {
	for name, l := range map[string]httpserve.Limits{"extender": extenderLimits, "galaxy API": apiLimits} {
		srv, err := (&httpserve.Server{Name: name, Limits: l}).HTTPServer(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
			t.Errorf("%s: %+v", name, srv)
		}
		if l.MaxBodyBytes <= 0 || l.MaxBodyBytes > 4<<20 {
			t.Errorf("%s: body cap %d, want at most 4 MiB", name, l.MaxBodyBytes)
		}
	}
	// A bind may take bindTimeout: its answer must still be written.
	if extenderLimits.WriteTimeout <= bindTimeout {
		t.Errorf("the extender's write timeout %s does not outlast a bind (%s)", extenderLimits.WriteTimeout, bindTimeout)
	}
}

// TestExtenderCutsOffAStalledBody: even the scheduler's own connection
// cannot hold a handler past the extender's read timeout by announcing a
// body it never sends.
func TestExtenderCutsOffAStalledBody(t *testing.T) {
	t.Parallel()
	certs := floatippooltest.Write(t, "")
	done := make(chan error, 1)
	addr := startExtender(t, certs, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		done <- err
	}))
	cfg := certs.TLS(t, true)
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", addr, cfg)
	must(t, err)
	defer func() { _ = conn.Close() }()
	_, err = io.WriteString(conn, "POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	must(t, err)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the handler read a whole body that was never sent")
		}
	case <-time.After(extenderLimits.ReadTimeout + 30*time.Second):
		t.Fatalf("the stalled request still holds the handler %s after the read timeout", 30*time.Second)
	}
}
