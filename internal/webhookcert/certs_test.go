package webhookcert

import (
	"bytes"
	"crypto/x509"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/cert"
)

// t0 is an arbitrary fixed "now" for the pure tests.
var t0 = time.Date(2031, time.March, 4, 12, 0, 0, 0, time.UTC)

func testPolicy() policy {
	return Options{
		SecretNamespace: "edgeplane-system",
		SecretName:      "webhook-cert",
		ServiceName:     "edgeplane-webhook",
		ExtraIPs:        []net.IP{net.ParseIP("127.0.0.1")},
		CertDir:         "unused",
	}.withDefaults().policy()
}

// reconcile runs decide and execute at now, as one check would.
func reconcile(t *testing.T, data map[string][]byte, pol policy, now time.Time) (map[string][]byte, plan) {
	t.Helper()
	p := decide(data, pol, now)
	if !p.changed() {
		return data, p
	}
	out, err := execute(data, p, pol, now)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return out, p
}

func with(data map[string][]byte, key string, value []byte) map[string][]byte {
	out := maps.Clone(data)
	out[key] = value
	return out
}

func parseCerts(t *testing.T, pemBytes []byte) []*x509.Certificate {
	t.Helper()
	certs, err := cert.ParseCertsPEM(pemBytes)
	if err != nil {
		t.Fatalf("parsing certificates: %v", err)
	}
	return certs
}

func leafOf(t *testing.T, data map[string][]byte) *x509.Certificate {
	t.Helper()
	return parseCerts(t, data[tlsCertKey])[0]
}

// planSummary is the comparable part of a plan.
type planSummary struct {
	NewCA, Reissue, Pruned, Deferred bool
}

func summarize(p plan) planSummary {
	return planSummary{NewCA: p.newCA, Reissue: p.reissue, Pruned: p.pruned, Deferred: !p.deferredUntil.IsZero()}
}

