package localcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Component names; they are also the log file names (<dir>/logs/<name>.log)
// and the keys of Cluster.PIDs.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// component says how to run and probe one control-plane process.
type component struct {
	name string // also the binary name in k8sbin
	// ports is how many free loopback ports args needs.
	ports int
	// args builds the command line for the given ports. It is called again
	// with fresh ports when a start is retried, so it records the ports it
	// uses (for ready and for later clients) as a side effect.
	args func(ports []int) []string
	env  []string
	// ready returns nil once the process serves.
	ready func(ctx context.Context) error
}

// startAttempts bounds retries after losing a port race with another program.
const startAttempts = 3

// startComponent starts comp and waits until it is ready, retrying with fresh
// ports if it lost a port to another program. On failure the error carries
// the tail of the component's log.
func (c *Cluster) startComponent(ctx context.Context, comp component) error {
	bin, err := k8sbin.Path(comp.name)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(comp.ports)
		if err != nil {
			return err
		}
		began := time.Now()
		p, err := startProcess(comp.name, bin, comp.args(ports), comp.env, c.logDir())
		if err != nil {
			return err
		}
		err = waitReady(ctx, p, comp.ready)
		if err == nil {
			// Tracked only once ready: a failed attempt is stopped right here
			// and must not later be reported as a dead component.
			c.track(p)
			c.log.Info("component ready", "component", comp.name, "pid", p.pid(), "ports", ports,
				"took", time.Since(began).Round(time.Millisecond))
			return nil
		}
		_ = p.stop(c.opts.StopTimeout, c.log)
		if attempt < startAttempts && isPortConflict(tailFile(p.logPath, 50)) {
			c.log.Info("component lost a port race, retrying with new ports", "component", comp.name, "attempt", attempt)
			continue
		}
		return fmt.Errorf("starting %s: %w", comp.name, err)
	}
}

// waitReady polls ready until it succeeds, the process exits, or ctx ends.
func waitReady(ctx context.Context, p *process, ready func(context.Context) error) error {
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	for {
		if p.exited() {
			return fmt.Errorf("before becoming ready: %w", p.exitError())
		}
		checkCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr := ready(checkCtx)
		cancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready (%w); last check: %w%s", ctx.Err(), lastErr, p.logTail())
		case <-p.done:
		case <-ticker.C:
		}
	}
}

// insecureHTTP probes loopback health endpoints. Skipping verification is
// fine there: the controller manager and scheduler serve self-signed
// certificates generated at start, and the probes only read "ok".
var insecureHTTP = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe, see above
	Proxy:           nil,
}}

// httpOK returns a readiness check that GETs url with client and wants 200.
func httpOK(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, failedChecks(string(body)))
		}
		return nil
	}
}

// failedChecks shortens a health endpoint's verbose answer to its failed
// checks ("[-]name failed: ..."), or returns it whole if it has none.
func failedChecks(body string) string {
	var failed []string
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, line)
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}
