package webhookcert

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"net"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// A client certificate (Options.ClientSecretName) is what the callers of a
// server that requires one present, e.g. kube-scheduler calling the float-IP
// extender: signed by the same CA as the serving certificate, for client
// authentication only. Its Secret holds tls.crt, tls.key and ca.crt (the CA
// bundle, to verify the server with), never ca.key, so whoever may read it
// can call the server but not sign anything.

// clientPlan is what decideClient found must change in the client Secret.
type clientPlan struct {
	reissue bool
	// bundle: ca.crt differs from the CA Secret's bundle.
	bundle bool
	reason string
	// deferredUntil is set when the certificate is due for renewal but is
	// kept until a new CA has propagated to every server replica.
	deferredUntil time.Time
}

func (p clientPlan) changed() bool { return p.reissue || p.bundle }

// decideClient inspects the client Secret's data against the CA Secret's
// (as ensureSecret left it) at now. Pure, like decide; the rules are
// decide's for the serving certificate, with client authentication and the
// common name cn in place of the server names:
//   - reissued at once when missing, not matching its key, not verifying
//     against the bundle at now, or not named cn;
//   - renewed within certRenewBefore of expiry, unless the signing CA is
//     newer than caPropagationDelay and did not sign it: the servers may
//     not trust that CA yet, so the renewal waits.
func decideClient(client, caData map[string][]byte, cn string, pol policy, now time.Time) clientPlan {
	var p clientPlan
	p.bundle = !bytes.Equal(client[caCertKey], caData[caCertKey])
	cas, _, err := parseCABundle(caData[caCertKey])
	var signer *keyPair
	if err == nil {
		signer, err = findSigner(cas, caData[caKeyKey])
	}
	if err != nil {
		// ensureSecret never leaves the CA Secret so; say so rather than
		// sign with nothing.
		p.reason = "no usable CA: " + err.Error()
		return p
	}
	var trusted []*x509.Certificate
	for _, c := range cas {
		if now.Before(c.NotAfter) {
			trusted = append(trusted, c)
		}
	}
	leaf, err := parseServing(client[tlsCertKey], client[tlsKeyKey])
	if err == nil {
		err = verifyLeaf("client", leaf.cert, trusted, now, x509.ExtKeyUsageClientAuth)
	}
	if err == nil && leaf.cert.Subject.CommonName != cn {
		err = fmt.Errorf("client certificate is for %q, not %q", leaf.cert.Subject.CommonName, cn)
	}
	if err != nil {
		p.reissue, p.reason = true, err.Error()
		return p
	}
	if leaf.cert.NotAfter.Sub(now) > pol.certRenewBefore {
		return p
	}
	reason := fmt.Sprintf("client certificate expires at %s, within its renewal window of %s", leaf.cert.NotAfter.Format(time.RFC3339), pol.certRenewBefore)
	signedBySigner := leaf.cert.CheckSignatureFrom(signer.cert) == nil
	if ready := signer.cert.NotBefore.Add(clockSkewAllowance + caPropagationDelay); !signedBySigner && now.Before(ready) && ready.Before(leaf.cert.NotAfter) {
		p.deferredUntil = ready
		p.reason = reason + fmt.Sprintf("; deferred until %s so the new CA can propagate first", ready.Format(time.RFC3339))
		return p
	}
	p.reissue, p.reason = true, reason
	return p
}

// executeClient applies p to the client Secret's data; keys it does not
// manage are kept.
func executeClient(client, caData map[string][]byte, p clientPlan, cn string, pol policy, now time.Time) (map[string][]byte, error) {
	out := maps.Clone(client)
	if out == nil {
		out = map[string][]byte{}
	}
	out[caCertKey] = caData[caCertKey]
	if !p.reissue {
		return out, nil
	}
	cas, _, err := parseCABundle(caData[caCertKey])
	if err != nil {
		return nil, err
	}
	signer, err := findSigner(cas, caData[caKeyKey])
	if err != nil {
		return nil, err
	}
	leaf, err := newLeaf(signer, pol.certValidity, now, x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	certPEM, err := cert.EncodeCertificates(leaf.cert)
	if err != nil {
		return nil, fmt.Errorf("encoding client certificate: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(leaf.key)
	if err != nil {
		return nil, fmt.Errorf("encoding client key: %w", err)
	}
	out[tlsCertKey], out[tlsKeyKey] = certPEM, keyPEM
	return out, nil
}

// Issue returns, without an API server, what a Rotator keeps in its two
// Secrets for a server reached by dnsNames and ips whose callers present a
// client certificate named clientCommonName: the server's files (tls.crt,
// tls.key, ca.crt) and the client's (tls.crt, tls.key, ca.crt), from a new
// CA with the default validities. It is for a server whose files are given
// to it rather than made by a Rotator, and whose clients start first: the
// local demo's kube-scheduler needs its files before the manager runs.
func Issue(dnsNames []string, ips []net.IP, clientCommonName string, now time.Time) (server, client map[string][]byte, err error) {
	if clientCommonName == "" || (len(dnsNames) == 0 && len(ips) == 0) {
		return nil, nil, errors.New("webhookcert: Issue needs a server name or IP and a client common name")
	}
	pol := policy{
		dnsNames: dnsNames, ips: ips,
		caValidity: DefaultCAValidity, caRenewBefore: DefaultCARenewBefore,
		certValidity: DefaultCertValidity, certRenewBefore: DefaultCertRenewBefore,
	}
	caData, err := execute(nil, decide(nil, pol, now), pol, now)
	if err != nil {
		return nil, nil, err
	}
	client, err = executeClient(nil, caData, decideClient(nil, caData, clientCommonName, pol, now), clientCommonName, pol, now)
	if err != nil {
		return nil, nil, err
	}
	server = map[string][]byte{tlsCertKey: caData[tlsCertKey], tlsKeyKey: caData[tlsKeyKey], caCertKey: caData[caCertKey]}
	return server, client, nil
}
