package tenancy

import (
	"slices"
	"strings"
	"testing"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

func TestNewPolicy(t *testing.T) {
	p, err := NewPolicy([]string{"http://127.0.0.1:8600/", "HTTP://Emulator.Local:80", "https://ec2.example:443/base/", "http://127.0.0.1:8600"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:8600", "http://emulator.local", "https://ec2.example/base"}
	if got := p.Endpoints(); !slices.Equal(got, want) {
		t.Fatalf("endpoints = %v, want %v (normalised, sorted, without duplicates)", got, want)
	}
	for _, bad := range []string{"ftp://host/", "127.0.0.1:8600", "http://", "http://u:p@host/", "http://host/?a=b", "http://host/#x", "not a url"} {
		if _, err := NewPolicy([]string{bad}); err == nil {
			t.Errorf("NewPolicy(%q) accepted a bad endpoint", bad)
		}
	}
}

func TestAllowsEndpoint(t *testing.T) {
	p, err := NewPolicy([]string{"http://127.0.0.1:8600", "https://[::1]:9000/ec2"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"http://127.0.0.1:8600":               true,
		"http://127.0.0.1:8600/":              true,
		"HTTP://127.0.0.1:8600":               true,
		"https://[::1]:9000/ec2/":             true,
		"http://127.0.0.1:8601":               false,
		"https://127.0.0.1:8600":              false, // another scheme is another server
		"http://127.0.0.1:8600.evil.com":      false,
		"http://127.0.0.1:8600/other":         false,
		"http://user@127.0.0.1:8600":          false,
		"http://127.0.0.1:8600/?x=1":          false,
		"https://[::1]:9000/ec2/../admin":     false,
		"http://169.254.169.254/latest":       false,
		"":                                    false,
		"http://127.0.0.1:8600#fragment":      false,
		"https://ec2.us-east-1.amazonaws.com": false,
	}
	for endpoint, want := range cases {
		if got := p.AllowsEndpoint(endpoint); got != want {
			t.Errorf("AllowsEndpoint(%q) = %v, want %v", endpoint, got, want)
		}
	}
	if (Policy{}).AllowsEndpoint("http://127.0.0.1:8600") {
		t.Error("the zero Policy allows an endpoint; it must allow none")
	}
}

func TestCheck(t *testing.T) {
	allowEmulator, err := NewPolicy([]string{"http://127.0.0.1:8600"})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(mutate func(*cloudv1alpha1.ProviderConfigSpec)) *cloudv1alpha1.ProviderConfigSpec {
		s := &cloudv1alpha1.ProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
			Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "creds"}},
		}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	cases := map[string]struct {
		policy Policy
		spec   *cloudv1alpha1.ProviderConfigSpec
		want   []string // substrings of the error; none: allowed
	}{
		"a Secret at the public endpoint": {spec: spec(nil)},
		"a Secret at an allowed endpoint": {policy: allowEmulator,
			spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://127.0.0.1:8600/" })},
		"no credentials at an allowed endpoint": {policy: allowEmulator, spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) {
			s.Endpoint, s.Credentials = "http://127.0.0.1:8600", cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
		})},
		"the manager's identity": {spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) {
			s.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}
		}), want: []string{"InjectedIdentity"}},
		"a cluster identity": {spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) { s.ClusterIdentity = "other-cluster" }),
			want: []string{"clusterIdentity"}},
		"an endpoint with no allow-list": {spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://127.0.0.1:8600" }),
			want: []string{"endpoint http://127.0.0.1:8600 is not one the cluster admin allows", "--tenant-endpoints is empty"}},
		"an endpoint outside the allow-list": {policy: allowEmulator,
			spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://169.254.169.254" }),
			want: []string{"endpoint http://169.254.169.254 is not one", "--tenant-endpoints: http://127.0.0.1:8600"}},
		"no credentials at the public endpoint": {spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) {
			s.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
		}), want: []string{"credentials.source None"}},
		"every rule broken at once": {spec: spec(func(s *cloudv1alpha1.ProviderConfigSpec) {
			s.Endpoint, s.ClusterIdentity = "http://x", "other"
			s.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}
		}), want: []string{"InjectedIdentity", "clusterIdentity", "endpoint http://x"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.policy.Check(tc.spec)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want allowed", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check allowed it; want an error containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
