package imagebuild

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

func TestCACertificatesAreTheModulesUnconstrainedRoots(t *testing.T) {
	unconstrained, constrained := 0, 0
	for r := range bundle.Roots() {
		if r.Constraint == nil {
			unconstrained++
		} else {
			constrained++
		}
	}
	rest := CACertificates()
	var subjects []string
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("certificate %d: %v", len(subjects), err)
		}
		subjects = append(subjects, cert.Subject.String())
	}
	if len(strings.TrimSpace(string(rest))) != 0 {
		t.Errorf("%d bytes after the last certificate", len(rest))
	}
	if len(subjects) != unconstrained || unconstrained < 100 {
		t.Errorf("%d certificates, want the module's %d unconstrained roots (of %d; %d constrained left out)",
			len(subjects), unconstrained, unconstrained+constrained, constrained)
	}
	// The roots the clouds' API endpoints chain to today.
	for _, want := range []string{"CN=Amazon Root CA 1,O=Amazon,C=US", "CN=DigiCert Global Root G2,OU=www.digicert.com,O=DigiCert Inc,C=US"} {
		if !strings.Contains(strings.Join(subjects, "\n"), want) {
			t.Errorf("no %s among the roots", want)
		}
	}
}

func TestNonrootBaseHasTheUsersCertificatesAndTmp(t *testing.T) {
	l, err := Layer(NonrootBase(), testTime)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]entry{}
	for _, e := range readLayer(t, l) {
		byName[e.name] = e
	}
	if p := byName["etc/passwd"]; !strings.Contains(p.content, "\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n") || p.mode != 0o644 {
		t.Errorf("/etc/passwd %+v, want the nonroot user 65532", p)
	}
	if g := byName["etc/group"]; !strings.Contains(g.content, "\nnonroot:x:65532:\n") {
		t.Errorf("/etc/group %q, want the nonroot group 65532", g.content)
	}
	if c := byName["etc/ssl/certs/ca-certificates.crt"]; c.content != string(CACertificates()) || c.mode != 0o644 {
		t.Errorf("CA certificates: mode %o, %d bytes", c.mode, len(c.content))
	}
	if h := byName["home/nonroot/"]; h.uid != 65532 || h.gid != 65532 || h.mode != 0o700 {
		t.Errorf("/home/nonroot %+v, want nonroot's, 0700", h)
	}
	if tmp := byName["tmp/"]; tmp.mode != 0o1777 || tmp.uid != 0 {
		t.Errorf("/tmp %+v, want root's, 1777", tmp)
	}
	// Exactly these: no shell, no package manager, nothing else.
	var names []string
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"etc/", "etc/group", "etc/nsswitch.conf", "etc/passwd", "etc/ssl/", "etc/ssl/certs/",
		"etc/ssl/certs/ca-certificates.crt", "home/", "home/nonroot/", "root/", "tmp/"}
	if !slices.Equal(names, want) {
		t.Errorf("the base holds %q, want %q", names, want)
	}
}
