package webhookcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"maps"
	"math/big"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Keys of the Secret, which are also the file names written to CertDir
// (ca.key excepted: the CA key never leaves the Secret). tls.crt and tls.key
// are what controller-runtime's webhook server reads; ca.crt is the bundle
// injected as caBundle, the same layout cert-manager uses.
const (
	caCertKey  = "ca.crt"
	caKeyKey   = "ca.key"
	tlsCertKey = corev1.TLSCertKey
	tlsKeyKey  = corev1.TLSPrivateKeyKey
)

const (
	// clockSkewAllowance backdates NotBefore so that a certificate issued by
	// one replica is already valid for an API server or another replica whose
	// clock is a little behind.
	clockSkewAllowance = time.Hour
	// caPropagationDelay is how long a new CA must have been in the bundle
	// before it replaces a still-valid serving certificate signed by an older
	// CA. Injecting the bundle and the API server noticing it take time; until
	// then the API server only trusts the old CA, so the old serving
	// certificate must stay in use.
	caPropagationDelay = 10 * time.Minute
)

// policy holds what the certificate decisions depend on besides the Secret
// and the time.
type policy struct {
	dnsNames        []string
	ips             []net.IP
	caValidity      time.Duration
	caRenewBefore   time.Duration
	certValidity    time.Duration
	certRenewBefore time.Duration
}

// keyPair is a parsed certificate with its private key.
type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// plan is what decide found must change in the Secret.
type plan struct {
	// signer is the existing CA that keeps signing; nil when newCA.
	signer   *keyPair
	newCA    bool
	caReason string
	// keepCAs are the other CAs that stay in the bundle: still valid, so
	// clients that only know an older bundle, and serving certificates they
	// signed, keep working during a CA rotation.
	keepCAs []*x509.Certificate
	// pruned is set when the bundle held expired, duplicate or non-CA
	// certificates, which are dropped.
	pruned bool

	reissue    bool
	certReason string
	// deferredUntil is set when the serving certificate is due for renewal
	// but keeps being used until a new CA has propagated; decide must be run
	// again at that time.
	deferredUntil time.Time
}

// changed reports whether the Secret has to be rewritten.
func (p plan) changed() bool { return p.newCA || p.reissue || p.pruned }

// reason explains the plan for logs.
func (p plan) reason() string {
	var parts []string
	if p.caReason != "" {
		parts = append(parts, p.caReason)
	}
	if p.certReason != "" {
		parts = append(parts, p.certReason)
	}
	if p.pruned {
		parts = append(parts, "CA bundle holds expired or invalid certificates")
	}
	return strings.Join(parts, "; ")
}