func TestDecide(t *testing.T) {
	pol := testPolicy()
	day := 24 * time.Hour

	fresh, _ := reconcile(t, nil, pol, t0)
	other, _ := reconcile(t, nil, pol, t0) // an unrelated CA and serving certificate

	// A serving certificate issued late in the CA's life, so that the CA
	// reaches its renewal window while the certificate is still fine.
	t1 := t0.Add(pol.caValidity - pol.caRenewBefore - 100*day)
	lateLeaf, _ := reconcile(t, fresh, pol, t1) // fresh's leaf has expired by t1: reissued by the same CA
	lateLeafNotAfter := leafOf(t, lateLeaf).NotAfter

	// CA rotation while the serving certificate is not due.
	tEarly := t0.Add(pol.caValidity - pol.caRenewBefore + day)
	rotatedEarly, _ := reconcile(t, lateLeaf, pol, tEarly)

	// CA rotation and a due serving renewal at the same time: the new CA is
	// added, the renewal is deferred.
	tr := lateLeafNotAfter.Add(-10 * day)
	rotated, _ := reconcile(t, lateLeaf, pol, tr)
	// Once the new CA has propagated, the serving certificate is renewed.
	renewed, _ := reconcile(t, rotated, pol, tr.Add(caPropagationDelay+time.Minute))
	oldCANotAfter := parseCerts(t, rotated[caCertKey])[1].NotAfter

	tests := []struct {
		name      string
		data      map[string][]byte
		pol       func(policy) policy
		now       time.Time
		want      planSummary
		reasonHas string
	}{
		{
			name:      "empty Secret",
			data:      nil,
			now:       t0,
			want:      planSummary{NewCA: true, Reissue: true},
			reasonHas: "ca.crt is missing",
		},
		{
			name: "fresh Secret is reused",
			data: fresh,
			now:  t0.Add(time.Minute),
			want: planSummary{},
		},
		{
			name: "just before the serving renewal window",
			data: fresh,
			now:  t0.Add(pol.certValidity - pol.certRenewBefore - time.Hour),
			want: planSummary{},
		},
		{
			name:      "inside the serving renewal window",
			data:      fresh,
			now:       t0.Add(pol.certValidity - pol.certRenewBefore + time.Hour),
			want:      planSummary{Reissue: true},
			reasonHas: "within its renewal window",
		},
		{
			name:      "serving certificate expired",
			data:      fresh,
			now:       t0.Add(pol.certValidity + time.Hour),
			want:      planSummary{Reissue: true},
			reasonHas: "expired",
		},
		{
			name:      "extra DNS name not covered",
			data:      fresh,
			pol:       func(p policy) policy { p.dnsNames = append(p.dnsNames, "webhook.example.com"); return p },
			now:       t0,
			want:      planSummary{Reissue: true},
			reasonHas: "does not cover webhook.example.com",
		},
		{
			name:      "extra IP not covered",
			data:      fresh,
			pol:       func(p policy) policy { p.ips = append(p.ips, net.ParseIP("10.0.0.7")); return p },
			now:       t0,
			want:      planSummary{Reissue: true},
			reasonHas: "does not cover 10.0.0.7",
		},
		{
			name:      "fewer names than the certificate has is fine",
			data:      fresh,
			pol:       func(p policy) policy { p.ips = nil; return p },
			now:       t0,
			want:      planSummary{},
			reasonHas: "",
		},
		{
			name:      "serving key does not match the certificate",
			data:      with(fresh, tlsKeyKey, other[tlsKeyKey]),
			now:       t0,
			want:      planSummary{Reissue: true},
			reasonHas: "parsing serving key pair",
		},
		{
			name:      "serving certificate from an unknown CA",
			data:      with(with(fresh, tlsCertKey, other[tlsCertKey]), tlsKeyKey, other[tlsKeyKey]),
			now:       t0,
			want:      planSummary{Reissue: true},
			reasonHas: "does not verify against the CA bundle",
		},
		{
			name:      "garbage ca.crt",
			data:      with(fresh, caCertKey, []byte("not a certificate")),
			now:       t0,
			want:      planSummary{NewCA: true, Reissue: true},
			reasonHas: "no usable CA",
		},
		{
			// The old CA is still valid and stays trusted, so the serving
			// certificate it signed is kept; only new ones use the new CA.
			name:      "ca.key missing",
			data:      with(fresh, caKeyKey, nil),
			now:       t0,
			want:      planSummary{NewCA: true},
			reasonHas: "ca.key is missing",
		},
		{
			name:      "ca.key belongs to another CA",
			data:      with(fresh, caKeyKey, other[caKeyKey]),
			now:       t0,
			want:      planSummary{NewCA: true},
			reasonHas: "matches no certificate",
		},
		{
			name:      "CA expired",
			data:      fresh,
			now:       t0.Add(pol.caValidity + time.Hour),
			want:      planSummary{NewCA: true, Reissue: true, Pruned: true},
			reasonHas: "CA expired",
		},
		{
			name:      "CA not yet valid",
			data:      fresh,
			now:       t0.Add(-2 * clockSkewAllowance),
			want:      planSummary{NewCA: true, Reissue: true},
			reasonHas: "not valid before",
		},
		{
			name:      "CA inside its renewal window, serving certificate fine",
			data:      lateLeaf,
			now:       tEarly,
			want:      planSummary{NewCA: true},
			reasonHas: "CA expires at",
		},
		{
			name:      "CA rotation and serving renewal due together: renewal deferred",
			data:      lateLeaf,
			now:       tr,
			want:      planSummary{NewCA: true, Deferred: true},
			reasonHas: "deferred until",
		},
		{
			name:      "serving renewal due, new CA still propagating",
			data:      rotated,
			now:       tr.Add(caPropagationDelay / 2),
			want:      planSummary{Deferred: true},
			reasonHas: "deferred until",
		},
		{
			name:      "serving renewal due, new CA propagated",
			data:      rotated,
			now:       tr.Add(caPropagationDelay + time.Minute),
			want:      planSummary{Reissue: true},
			reasonHas: "within its renewal window",
		},
		{
			name:      "deferral never outlasts the serving certificate",
			data:      rotated,
			now:       lateLeafNotAfter.Add(time.Minute),
			want:      planSummary{Reissue: true},
			reasonHas: "expired",
		},
		{
			name: "serving certificate signed by the previous CA, still in the bundle, is kept",
			data: rotatedEarly,
			now:  tEarly.Add(30 * day),
			want: planSummary{},
		},
		{
			name:      "expired previous CA is pruned",
			data:      renewed,
			now:       oldCANotAfter.Add(day),
			want:      planSummary{Pruned: true},
			reasonHas: "expired or invalid",
		},
		{
			name:      "non-CA certificate in ca.crt is pruned",
			data:      with(fresh, caCertKey, append(bytes.Clone(fresh[caCertKey]), fresh[tlsCertKey]...)),
			now:       t0,
			want:      planSummary{Pruned: true},
			reasonHas: "expired or invalid",
		},
		{
			name:      "duplicate CA in ca.crt is pruned",
			data:      with(fresh, caCertKey, append(bytes.Clone(fresh[caCertKey]), fresh[caCertKey]...)),
			now:       t0,
			want:      planSummary{Pruned: true},
			reasonHas: "expired or invalid",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := pol
			if tt.pol != nil {
				pol = tt.pol(pol)
			}
			p := decide(tt.data, pol, tt.now)
			if diff := cmp.Diff(tt.want, summarize(p)); diff != "" {
				t.Errorf("plan mismatch (-want +got):\n%s\nreason: %s", diff, p.reason())
			}
			if tt.reasonHas != "" && !strings.Contains(p.reason(), tt.reasonHas) {
				t.Errorf("reason %q does not mention %q", p.reason(), tt.reasonHas)
			}
			if !p.changed() {
				return
			}

			// Executing the plan must produce a Secret that the next check
			// leaves alone, that verifies, and that keeps what was not due.
			out, err := execute(tt.data, p, pol, tt.now)
			if err != nil {
				t.Fatalf("execute: %v", err)
			}
			if again := decide(out, pol, tt.now); again.changed() {
				t.Errorf("a second check still wants changes: %s", again.reason())
			}
			cas := parseCerts(t, out[caCertKey])
			leaf := leafOf(t, out)
			if err := verifyChain(leaf, cas, tt.now); err != nil {
				t.Errorf("new Secret does not verify: %v", err)
			}
			if missing := missingNames(leaf, pol.dnsNames, pol.ips); len(missing) > 0 {
				t.Errorf("new serving certificate misses %v", missing)
			}
			if !p.reissue && !bytes.Equal(out[tlsCertKey], tt.data[tlsCertKey]) {
				t.Error("serving certificate replaced although the plan did not reissue it")
			}
			if !p.newCA && !bytes.Equal(out[caKeyKey], tt.data[caKeyKey]) {
				t.Error("CA key replaced although the plan kept the CA")
			}
			if p.newCA {
				for _, old := range p.keepCAs {
					if !containsCert(cas, old) {
						t.Errorf("still-valid CA %s dropped from the bundle on rotation", old.Subject.CommonName)
					}
				}
			}
		})
	}
}

