package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
)

// schedulerComponent runs kube-scheduler with its default profile, so
// scheduling, taints, affinity and resource fit behave as in a real cluster.
func (c *Cluster) schedulerComponent() component {
	var port int
	return component{
		name:  Scheduler,
		ports: 1,
		args: func(ports []int) []string {
			port = ports[0]
			kubeconfig := c.componentKubeconfig(Scheduler)
			defaults := []string{
				"--kubeconfig=" + kubeconfig,
				"--authentication-kubeconfig=" + kubeconfig,
				"--authorization-kubeconfig=" + kubeconfig,
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", port),
				"--cert-dir=" + filepath.Join(c.dir, Scheduler),
				"--leader-elect=false",
				"--profiling=false",
			}
			return mergeFlags(defaults, c.opts.SchedulerFlags)
		},
		ready: func(ctx context.Context) error {
			return httpOK(insecureHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))(ctx)
		},
	}
}
