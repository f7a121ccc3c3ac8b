package webhookcert

import (
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const testClientCN = "scheduler"

// reconcileClient runs decideClient and executeClient at now, as one check
// would.
func reconcileClient(t *testing.T, client, caData map[string][]byte, pol policy, now time.Time) (map[string][]byte, clientPlan) {
	t.Helper()
	p := decideClient(client, caData, testClientCN, pol, now)
	if !p.changed() {
		return client, p
	}
	out, err := executeClient(client, caData, p, testClientCN, pol, now)
	if err != nil {
		t.Fatalf("executeClient: %v", err)
	}
	return out, p
}

func TestDecideClient(t *testing.T) {
	pol := testPolicy()
	caData, _ := reconcile(t, nil, pol, t0)
	client, p := reconcileClient(t, nil, caData, pol, t0)
	if !p.reissue || !p.bundle {
		t.Fatalf("a missing client Secret: %+v, want a new certificate and the bundle", p)
	}
	if _, ok := client[caKeyKey]; ok {
		t.Fatal("the client Secret holds the CA key")
	}
	leaf := leafOf(t, client)
	if err := verifyLeaf("client", leaf, parseCerts(t, caData[caCertKey]), t0, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatalf("the new client certificate does not verify for client authentication: %v", err)
	}
	if verifyChain(leaf, parseCerts(t, caData[caCertKey]), t0) == nil {
		t.Error("the client certificate is good for serving too")
	}
	if leaf.Subject.CommonName != testClientCN {
		t.Errorf("common name %q", leaf.Subject.CommonName)
	}
	otherCA, _ := reconcile(t, nil, pol, t0)
	otherClient, _ := reconcileClient(t, nil, otherCA, pol, t0)
	for _, tc := range []struct {
		name       string
		client     map[string][]byte
		caData     map[string][]byte
		now        time.Time
		wantReason string // "" for no change
		reissue    bool
		bundle     bool
		deferred   bool
	}{
		{name: "up to date", client: client, caData: caData, now: t0},
		{name: "another CA's certificate", client: with(otherClient, caCertKey, caData[caCertKey]), caData: caData, now: t0, wantReason: "does not verify", reissue: true},
		{name: "the bundle is stale", client: with(client, caCertKey, otherCA[caCertKey]), caData: caData, now: t0, bundle: true},
		{name: "a serving certificate instead", client: with(with(client, tlsCertKey, caData[tlsCertKey]), tlsKeyKey, caData[tlsKeyKey]), caData: caData, now: t0, wantReason: "does not verify", reissue: true},
		{name: "within the renewal window", client: client, caData: caData, now: leaf.NotAfter.Add(-24 * time.Hour), wantReason: "renewal window", reissue: true},
		{name: "expired", client: client, caData: caData, now: leaf.NotAfter.Add(time.Hour), wantReason: "does not verify", reissue: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := decideClient(tc.client, tc.caData, testClientCN, pol, tc.now)
			if p.reissue != tc.reissue || p.bundle != tc.bundle || !p.deferredUntil.IsZero() != tc.deferred {
				t.Errorf("plan %+v, want reissue %v, bundle %v, deferred %v", p, tc.reissue, tc.bundle, tc.deferred)
			}
			if !strings.Contains(p.reason, tc.wantReason) {
				t.Errorf("reason %q, want one containing %q", p.reason, tc.wantReason)
			}
		})
	}
}

// TestClientRenewalTimeline: over 25 years of checks every three days,
// every client certificate the Secret holds verifies against the bundle
// the servers had a check earlier, and one is issued about every 335 days.
func TestClientRenewalTimeline(t *testing.T) {
	pol := testPolicy()
	now := t0
	caData, _ := reconcile(t, nil, pol, now)
	client, _ := reconcileClient(t, nil, caData, pol, now)
	step := 3 * 24 * time.Hour
	leaves := map[string]bool{}
	for range 25 * 365 / 3 {
		prevBundle := parseCerts(t, caData[caCertKey])
		now = now.Add(step)
		caData, _ = reconcile(t, caData, pol, now)
		client, _ = reconcileClient(t, client, caData, pol, now)
		leaf := leafOf(t, client)
		leaves[leaf.SerialNumber.String()] = true
		if err := verifyLeaf("client", leaf, prevBundle, now, x509.ExtKeyUsageClientAuth); err != nil {
			t.Fatalf("%s: the servers' previous bundle does not trust the client certificate: %v", now, err)
		}
	}
	if len(leaves) < 25 || len(leaves) > 30 {
		t.Errorf("saw %d client certificates in 25 years, want 25-30", len(leaves))
	}
}

