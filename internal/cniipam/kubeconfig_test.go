package cniipam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// embedded is a kubeconfig as the installer writes it: one cluster, one
// user, the CA and the token embedded.
func embedded() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: "https://10.96.0.1:443", CertificateAuthorityData: []byte("CA")}
	cfg.AuthInfos["edgeplane-cni-ipam"] = &clientcmdapi.AuthInfo{Token: "token"}
	cfg.Contexts["edgeplane-cni-ipam"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "edgeplane-cni-ipam"}
	cfg.CurrentContext = "edgeplane-cni-ipam"
	return cfg
}

// TestCheckKubeconfig: only embedded credentials pass; every exec plugin,
// auth provider and file reference is refused by name, in any user or
// cluster, not only the current context's.
func TestCheckKubeconfig(t *testing.T) {
	cases := map[string]struct {
		mutate func(*clientcmdapi.Config)
		want   []string // "" : accepted
	}{
		"the installer's": {mutate: func(*clientcmdapi.Config) {}},
		"embedded client certificate": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["edgeplane-cni-ipam"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("c"), ClientKeyData: []byte("k")}
		}},
		"exec credential plugin": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["edgeplane-cni-ipam"].Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}
		}, want: []string{`user "edgeplane-cni-ipam": exec credential plugin "/bin/sh" is refused`}},
		"auth provider": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["edgeplane-cni-ipam"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}, want: []string{`user "edgeplane-cni-ipam": auth-provider "oidc" is refused`}},
		"token file": {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["edgeplane-cni-ipam"].TokenFile = "/var/run/token" },
			want: []string{`tokenFile "/var/run/token" is refused`}},
		"client certificate and key files": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["edgeplane-cni-ipam"] = &clientcmdapi.AuthInfo{ClientCertificate: "/etc/kubernetes/pki/admin.crt", ClientKey: "/etc/kubernetes/pki/admin.key"}
		}, want: []string{`client-certificate "/etc/kubernetes/pki/admin.crt" is refused`, `client-key "/etc/kubernetes/pki/admin.key" is refused`}},
		"certificate authority file": {mutate: func(c *clientcmdapi.Config) {
			c.Clusters["cluster"].CertificateAuthorityData, c.Clusters["cluster"].CertificateAuthority = nil, "/etc/kubernetes/pki/ca.crt"
		}, want: []string{`cluster "cluster": certificate-authority "/etc/kubernetes/pki/ca.crt" is refused`}},
		"exec in a user no context uses": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["spare"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "curl"}}
		}, want: []string{`user "spare": exec credential plugin "curl" is refused`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := embedded()
			tc.mutate(cfg)
			err := CheckKubeconfig(cfg)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestLoadKubeconfig reads the file as clientcmd does, with the checks:
// the installer's file gives its server and token; a refused file, a file
// that is not a kubeconfig and a missing or oversized file are errors
// naming the path.
func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, cfg *clientcmdapi.Config) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rc, err := LoadKubeconfig(write("good", embedded()))
	if err != nil || rc.Host != "https://10.96.0.1:443" || rc.BearerToken != "token" || string(rc.CAData) != "CA" {
		t.Fatalf("LoadKubeconfig = %+v, %v", rc, err)
	}
	withExec := embedded()
	withExec.AuthInfos["edgeplane-cni-ipam"].Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}
	bad := write("exec", withExec)
	if _, err := LoadKubeconfig(bad); err == nil || !strings.Contains(err.Error(), bad+": user") {
		t.Fatalf("a kubeconfig with an exec plugin: %v", err)
	}
	notYAML := filepath.Join(dir, "garbage")
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(notYAML, []byte("{nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(huge, make([]byte, maxKubeconfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		notYAML:                    "parsing " + notYAML,
		huge:                       "larger than",
		filepath.Join(dir, "none"): "no such file",
	} {
		if _, err := LoadKubeconfig(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadKubeconfig(%s) = %v, want an error containing %q", path, err, want)
		}
	}
}
