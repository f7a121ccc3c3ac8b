package floatippool

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
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
