// Package install puts edgeplane's CNI IPAM plugin on a node: the chart's
// DaemonSet runs `edgeplane-cni-ipam install`, which copies the binary into
// the node's CNI bin directory and keeps the plugin's kubeconfig (at the
// one path the plugin reads, cniipam.KubeconfigPath) with the pod's
// ServiceAccount token and the cluster CA embedded, rewriting it whenever
// the projected token rotates.
package install

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/edgeplane/edgeplane/internal/cniipam"
)

// Options say where the plugin and its kubeconfig go.
type Options struct {
	// Binary is the plugin binary to install (this executable).
	Binary string
	// BinDir is the node's CNI bin directory, mounted into the pod.
	BinDir string
	// Name is the installed binary's name, the "type" of the ipam section.
	Name string
	// HostRoot is where the node's root file system is mounted in the pod
	// (at least the directory of Kubeconfig).
	HostRoot string
	// Kubeconfig is the node path of the plugin's kubeconfig: the path the
	// plugin reads (cniipam.KubeconfigPath, the default), never a flag.
	Kubeconfig string
	// Server is the API server URL the plugin uses from the node's network.
	Server string
	// TokenDir holds the ServiceAccount's token and ca.crt.
	TokenDir string
	// Interval is how often the token is read again (0: install once).
	Interval time.Duration
}

// BindFlags registers the install command's flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BinDir, "bin-dir", "/host/opt/cni/bin", "The node's CNI bin directory, as mounted in the pod.")
	fs.StringVar(&o.Name, "name", "edgeplane-cni-ipam", "Name of the installed plugin (the ipam section's type).")
	fs.StringVar(&o.HostRoot, "host-root", "/host", "Where the node's root file system is mounted in the pod; the plugin's kubeconfig is written to "+cniipam.KubeconfigPath+" under it.")
	fs.StringVar(&o.Server, "server", "", "API server URL the plugin uses on the node (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT).")
	fs.StringVar(&o.TokenDir, "token-dir", "/var/run/secrets/kubernetes.io/serviceaccount", "Directory of the ServiceAccount token and ca.crt.")
	fs.DurationVar(&o.Interval, "interval", time.Minute, "How often the rotating token is copied into the kubeconfig; 0 installs once and exits.")
}

// Complete fills the server from the kubernetes Service's environment and
// checks the options.
func (o *Options) Complete(getenv func(string) string) error {
	if o.Server == "" {
		host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return errors.New("--server is required outside a pod (KUBERNETES_SERVICE_HOST is not set)")
		}
		o.Server = "https://" + net.JoinHostPort(host, port)
	}
	if o.Interval < 0 {
		return fmt.Errorf("--interval %s must not be negative", o.Interval)
	}
	if o.Name == "" || filepath.Base(o.Name) != o.Name {
		return fmt.Errorf("--name %q must be a file name", o.Name)
	}
	if o.Kubeconfig == "" {
		o.Kubeconfig = cniipam.KubeconfigPath
	}
	if !filepath.IsAbs(o.HostRoot) {
		return fmt.Errorf("--host-root %q must be an absolute path", o.HostRoot)
	}
	return nil
}

// KubeconfigFile is where the kubeconfig is written, as mounted in the pod.
func (o Options) KubeconfigFile() string { return filepath.Join(o.HostRoot, o.Kubeconfig) }

// Run installs the binary and the kubeconfig, then keeps the kubeconfig
// current every Interval until ctx ends.
func Run(ctx context.Context, o Options, log io.Writer) error {
	if err := InstallBinary(o.Binary, filepath.Join(o.BinDir, o.Name)); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(log, "installed %s into %s\n", o.Name, o.BinDir)
	for {
		changed, err := WriteKubeconfig(o)
		if err != nil {
			return err
		}
		if changed {
			_, _ = fmt.Fprintf(log, "wrote %s (server %s)\n", o.KubeconfigFile(), o.Server)
		}
		if o.Interval <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Interval):
		}
	}
}

// InstallBinary copies src to dst through a temporary file and a rename, so
// a runtime never executes a half-written plugin.
func InstallBinary(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening %s: %w", src, err)
	}
	defer func() { _ = in.Close() }()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755) //nolint:gosec // a CNI plugin must be executable
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, tmp, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("installing %s: %w", dst, err)
	}
	return nil
}

// Kubeconfig renders the plugin's kubeconfig for a server, CA and token,
// all embedded: the plugin refuses a kubeconfig that refers to files or
// runs programs (cniipam.CheckKubeconfig).
func Kubeconfig(server string, ca, token []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["edgeplane-cni-ipam"] = &clientcmdapi.AuthInfo{Token: string(bytes.TrimSpace(token))}
	cfg.Contexts["edgeplane-cni-ipam"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "edgeplane-cni-ipam"}
	cfg.CurrentContext = "edgeplane-cni-ipam"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	return out, nil
}

// WriteKubeconfig writes the kubeconfig when its content changed (a new
// token) and reports whether it did.
func WriteKubeconfig(o Options) (bool, error) {
	token, err := os.ReadFile(filepath.Join(o.TokenDir, "token"))
	if err != nil {
		return false, fmt.Errorf("reading the ServiceAccount token: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(o.TokenDir, "ca.crt"))
	if err != nil {
		return false, fmt.Errorf("reading the cluster CA: %w", err)
	}
	want, err := Kubeconfig(o.Server, ca, token)
	if err != nil {
		return false, err
	}
	path := o.KubeconfigFile()
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return false, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, want, 0o600); err != nil {
		return false, fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("installing %s: %w", path, err)
	}
	return true, nil
}
