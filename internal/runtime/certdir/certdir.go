// Package certdir serves TLS from a directory holding tls.crt, tls.key and
// ca.crt, the layout of a cert-manager Certificate's Secret and of the
// manager's self-managed certificates (internal/webhookcert): the serving
// certificate is reloaded when its files change (controller-runtime's
// certwatcher) and so is the CA bundle client certificates must chain to,
// so a renewal or a CA rotation needs no restart.
package certdir

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// File names in the directory.
const (
	CertFile = corev1.TLSCertKey       // tls.crt: the serving certificate
	KeyFile  = corev1.TLSPrivateKeyKey // tls.key: its key
	CAFile   = "ca.crt"                // the CA bundle clients must chain to
)

// ClientAuth says whether callers must present a client certificate.
type ClientAuth bool

const (
	// RequireClientCert refuses, at the handshake, a caller without a
	// certificate for client authentication that chains to ca.crt.
	RequireClientCert ClientAuth = true
	// NoClientCert asks for none (the caller authenticates otherwise).
	NoClientCert ClientAuth = false
)

// ServerConfig returns a TLS configuration serving dir's certificate,
// watching its files until ctx ends. The files must exist.
func ServerConfig(ctx context.Context, dir string, auth ClientAuth) (*tls.Config, error) {
	w, err := certwatcher.New(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate from %s: %w", dir, err)
	}
	go func() {
		if err := w.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Watching the serving certificate failed; the one loaded keeps serving", "dir", dir)
		}
	}()
	// HTTP/2 first: kube-scheduler multiplexes its requests over one kept-alive
	// connection.
	base := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: w.GetCertificate, NextProtos: []string{"h2", "http/1.1"}}
	if auth == NoClientCert {
		return base, nil
	}
	cas := &caFile{path: filepath.Join(dir, CAFile)}
	if _, err := cas.pool(); err != nil {
		return nil, err
	}
	base.ClientAuth = tls.RequireAndVerifyClientCert
	// Each handshake reads the bundle as it is now (connections are kept
	// alive, so handshakes are rare); the pool is rebuilt only when the
	// file's content changed.
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := cas.pool()
		if err != nil {
			return nil, err
		}
		cfg := base.Clone()
		cfg.GetConfigForClient = nil
		cfg.ClientCAs = pool
		return cfg, nil
	}
	return base, nil
}

// caFile is a CA bundle file and the pool of its last content.
type caFile struct {
	path string
	mu   sync.Mutex
	raw  []byte
	last *x509.CertPool
}

// pool returns the bundle's certificates; a file that cannot be read or
// parsed keeps the last good pool (an error only before there is one).
func (c *caFile) pool() (*x509.CertPool, error) {
	raw, err := os.ReadFile(c.path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.last != nil && bytes.Equal(raw, c.raw) {
		return c.last, nil
	}
	if err == nil {
		p := x509.NewCertPool()
		if p.AppendCertsFromPEM(raw) {
			c.raw, c.last = raw, p
			return p, nil
		}
		err = errors.New("it holds no PEM certificate")
	}
	if c.last != nil {
		return c.last, nil
	}
	return nil, fmt.Errorf("loading the client CA bundle %s: %w", c.path, err)
}