func TestIssue(t *testing.T) {
	server, client, err := Issue([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, testClientCN, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := server[caKeyKey]; ok {
		t.Error("the server's files hold the CA key")
	}
	if _, ok := client[caKeyKey]; ok {
		t.Error("the client's files hold the CA key")
	}
	cas := parseCerts(t, server[caCertKey])
	if err := verifyChain(leafOf(t, server), cas, t0); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if missing := missingNames(leafOf(t, server), []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}); len(missing) > 0 {
		t.Errorf("serving certificate misses %v", missing)
	}
	if err := verifyLeaf("client", leafOf(t, client), cas, t0, x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, _, err := Issue(nil, nil, testClientCN, t0); err == nil {
		t.Error("no server name: accepted")
	}
	if _, _, err := Issue([]string{"localhost"}, nil, "", t0); err == nil {
		t.Error("no client name: accepted")
	}
}

// TestClientSecret: a Rotator with a client Secret creates it next to its
// own, signed by its CA, without the CA key, and puts a deleted one back.
func TestClientSecret(t *testing.T) {
	f := newFixture(t)
	opts := f.options(t.TempDir())
	opts.ClientSecretName, opts.ClientCommonName = "scheduler-client", testClientCN
	r := f.rotator(nil, opts)
	f.ensure(r)
	ca := f.secret("webhook-cert")
	first := f.secret("scheduler-client")
	if first.Type != corev1.SecretTypeTLS || first.Labels[ManagedByLabel] != managedByValue {
		t.Errorf("client Secret type %q, labels %v", first.Type, first.Labels)
	}
	if _, ok := first.Data[caKeyKey]; ok {
		t.Fatal("the client Secret holds the CA key")
	}
	if string(first.Data[caCertKey]) != string(ca.Data[caCertKey]) {
		t.Error("the client Secret's ca.crt is not the CA bundle")
	}
	if err := verifyLeaf("client", leafOf(t, first.Data), parseCerts(t, ca.Data[caCertKey]), time.Now(), x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	f.ensure(r)
	if again := f.secret("scheduler-client"); again.ResourceVersion != first.ResourceVersion {
		t.Error("the client Secret was rewritten although nothing changed")
	}
	if err := f.c.Delete(f.ctx, first); err != nil {
		t.Fatal(err)
	}
	f.ensure(r)
	if back := f.secret("scheduler-client"); back.UID == first.UID {
		t.Error("the deleted client Secret was not made again")
	}
	bad := opts
	bad.ClientCommonName = ""
	if _, err := New(f.c, bad); err == nil {
		t.Error("a client Secret without a common name: accepted")
	}
	bad = opts
	bad.ClientSecretName = opts.SecretName
	if _, err := New(f.c, bad); err == nil {
		t.Error("the client Secret named as the CA's: accepted")
	}
}

// TestClientRenewalWaitsForANewCA: a client certificate due for renewal
// right after a CA rotation is kept until the new CA had time to reach
// every server, as the serving certificate is.
func TestClientRenewalWaitsForANewCA(t *testing.T) {
	pol := testPolicy()
	old, _ := reconcile(t, nil, pol, t0)
	client, _ := reconcileClient(t, nil, old, pol, t0)
	due := leafOf(t, client).NotAfter.Add(-24 * time.Hour)
	// A new CA, made just now, signs from here on.
	rotated, p := reconcile(t, nil, pol, due)
	if !p.newCA {
		t.Fatal("no new CA")
	}
	rotated[caCertKey] = append(rotated[caCertKey], old[caCertKey]...)
	client = with(client, caCertKey, rotated[caCertKey])
	p2 := decideClient(client, rotated, testClientCN, pol, due)
	if p2.reissue || p2.deferredUntil.IsZero() {
		t.Fatalf("renewal right after a CA rotation: %+v, want it deferred", p2)
	}
	if p3 := decideClient(client, rotated, testClientCN, pol, p2.deferredUntil); !p3.reissue {
		t.Errorf("at the deferral's end: %+v, want a new certificate", p3)
	}
}
