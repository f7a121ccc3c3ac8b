package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
)

// controllerManagerComponent runs kube-controller-manager with every default
// controller except node IPAM (kwok assigns pod IPs itself). The node
// lifecycle controller matters most here: it removes the
// node.kubernetes.io/not-ready taint once kwok reports a node Ready. The
// service-account key and root CA let it create ServiceAccount tokens and the
// kube-root-ca.crt ConfigMaps, as in a real cluster.
func (c *Cluster) controllerManagerComponent() component {
	var port int
	return component{
		name:  ControllerManager,
		ports: 1,
		args: func(ports []int) []string {
			port = ports[0]
			kubeconfig := c.componentKubeconfig(ControllerManager)
			defaults := []string{
				"--kubeconfig=" + kubeconfig,
				"--authentication-kubeconfig=" + kubeconfig,
				"--authorization-kubeconfig=" + kubeconfig,
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", port),
				"--cert-dir=" + filepath.Join(c.dir, ControllerManager),
				"--leader-elect=false",
				"--controllers=*,-nodeipam",
				"--use-service-account-credentials=true",
				"--service-account-private-key-file=" + c.pki.path(saKeyFile),
				"--root-ca-file=" + c.pki.path(caCertFile),
				"--cluster-signing-cert-file=" + c.pki.path(caCertFile),
				"--cluster-signing-key-file=" + c.pki.path(caKeyFile),
				"--profiling=false",
			}
			return mergeFlags(defaults, c.opts.ControllerManagerFlags)
		},
		ready: func(ctx context.Context) error {
			return httpOK(insecureHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))(ctx)
		},
	}
}
