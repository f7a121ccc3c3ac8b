// Package floatippooltest gives tests what the float-IP servers need from
// their callers: a certificate directory for the servers (provided
// certificates) and, signed by the same CA, kube-scheduler's client
// certificate, as the manager's self-managed Secrets would hold them.
package floatippooltest

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

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// SelfManagedTLS waits until a manager with self-managed certificates has
// written kube-scheduler's client Secret namespace/name and returns a
// client configuration with it, verifying the servers by serverName (the
// Service name the serving certificate covers; tests reach the manager on
// loopback).
func SelfManagedTLS(t testing.TB, ctx context.Context, c client.Reader, namespace, name, serverName string) *tls.Config {
	t.Helper()
	var secret corev1.Secret
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &secret) == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for the scheduler's client Secret %s/%s: %v", namespace, name, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatal("the scheduler's client Secret's ca.crt holds no certificate")
	}
	pair, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// SelfManagedClient is a client like kube-scheduler's with the
// configuration of SelfManagedTLS.
func SelfManagedClient(t testing.TB, ctx context.Context, c client.Reader, namespace, name, serverName string) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: SelfManagedTLS(t, ctx, c, namespace, name, serverName), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// APIClient is a client of the galaxy API: it trusts the servers and sends
// token as its bearer token.
func (c Certs) APIClient(t testing.TB, token string) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: c.TLS(t, false)}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: Bearer(token, tr)}
}

// Bearer is next with token sent as each request's bearer token.
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	return bearer{token: token, next: next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// GalaxyCaller creates the ServiceAccount namespace/name, allowed every
// verb the galaxy API asks about on FloatIPs and FloatIPPools
// cluster-wide, and returns a token for it.
func GalaxyCaller(t testing.TB, ctx context.Context, c client.Client, namespace, name string) string {
	t.Helper()
	role := "galaxy-caller-" + namespace + "-" + name
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"networking.edgeplane.io"}, Resources: []string{"floatips", "floatippools"},
			Verbs: []string{"get", "list", "create", "update", "delete"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}}},
	} {
		if err := c.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	tr := &authnv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, tr); err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}
