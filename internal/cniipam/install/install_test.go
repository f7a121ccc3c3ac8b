package install

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgeplane/edgeplane/internal/cniipam"
)

// TestRunInstallsBinaryAndKeepsKubeconfig: the binary lands executable in
// the bin directory; the kubeconfig, at the plugin's path under the host
// root, carries the server, CA and token embedded (the plugin loads it), is
// rewritten when the token rotates and left alone when it does not.
func TestRunInstallsBinaryAndKeepsKubeconfig(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	bin, tokens, conf := filepath.Join(dir, "bin"), filepath.Join(dir, "sa"), filepath.Join(host, filepath.Dir(cniipam.KubeconfigPath))
	for _, d := range []string{bin, tokens, conf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(dir, "plugin")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "#!plugin")
	write(filepath.Join(tokens, "token"), "token-1\n")
	write(filepath.Join(tokens, "ca.crt"), "CA")
	o := Options{Binary: src, BinDir: bin, Name: "edgeplane-cni-ipam", HostRoot: host, Server: "https://10.96.0.1:443", TokenDir: tokens}
	if err := o.Complete(func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(host, cniipam.KubeconfigPath); o.KubeconfigFile() != want {
		t.Fatalf("the kubeconfig goes to %s, want %s", o.KubeconfigFile(), want)
	}
	if err := Run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(bin, "edgeplane-cni-ipam"))
	if err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Fatalf("installed plugin: %v %v", st, err)
	}
	token := func() string {
		t.Helper()
		cfg, err := clientcmd.LoadFromFile(o.KubeconfigFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := cniipam.CheckKubeconfig(cfg); err != nil {
			t.Fatalf("the plugin refuses the installer's kubeconfig: %v", err)
		}
		if _, err := cniipam.LoadKubeconfig(o.KubeconfigFile()); err != nil {
			t.Fatalf("the plugin cannot load the installer's kubeconfig: %v", err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		if c := cfg.Clusters[ctx.Cluster]; c.Server != o.Server || !bytes.Equal(c.CertificateAuthorityData, []byte("CA")) {
			t.Fatalf("cluster = %+v", c)
		}
		return cfg.AuthInfos[ctx.AuthInfo].Token
	}
	if got := token(); got != "token-1" {
		t.Fatalf("token = %q", got)
	}
	if changed, err := WriteKubeconfig(o); err != nil || changed {
		t.Fatalf("unchanged token rewrote the kubeconfig: %v %v", changed, err)
	}
	write(filepath.Join(tokens, "token"), "token-2")
	if changed, err := WriteKubeconfig(o); err != nil || !changed || token() != "token-2" {
		t.Fatalf("rotated token: changed %v, err %v, token %q", changed, err, token())
	}
	o.TokenDir = filepath.Join(dir, "missing")
	if _, err := WriteKubeconfig(o); err == nil {
		t.Fatal("a missing token was not an error")
	}
}

func TestComplete(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
	if err := o.Complete(func(k string) string { return env[k] }); err != nil || o.Server != "https://[fd00::1]:443" {
		t.Fatalf("server %q, err %v", o.Server, err)
	}
	o.Server = ""
	if err := o.Complete(func(string) string { return "" }); err == nil {
		t.Fatal("no server outside a pod was accepted")
	}
	if o.HostRoot != "/host" || o.KubeconfigFile() != "/host"+cniipam.KubeconfigPath {
		t.Fatalf("host root %q, kubeconfig %q", o.HostRoot, o.KubeconfigFile())
	}
	o.Server, o.Name = "https://x", "../evil"
	if err := o.Complete(func(string) string { return "" }); err == nil {
		t.Fatal("a path as --name was accepted")
	}
	o.Name, o.HostRoot = "edgeplane-cni-ipam", "host"
	if err := o.Complete(func(string) string { return "" }); err == nil {
		t.Fatal("a relative --host-root was accepted")
	}
	if err := fs.Parse([]string{"--kubeconfig=/tmp/x"}); err == nil {
		t.Fatal("--kubeconfig is a flag: the plugin reads only its fixed path")
	}
}