// decide inspects the Secret data at time now. It is pure so the renewal
// rules can be table-tested without an API server.
//
// Rules, in order:
//   - The signing CA is the ca.crt certificate matching ca.key. It is kept
//     unless missing, unparsable, expired, not yet valid, or within
//     caRenewBefore of its expiry; then a new CA is generated and every other
//     still-valid CA stays in the bundle.
//   - The serving certificate is reissued at once when it is missing, does
//     not match its key, does not verify against the bundle at now (this
//     covers expiry) or does not cover all names.
//   - It is renewed when within certRenewBefore of expiry, unless the signing
//     CA is newer than caPropagationDelay and did not sign the current
//     certificate: then the renewal is deferred (see caPropagationDelay).
func decide(data map[string][]byte, pol policy, now time.Time) plan {
	var p plan

	cas, dropped, caErr := parseCABundle(data[caCertKey])
	p.pruned = dropped
	var signer *keyPair
	if caErr == nil {
		signer, caErr = findSigner(cas, data[caKeyKey])
	}
	switch {
	case caErr != nil:
		p.newCA, p.caReason = true, "no usable CA: "+caErr.Error()
	case !now.Before(signer.cert.NotAfter):
		p.newCA, p.caReason = true, fmt.Sprintf("CA expired at %s", signer.cert.NotAfter.Format(time.RFC3339))
	case now.Before(signer.cert.NotBefore):
		p.newCA, p.caReason = true, fmt.Sprintf("CA is not valid before %s", signer.cert.NotBefore.Format(time.RFC3339))
	case signer.cert.NotAfter.Sub(now) <= pol.caRenewBefore:
		p.newCA, p.caReason = true, fmt.Sprintf("CA expires at %s, within its renewal window of %s", signer.cert.NotAfter.Format(time.RFC3339), pol.caRenewBefore)
	default:
		p.signer = signer
	}

	trusted := []*x509.Certificate{}
	if p.signer != nil {
		trusted = append(trusted, p.signer.cert)
	}
	var seen []*x509.Certificate
	for _, c := range cas {
		switch {
		case containsCert(seen, c): // duplicate
			p.pruned = true
		case p.signer != nil && c.Equal(p.signer.cert):
		case !now.Before(c.NotAfter):
			p.pruned = true
		default:
			trusted = append(trusted, c)
			p.keepCAs = append(p.keepCAs, c)
		}
		seen = append(seen, c)
	}

	leaf, err := parseServing(data[tlsCertKey], data[tlsKeyKey])
	if err == nil {
		err = verifyChain(leaf.cert, trusted, now)
	}
	if err == nil {
		if missing := missingNames(leaf.cert, pol.dnsNames, pol.ips); len(missing) > 0 {
			err = fmt.Errorf("serving certificate does not cover %s", strings.Join(missing, ", "))
		}
	}
	if err != nil {
		p.reissue, p.certReason = true, err.Error()
		return p
	}

	if leaf.cert.NotAfter.Sub(now) > pol.certRenewBefore {
		return p
	}
	reason := fmt.Sprintf("serving certificate expires at %s, within its renewal window of %s", leaf.cert.NotAfter.Format(time.RFC3339), pol.certRenewBefore)
	caIssued := now
	if p.signer != nil {
		caIssued = p.signer.cert.NotBefore.Add(clockSkewAllowance)
	}
	signedBySigner := p.signer != nil && leaf.cert.CheckSignatureFrom(p.signer.cert) == nil
	if ready := caIssued.Add(caPropagationDelay); !signedBySigner && now.Before(ready) && ready.Before(leaf.cert.NotAfter) {
		p.deferredUntil = ready
		p.certReason = reason + fmt.Sprintf("; deferred until %s so the new CA can propagate first", ready.Format(time.RFC3339))
		return p
	}
	p.reissue, p.certReason = true, reason
	return p
}

// execute applies a plan to the Secret data and returns the new data; keys
// it does not manage are kept.
func execute(data map[string][]byte, p plan, pol policy, now time.Time) (map[string][]byte, error) {
	out := maps.Clone(data)
	if out == nil {
		out = map[string][]byte{}
	}

	signer := p.signer
	if p.newCA {
		var err error
		if signer, err = newCA(now, pol.caValidity); err != nil {
			return nil, err
		}
		keyPEM, err := keyutil.MarshalPrivateKeyToPEM(signer.key)
		if err != nil {
			return nil, fmt.Errorf("encoding CA key: %w", err)
		}
		out[caKeyKey] = keyPEM
	}
	bundle, err := cert.EncodeCertificates(append([]*x509.Certificate{signer.cert}, p.keepCAs...)...)
	if err != nil {
		return nil, fmt.Errorf("encoding CA bundle: %w", err)
	}
	out[caCertKey] = bundle

	if p.reissue {
		leaf, err := newServingCert(signer, pol, now)
		if err != nil {
			return nil, err
		}
		certPEM, err := cert.EncodeCertificates(leaf.cert)
		if err != nil {
			return nil, fmt.Errorf("encoding serving certificate: %w", err)
		}
		keyPEM, err := keyutil.MarshalPrivateKeyToPEM(leaf.key)
		if err != nil {
			return nil, fmt.Errorf("encoding serving key: %w", err)
		}
		out[tlsCertKey], out[tlsKeyKey] = certPEM, keyPEM
	}
	return out, nil
}

// newCA generates a self-signed ECDSA P-256 CA valid from now for validity.
func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// The timestamp keeps subjects distinct across rotations, so clients
		// never have to tell two CAs with the same name apart.
		Subject:               pkix.Name{CommonName: fmt.Sprintf("edgeplane-webhook-ca@%d", now.Unix())},
		NotBefore:             now.Add(-clockSkewAllowance).UTC(),
		NotAfter:              now.Add(validity).UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// It signs serving certificates only, never intermediates.
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new CA certificate: %w", err)
	}
	return &keyPair{cert: c, key: key}, nil
}

