package localcluster

import (
	"context"
	"fmt"
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
			defaults := append(c.componentServingFlags(ControllerManager, port),
				"--controllers=*,-nodeipam",
				// kwok renews node Leases, but on a busy 2-core machine a renewal
				// can be late; a node marked NotReady marks every pod on it
				// unready, which no test here is about. Fake nodes are not lost.
				"--node-monitor-grace-period=10m",
				"--use-service-account-credentials=true",
				"--service-account-private-key-file="+c.pki.path(saKeyFile),
				"--root-ca-file="+c.pki.path(caCertFile),
				"--cluster-signing-cert-file="+c.pki.path(caCertFile),
				"--cluster-signing-key-file="+c.pki.path(caKeyFile),
			)
			return mergeFlags(defaults, c.opts.ControllerManagerFlags)
		},
		ready: func(ctx context.Context) error {
			return httpOK(insecureHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))(ctx)
		},
	}
}
