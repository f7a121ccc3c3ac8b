package cniipam

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigPath is the node path of the plugin's kubeconfig: the installer
// (`edgeplane-cni-ipam install`, the chart's DaemonSet) writes it, and it is
// the only kubeconfig the plugin reads. A network config cannot name
// another: whoever may write one (a Multus NetworkAttachmentDefinition is a
// tenant's object) would otherwise choose what the plugin, running as root
// on the node, executes and where it sends credentials.
const KubeconfigPath = "/etc/cni/net.d/edgeplane-cni-ipam.kubeconfig"

// maxKubeconfigBytes bounds the read: the installer's file is a few KiB.
const maxKubeconfigBytes = 1 << 20

// LoadKubeconfig reads the plugin's kubeconfig at path and returns the
// client configuration of its current context, refusing a file that would
// make the plugin run a program or read another file (CheckKubeconfig).
func LoadKubeconfig(path string) (*rest.Config, error) {
	f, err := os.Open(path) //nolint:gosec // the plugin's fixed path, never the network config's
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	raw, err := io.ReadAll(io.LimitReader(f, maxKubeconfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(raw) > maxKubeconfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxKubeconfigBytes)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	if err := CheckKubeconfig(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, cfg.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rc, nil
}

// CheckKubeconfig refuses what the installer never writes and what would
// make the plugin, as root on the node, run a program or read a file the
// kubeconfig names: exec credential plugins, auth providers, and every
// reference to an external file (token, client certificate and key,
// certificate authority). Credentials must be embedded. Every user and
// cluster is checked, not only the current context's.
func CheckKubeconfig(cfg *clientcmdapi.Config) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		u := cfg.AuthInfos[name]
		if u == nil {
			continue
		}
		bad := func(field, value string) {
			errs = append(errs, fmt.Errorf("user %q: %s %q is refused: the plugin uses only credentials embedded in its kubeconfig", name, field, value))
		}
		if u.Exec != nil {
			errs = append(errs, fmt.Errorf("user %q: exec credential plugin %q is refused: the plugin runs no program a kubeconfig names", name, u.Exec.Command))
		}
		if u.AuthProvider != nil {
			errs = append(errs, fmt.Errorf("user %q: auth-provider %q is refused: the plugin uses only credentials embedded in its kubeconfig", name, u.AuthProvider.Name))
		}
		if u.TokenFile != "" {
			bad("tokenFile", u.TokenFile)
		}
		if u.ClientCertificate != "" {
			bad("client-certificate", u.ClientCertificate)
		}
		if u.ClientKey != "" {
			bad("client-key", u.ClientKey)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		if c := cfg.Clusters[name]; c != nil && c.CertificateAuthority != "" {
			errs = append(errs, fmt.Errorf("cluster %q: certificate-authority %q is refused: the plugin uses only a certificate-authority-data embedded in its kubeconfig", name, c.CertificateAuthority))
		}
	}
	return errors.Join(errs...)
}