// newServingCert generates an ECDSA P-256 serving certificate for the policy's
// names, signed by ca.
func newServingCert(ca *keyPair, pol policy, now time.Time) (*keyPair, error) {
	cn := "edgeplane-webhook"
	if len(pol.dnsNames) > 0 {
		cn = pol.dnsNames[0]
	}
	return newLeaf(ca, pol.certValidity, now, x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    pol.dnsNames,
		IPAddresses: pol.ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// newLeaf generates an ECDSA P-256 certificate from tmpl (subject, names
// and extended key usage), signed by ca. It never outlives ca: a
// certificate that did would stop verifying when ca expires anyway, and
// capping it makes its own renewal window fire in time.
func newLeaf(ca *keyPair, validity time.Duration, now time.Time, tmpl x509.Certificate) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating certificate key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(validity).UTC()
	if ca.cert.NotAfter.Before(notAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-clockSkewAllowance).UTC()
	tmpl.NotAfter = notAfter
	// ECDSA keys sign; KeyEncipherment is for RSA key exchange only.
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("creating certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return &keyPair{cert: c, key: key}, nil
}

func randomSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return serial, nil
}

// parseCABundle parses ca.crt. Certificates that are not CAs are dropped
// (reported by dropped) rather than failing the whole bundle.
func parseCABundle(pemBytes []byte) (cas []*x509.Certificate, dropped bool, err error) {
	if len(pemBytes) == 0 {
		return nil, false, fmt.Errorf("%s is missing", caCertKey)
	}
	certs, err := cert.ParseCertsPEM(pemBytes)
	if err != nil {
		return nil, false, fmt.Errorf("parsing %s: %w", caCertKey, err)
	}
	for _, c := range certs {
		if c.IsCA && c.BasicConstraintsValid {
			cas = append(cas, c)
		} else {
			dropped = true
		}
	}
	if len(cas) == 0 {
		return nil, dropped, fmt.Errorf("%s holds no CA certificate", caCertKey)
	}
	return cas, dropped, nil
}

// findSigner returns the CA in cas whose public key matches ca.key.
func findSigner(cas []*x509.Certificate, keyPEM []byte) (*keyPair, error) {
	if len(keyPEM) == 0 {
		return nil, fmt.Errorf("%s is missing", caKeyKey)
	}
	k, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", caKeyKey, err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not a signing key", caKeyKey, k)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return nil, fmt.Errorf("%s holds an unsupported key type %T", caKeyKey, k)
	}
	for _, c := range cas {
		if pub.Equal(c.PublicKey) {
			return &keyPair{cert: c, key: signer}, nil
		}
	}
	return nil, fmt.Errorf("%s matches no certificate in %s", caKeyKey, caCertKey)
}

// parseServing parses tls.crt and tls.key and checks that they belong
// together.
func parseServing(certPEM, keyPEM []byte) (*keyPair, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, fmt.Errorf("%s or %s is missing", tlsCertKey, tlsKeyKey)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing serving key pair: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not a signing key", tlsKeyKey, pair.PrivateKey)
	}
	return &keyPair{cert: pair.Leaf, key: signer}, nil
}

// verifyChain checks that leaf is a server certificate valid at now and
// signed by one of cas.
func verifyChain(leaf *x509.Certificate, cas []*x509.Certificate, now time.Time) error {
	return verifyLeaf("serving", leaf, cas, now, x509.ExtKeyUsageServerAuth)
}

// verifyLeaf checks that leaf (the what certificate) is valid at now for
// usage and signed by one of cas.
func verifyLeaf(what string, leaf *x509.Certificate, cas []*x509.Certificate, now time.Time, usage x509.ExtKeyUsage) error {
	if len(cas) == 0 {
		return fmt.Errorf("no valid CA to verify the %s certificate against", what)
	}
	if leaf.IsCA {
		return fmt.Errorf("the %s certificate is a CA certificate", what)
	}
	roots := x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:       roots,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{usage},
	})
	if err != nil {
		return fmt.Errorf("%s certificate does not verify against the CA bundle: %w", what, err)
	}
	return nil
}

// missingNames returns the DNS names and IPs leaf is not valid for.
func missingNames(leaf *x509.Certificate, dnsNames []string, ips []net.IP) []string {
	var missing []string
	for _, n := range dnsNames {
		if leaf.VerifyHostname(n) != nil {
			missing = append(missing, n)
		}
	}
	for _, ip := range ips {
		if leaf.VerifyHostname(ip.String()) != nil {
			missing = append(missing, ip.String())
		}
	}
	return missing
}

func containsCert(list []*x509.Certificate, c *x509.Certificate) bool {
	for _, e := range list {
		if e.Equal(c) {
			return true
		}
	}
	return false
}
