package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's single throw-away CA. It signs the API server's
// serving certificate and one client certificate per component; the API
// server trusts it for client certificates and the controller manager hands
// it out as the cluster root CA. ECDSA keys keep generation instant on busy
// machines.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// File names inside the pki directory.
const (
	caCertFile        = "ca.crt"
	caKeyFile         = "ca.key"
	saKeyFile         = "sa.key" // service-account token signing key
	saPubFile         = "sa.pub"
	apiServerCertName = "apiserver"
	certValidity      = 365 * 24 * time.Hour
)

// newPKI creates the CA and the service-account signing key pair in dir.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pki dir: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "edgeplane-localcluster-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	if err := setValidity(tmpl); err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	p := &pki{dir: dir, caCert: cert, caKey: key, caPEM: pemEncode("CERTIFICATE", der)}
	if err := p.writeKeyPair(caCertFile, caKeyFile, der, key); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}
	if err := p.writeKey(saKeyFile, saKey); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.path(saPubFile), pemEncode("PUBLIC KEY", pub), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", saPubFile, err)
	}
	return p, nil
}

// path returns the path of a file in the pki directory.
func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// issueServing writes <name>.crt/.key: a serving certificate for loopback,
// the in-cluster names of the kubernetes Service and the further addresses
// the API server is reached at (the real nodes' gateway).
func (p *pki) issueServing(name string, serviceIP net.IP, more ...net.IP) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: append([]net.IP{net.IPv4(127, 0, 0, 1), serviceIP}, more...),
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}
	return p.issue(name, tmpl)
}

// issueNodeServing writes <name>.crt/.key: a kubelet's serving certificate
// for its node's name and address, which the API server verifies.
func (p *pki) issueNodeServing(name, node string, ip net.IP) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: node},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{ip},
		DNSNames:    []string{node},
	}
	return p.issue(name, tmpl)
}

// issueClient writes <name>.crt/.key: a client certificate the API server maps
// to user cn in groups orgs.
func (p *pki) issueClient(name, cn string, orgs ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return p.issue(name, tmpl)
}

func (p *pki) issue(name string, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key for %s: %w", name, err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	if err := setValidity(tmpl); err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing certificate for %s: %w", name, err)
	}
	if err := p.writeKeyPair(name+".crt", name+".key", der, key); err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding key for %s: %w", name, err)
	}
	return pemEncode("CERTIFICATE", der), pemEncode("EC PRIVATE KEY", keyDER), nil
}

func (p *pki) writeKeyPair(certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(p.path(certName), pemEncode("CERTIFICATE", der), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", certName, err)
	}
	return p.writeKey(keyName, key)
}

func (p *pki) writeKey(name string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	if err := os.WriteFile(p.path(name), pemEncode("EC PRIVATE KEY", der), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// setValidity gives tmpl a random serial number and a validity window that
// starts an hour ago, so small clock differences never matter.
func setValidity(tmpl *x509.Certificate) error {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("generating serial number: %w", err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(certValidity)
	return nil
}

func pemEncode(blockType string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
}