// TestRotationTimeline checks over 25 simulated years, one check every
// three days, that a client holding the bundle from the previous check always
// trusts the serving certificate of the current one: a CA rotation never
// breaks clients that have not caught up yet.
func TestRotationTimeline(t *testing.T) {
	pol := testPolicy()
	step := 3 * 24 * time.Hour
	now := t0
	data, _ := reconcile(t, nil, pol, now)
	var cas, leaves, changes int
	seenCA := map[string]bool{}
	seenLeaf := map[string]bool{}
	for range 25 * 365 / 3 {
		prevBundle := parseCerts(t, data[caCertKey])
		now = now.Add(step)
		var p plan
		data, p = reconcile(t, data, pol, now)
		if p.changed() {
			changes++
		}
		if p.newCA && p.reissue {
			t.Fatalf("%s: new CA and new serving certificate in the same check: %s", now, p.reason())
		}
		leaf := leafOf(t, data)
		if err := verifyChain(leaf, prevBundle, now); err != nil {
			t.Fatalf("%s: the previous bundle does not trust the current serving certificate: %v", now, err)
		}
		if err := verifyChain(leaf, parseCerts(t, data[caCertKey]), now); err != nil {
			t.Fatalf("%s: the current bundle does not trust the current serving certificate: %v", now, err)
		}
		if ca := parseCerts(t, data[caCertKey])[0]; !seenCA[ca.SerialNumber.String()] {
			seenCA[ca.SerialNumber.String()] = true
			cas++
		}
		if !seenLeaf[leaf.SerialNumber.String()] {
			seenLeaf[leaf.SerialNumber.String()] = true
			leaves++
		}
	}
	// 10-year CAs rotated a year early: one at the start, then every 9 years.
	if cas != 3 {
		t.Errorf("saw %d CAs in 25 years, want 3", cas)
	}
	// Roughly one serving certificate per 335 days.
	if leaves < 25 || leaves > 30 {
		t.Errorf("saw %d serving certificates in 25 years, want 25-30", leaves)
	}
	t.Logf("25 years: %d CAs, %d serving certificates, %d Secret updates", cas, leaves, changes)
}

