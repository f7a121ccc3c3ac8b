package certdir

import (
	"context"
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

// issue writes a new CA's server files into dir and returns a client
// configuration with that CA's client certificate.
func issue(t *testing.T, dir string) *tls.Config {
	t.Helper()
	server, client, err := webhookcert.Issue([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, "caller", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range server {
		// Replaced by a rename, as a Secret volume or the Rotator does.
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	pair, err := tls.X509KeyPair(client["tls.crt"], client["tls.key"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(client["ca.crt"])
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

func serve(t *testing.T, dir string, auth ClientAuth) string {
	t.Helper()
	cfg, err := ServerConfig(t.Context(), dir, auth)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A plain http.Server: httptest's would put its own certificate first.
	srv := &http.Server{TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + ln.Addr().String()
}

func get(url string, cfg *tls.Config) error {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &net.AddrError{Err: resp.Status}
	}
	return nil
}

// TestRequireClientCert: a caller is served only with a client certificate
// of the directory's CA, and a new CA written into the directory is
// trusted without a restart while the replaced one no longer is.
func TestRequireClientCert(t *testing.T) {
	dir := t.TempDir()
	first := issue(t, dir)
	url := serve(t, dir, RequireClientCert)
	if err := get(url, first); err != nil {
		t.Fatalf("the CA's client: %v", err)
	}
	noCert := first.Clone()
	noCert.Certificates = nil
	if err := get(url, noCert); err == nil {
		t.Fatal("served a caller without a client certificate")
	}
	second := issue(t, dir)
	// The watcher swaps the serving certificate on its own schedule; the
	// test is about which clients the server accepts, so its clients do
	// not verify the server from here on.
	for _, cfg := range []*tls.Config{first, second} {
		cfg.InsecureSkipVerify = true //nolint:gosec // see above
	}
	if err := get(url, second); err != nil {
		t.Fatalf("the new CA's client: %v", err)
	}
	if err := get(url, first); err == nil {
		t.Fatal("served a client of the replaced CA")
	}
}

// TestNoClientCert serves callers without a certificate.
func TestNoClientCert(t *testing.T) {
	dir := t.TempDir()
	cfg := issue(t, dir)
	cfg.Certificates = nil
	if err := get(serve(t, dir, NoClientCert), cfg); err != nil {
		t.Fatal(err)
	}
}

// TestMissingFiles: a directory without the files is an error, not a
// server without certificates.
func TestMissingFiles(t *testing.T) {
	if _, err := ServerConfig(context.Background(), t.TempDir(), NoClientCert); err == nil {
		t.Error("no tls.crt: accepted")
	}
	dir := t.TempDir()
	issue(t, dir)
	if err := os.Remove(filepath.Join(dir, CAFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ServerConfig(context.Background(), dir, RequireClientCert); err == nil {
		t.Error("no ca.crt with client certificates required: accepted")
	}
}
