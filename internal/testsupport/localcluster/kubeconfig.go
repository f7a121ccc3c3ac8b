package localcluster

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentials is one identity's access to the API server.
type credentials struct {
	caPEM   []byte
	certPEM []byte
	keyPEM  []byte
}

// restConfig returns a client configuration for these credentials.
func (c credentials) restConfig(server string) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.caPEM,
			CertData: c.certPEM,
			KeyData:  c.keyPEM,
		},
		// The defaults (5 QPS) make a test that creates a few dozen objects
		// crawl; this is a private cluster.
		QPS:   100,
		Burst: 200,
	}
}

// writeKubeconfig writes a self-contained kubeconfig (certificates inline) so
// the file works from any directory and can be copied.
func (c credentials) writeKubeconfig(path, server, user string) error {
	const name = "edgeplane-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: c.certPEM, ClientKeyData: c.keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
