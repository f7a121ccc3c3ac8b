package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
)

// track records a started process and reports it through died if it exits
// while the cluster is not stopping.
func (c *Cluster) track(p *process) {
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	go func() {
		<-p.done
		c.mu.Lock()
		stopping := c.stopping || p.retired
		c.mu.Unlock()
		if !stopping {
			select {
			case c.died <- p.exitError():
			default: // Wait already has an error to report
			}
		}
	}()
}

// PIDs maps each running component to its process id.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make(map[string]int, len(c.procs))
	for _, p := range c.procs {
		if !p.exited() {
			pids[p.name] = p.pid()
		}
	}
	return pids
}

// Wait blocks until ctx ends, returning nil, or until a component exits on
// its own, returning an error with the tail of its log. Supervisors use it to
// notice a dead component.
func (c *Cluster) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.died:
		return err
	}
}

// Stop stops every process the cluster started: clients first, then the API
// server, then etcd, each with SIGTERM and, after Options.StopTimeout,
// SIGKILL. It returns once all of them have exited and removes a temporary
// working directory. It is idempotent and safe to call after a failed Start.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopping = true
		procs := append([]*process(nil), c.procs...)
		c.mu.Unlock()

		var errs []error
		// The real nodes first, in their own order; their processes are
		// then gone when the loop below reaches them.
		if err := c.stopRealNodes(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the real nodes: %w", err))
		}
		// Components talking to the API server go first, in parallel, so
		// they do not spend their shutdown retrying a vanished server.
		var servers, clients []*process
		for _, p := range procs {
			if p.name == APIServer || p.name == Etcd {
				servers = append(servers, p)
			} else {
				clients = append(clients, p)
			}
		}
		errs = append(errs, c.stopAll(clients)...)
		for i := len(servers) - 1; i >= 0; i-- { // API server, then etcd
			if err := servers[i].stop(c.opts.StopTimeout, c.log); err != nil {
				errs = append(errs, err)
			}
		}
		if c.removeDir {
			if err := os.RemoveAll(c.dir); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", c.dir, err))
			}
		}
		c.stopErr = errors.Join(errs...)
		c.log.Info("local cluster stopped", "dir", c.dir)
	})
	return c.stopErr
}

// stopAll stops procs in parallel (nil entries are skipped) and returns
// what failed.
func (c *Cluster) stopAll(procs []*process) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range procs {
		if p == nil {
			continue
		}
		wg.Go(func() {
			if err := p.stop(c.opts.StopTimeout, c.log); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}
