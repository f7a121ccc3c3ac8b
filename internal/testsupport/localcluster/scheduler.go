package localcluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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
	var env []string
	if proxy := c.ServiceProxyURL(); proxy != nil {
		// Extenders behind Services are reached through the egress proxy,
		// as the API server reaches webhooks; Go never proxies loopback, so
		// the API server and an extender on the machine's loopback are
		// reached directly.
		env = []string{"HTTP_PROXY=" + proxy.String(), "HTTPS_PROXY=" + proxy.String(), "NO_PROXY=localhost,127.0.0.1"}
	}
	return component{
		name:  Scheduler,
		ports: 1,
		env:   env,
		args: func(ports []int) []string {
			port = ports[0]
			return mergeFlags(c.componentServingFlags(Scheduler, port), c.opts.SchedulerFlags)
		},
		ready: func(ctx context.Context) error {
			return httpOK(insecureHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))(ctx)
		},
	}
}

// RestartScheduler stops kube-scheduler and starts it again with flags
// (each "--name=value") merged over the ones it ran with, as an operator
// restarts a control plane's scheduler with a new configuration: a
// --config= file that only exists once something in the cluster has
// written it, such as the chart's extender configuration with the
// certificates the manager issued.
func (c *Cluster) RestartScheduler(ctx context.Context, flags ...string) error {
	if c.opts.DisableScheduler {
		return errors.New("the cluster runs no scheduler")
	}
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return errors.New("the cluster is stopping")
	}
	var old *process
	for i, p := range c.procs {
		if p.name == Scheduler && !p.retired {
			old = p
			p.retired = true
			c.procs = slices.Delete(c.procs, i, i+1)
			break
		}
	}
	c.opts.SchedulerFlags = mergeFlags(c.opts.SchedulerFlags, flags)
	c.mu.Unlock()
	if old != nil {
		if err := old.stop(c.opts.StopTimeout, c.log); err != nil {
			return fmt.Errorf("stopping %s: %w", Scheduler, err)
		}
	}
	return c.startComponent(ctx, c.schedulerComponent())
}
