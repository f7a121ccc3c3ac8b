package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"k8s.io/client-go/rest"
)

// Cluster networking. Pod IPs come from kwok's --cidr and must not overlap
// the service range.
const (
	serviceCIDR = "10.96.0.0/16"
	podCIDR     = "10.0.0.1/24"
	nodeIP      = "10.0.0.1"
)

// The API server's client identity towards aggregated API servers.
const (
	frontProxyClientName = "front-proxy-client"
	frontProxyClientCN   = "front-proxy-client"
)

// kubernetesServiceIP is the first address of serviceCIDR, which the API
// server gives the `kubernetes` Service; its serving certificate names it.
var kubernetesServiceIP = net.IPv4(10, 96, 0, 1)

// apiServerComponent runs kube-apiserver against etcd with client-certificate
// authentication (the cluster CA), RBAC and the default admission plugins,
// including ServiceAccount, so pods behave as in a real cluster.
func (c *Cluster) apiServerComponent() component {
	var probe *http.Client
	return component{
		name:  APIServer,
		ports: 1,
		args: func(ports []int) []string {
			c.apiServerURL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
			c.apiServerPort = ports[0]
			defaults := []string{
				"--etcd-servers=" + c.etcdURL,
				"--bind-address=127.0.0.1",
				// Set explicitly: without it the API server derives the address
				// from the default route, which sandboxes may lack. A loopback
				// address cannot be published as the `kubernetes` Service's
				// endpoint, so that reconciler is off; nothing in this cluster
				// reaches the API server through the Service anyway.
				"--advertise-address=127.0.0.1",
				"--endpoint-reconciler-type=none",
				fmt.Sprintf("--secure-port=%d", ports[0]),
				"--cert-dir=" + filepath.Join(c.dir, "apiserver"),
				"--tls-cert-file=" + c.pki.path(apiServerCertName+".crt"),
				"--tls-private-key-file=" + c.pki.path(apiServerCertName+".key"),
				"--client-ca-file=" + c.pki.path(caCertFile),
				"--authorization-mode=RBAC",
				// Front-proxy (aggregation) settings, as kubeadm sets them. They
				// let aggregated API servers work and give the controller
				// manager and scheduler the request-header CA they look up
				// (without it they log an error every few hundred ms).
				"--requestheader-client-ca-file=" + c.pki.path(caCertFile),
				"--requestheader-allowed-names=" + frontProxyClientCN,
				"--requestheader-username-headers=X-Remote-User",
				"--requestheader-group-headers=X-Remote-Group",
				"--requestheader-extra-headers-prefix=X-Remote-Extra-",
				"--proxy-client-cert-file=" + c.pki.path(frontProxyClientName+".crt"),
				"--proxy-client-key-file=" + c.pki.path(frontProxyClientName+".key"),
				"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
				"--service-account-key-file=" + c.pki.path(saPubFile),
				"--service-account-signing-key-file=" + c.pki.path(saKeyFile),
				"--service-cluster-ip-range=" + serviceCIDR,
				"--allow-privileged=true",
				"--profiling=false",
			}
			if c.real != nil {
				defaults = mergeFlags(defaults, c.realAPIServerFlags())
			}
			return mergeFlags(defaults, c.opts.APIServerFlags)
		},
		ready: func(ctx context.Context) error {
			if probe == nil {
				client, err := rest.HTTPClientFor(c.admin.restConfig(c.apiServerURL))
				if err != nil {
					return fmt.Errorf("building API server probe client: %w", err)
				}
				probe = client
			}
			// The admin's credentials: /readyz is public by default, but an
			// authenticated probe also proves the client certificates work.
			return httpOK(probe, c.apiServerURL+"/readyz")(ctx)
		},
	}
}
