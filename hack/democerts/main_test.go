package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

// TestRun: the server's certificate is for the loopback address and the
// example configuration's Service name, the scheduler's chains to the same
// CA for client authentication, and a second run keeps both.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	read := func(sub string) (tls.Certificate, *x509.CertPool) {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, sub, "tls.crt"), filepath.Join(dir, sub, "tls.key"))
		if err != nil {
			t.Fatal(err)
		}
		ca, err := os.ReadFile(filepath.Join(dir, sub, "ca.crt"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		return pair, pool
	}
	server, roots := read("server")
	client, _ := read("scheduler")
	for _, name := range []string{"127.0.0.1", "localhost", "edgeplane-floatip.edgeplane-system.svc"} {
		if _, err := server.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("the server's certificate for %s: %v", name, err)
		}
	}
	if _, err := client.Leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the scheduler's certificate: %v", err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "scheduler", "tls.crt"))
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "scheduler", "tls.crt")); string(after) != string(before) {
		t.Error("a second run replaced the certificates")
	}
	if err := run(""); err == nil {
		t.Error("no --dir: accepted")
	}
}
