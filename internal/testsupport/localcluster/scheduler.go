package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
)

// componentServingFlags are the flags kube-controller-manager and kube-scheduler
// share: their identity towards the API server, a secure endpoint on loopback,
// and no leader election (one replica each).
func (c *Cluster) componentServingFlags(name string, port int) []string {
	kubeconfig := c.componentKubeconfig(name)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(c.dir, name),
		"--leader-elect=false",
		"--profiling=false",
	}
}

// schedulerComponent runs kube-scheduler with its default profile, so
// scheduling, taints, affinity and resource fit behave as in a real cluster.
func (c *Cluster) schedulerComponent() component {
	var port int
	return component{
		name:  Scheduler,
		ports: 1,
		args: func(ports []int) []string {
			port = ports[0]
			return mergeFlags(c.componentServingFlags(Scheduler, port), c.opts.SchedulerFlags)
		},
		ready: func(ctx context.Context) error {
			return httpOK(insecureHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))(ctx)
		},
	}
}