func TestMissingNames(t *testing.T) {
	pol := testPolicy()
	data, _ := reconcile(t, nil, pol, t0)
	leaf := leafOf(t, data)
	tests := []struct {
		name string
		dns  []string
		ips  []net.IP
		want []string
	}{
		{name: "service names", dns: []string{"edgeplane-webhook.edgeplane-system.svc", "edgeplane-webhook.edgeplane-system.svc.cluster.local"}},
		{name: "IP", ips: []net.IP{net.ParseIP("127.0.0.1")}},
		{name: "nothing asked"},
		{name: "other service", dns: []string{"other.edgeplane-system.svc"}, want: []string{"other.edgeplane-system.svc"}},
		{name: "bare service name", dns: []string{"edgeplane-webhook"}, want: []string{"edgeplane-webhook"}},
		{name: "other IP", ips: []net.IP{net.ParseIP("::1")}, want: []string{"::1"}},
		{name: "IP asked as DNS name", dns: []string{"127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, missingNames(leaf, tt.dns, tt.ips)); diff != "" {
				t.Errorf("missing names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyChain(t *testing.T) {
	pol := testPolicy()
	data, _ := reconcile(t, nil, pol, t0)
	other, _ := reconcile(t, nil, pol, t0)
	leaf := leafOf(t, data)
	ca := parseCerts(t, data[caCertKey])[0]
	otherCA := parseCerts(t, other[caCertKey])[0]
	tests := []struct {
		name    string
		leaf    *x509.Certificate
		cas     []*x509.Certificate
		now     time.Time
		wantErr string
	}{
		{name: "signed by the CA", leaf: leaf, cas: []*x509.Certificate{ca}, now: t0},
		{name: "CA among others", leaf: leaf, cas: []*x509.Certificate{otherCA, ca}, now: t0},
		{name: "backdated for clock skew", leaf: leaf, cas: []*x509.Certificate{ca}, now: t0.Add(-clockSkewAllowance / 2)},
		{name: "other CA", leaf: leaf, cas: []*x509.Certificate{otherCA}, now: t0, wantErr: "unknown authority"},
		{name: "no CA", leaf: leaf, now: t0, wantErr: "no valid CA"},
		{name: "expired", leaf: leaf, cas: []*x509.Certificate{ca}, now: leaf.NotAfter.Add(time.Second), wantErr: "expired"},
		{name: "not yet valid", leaf: leaf, cas: []*x509.Certificate{ca}, now: leaf.NotBefore.Add(-time.Second), wantErr: "expired or is not yet valid"},
		{name: "a CA is not a serving certificate", leaf: ca, cas: []*x509.Certificate{ca}, now: t0, wantErr: "is a CA certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifyChain(tt.leaf, tt.cas, tt.now)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewServingCertProperties(t *testing.T) {
	pol := testPolicy()
	tests := []struct {
		name         string
		caValidity   time.Duration
		wantNotAfter func(ca *x509.Certificate) time.Time
	}{
		{
			name:         "full validity",
			caValidity:   pol.caValidity,
			wantNotAfter: func(*x509.Certificate) time.Time { return t0.Add(pol.certValidity) },
		},
		{
			name:         "capped at the CA's expiry",
			caValidity:   pol.certValidity / 2,
			wantNotAfter: func(ca *x509.Certificate) time.Time { return ca.NotAfter },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, err := newCA(t0, tt.caValidity)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := newServingCert(ca, pol, t0)
			if err != nil {
				t.Fatal(err)
			}
			type props struct {
				CommonName string
				DNSNames   []string
				IPs        []string
				NotBefore  time.Time
				NotAfter   time.Time
				IsCA       bool
				ExtKeyUse  []x509.ExtKeyUsage
			}
			got := props{
				CommonName: leaf.cert.Subject.CommonName,
				DNSNames:   leaf.cert.DNSNames,
				NotBefore:  leaf.cert.NotBefore,
				NotAfter:   leaf.cert.NotAfter,
				IsCA:       leaf.cert.IsCA,
				ExtKeyUse:  leaf.cert.ExtKeyUsage,
			}
			for _, ip := range leaf.cert.IPAddresses {
				got.IPs = append(got.IPs, ip.String())
			}
			want := props{
				CommonName: "edgeplane-webhook.edgeplane-system.svc",
				DNSNames:   []string{"edgeplane-webhook.edgeplane-system.svc", "edgeplane-webhook.edgeplane-system.svc.cluster.local"},
				IPs:        []string{"127.0.0.1"},
				NotBefore:  t0.Add(-clockSkewAllowance),
				NotAfter:   tt.wantNotAfter(ca.cert),
				ExtKeyUse:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("serving certificate (-want +got):\n%s", diff)
			}
		})
	}
}
