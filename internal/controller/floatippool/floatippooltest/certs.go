// Package floatippooltest gives tests what the float-IP servers need from
// their callers: a certificate directory for the servers (provided
// certificates) and, signed by the same CA, kube-scheduler's client
// certificate, as the manager's self-managed Secrets would hold them.
package floatippooltest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/webhookcert"
)

// Certs are the servers' certificate directory and the scheduler's.
type Certs struct {
	// ServerDir holds tls.crt, tls.key and ca.crt for the extender and
	// the galaxy API, for localhost and 127.0.0.1.
	ServerDir string
	// ClientDir holds kube-scheduler's tls.crt, tls.key and the ca.crt
	// that verifies the servers.
	ClientDir string
}

// ClientCommonName is the scheduler's certificate's common name.
const ClientCommonName = "edgeplane-floatip-scheduler"

// Write issues a CA, the servers' certificate and the scheduler's client
// certificate into dir (a fresh temporary directory when empty).
func Write(t testing.TB, dir string) Certs {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	server, client, err := webhookcert.Issue([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, ClientCommonName, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := Certs{ServerDir: filepath.Join(dir, "server"), ClientDir: filepath.Join(dir, "scheduler")}
	for d, files := range map[string]map[string][]byte{c.ServerDir: server, c.ClientDir: client} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(d, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}

// ManagerFlags point the manager's float-IP servers at ServerDir.
func (c Certs) ManagerFlags() []string {
	return []string{"--floatippool-cert-dir=" + c.ServerDir, "--floatippool-certs=provided"}
}

// TLS is a client configuration that trusts the servers and, with
// clientCert, presents the scheduler's certificate.
func (c Certs) TLS(t testing.TB, clientCert bool) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(c.ClientDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("the scheduler's ca.crt holds no certificate")
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if clientCert {
		pair, err := tls.LoadX509KeyPair(filepath.Join(c.ClientDir, "tls.crt"), filepath.Join(c.ClientDir, "tls.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// Client is an HTTP client like kube-scheduler's for the extender: the
// scheduler's certificate, connections kept alive and reused (HTTP/2 when
// the server offers it).
func (c Certs) Client(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: c.TLS(t, true), ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 100, IdleConnTimeout: 90 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}
