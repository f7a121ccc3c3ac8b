//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// replica is one edgeplane-manager process. Its addresses stay the same
// across restarts, so the proxies need no update.
type replica struct {
	run                               *run
	slot, bin                         string
	probe, metrics, webhook, extender string

	mu   sync.Mutex
	proc *localcluster.Process
	// down is true from a deliberate kill until the restart, so the
	// supervisor does not count it as a crash.
	down bool
}

func (rep *replica) args() []string {
	r := rep.run
	return append([]string{
		"--kubeconfig=" + r.cluster.KubeconfigPath(), "--cluster-name=" + clusterIdentity,
		"--leader-elect=true", "--leader-election-namespace=" + managerNS,
		"--metrics-bind-address=" + rep.metrics, "--metrics-secure=false", "--health-probe-bind-address=" + rep.probe,
		"--webhook-host=127.0.0.1", "--webhook-port=" + rep.webhook[strings.LastIndex(rep.webhook, ":")+1:],
		"--webhook-cert-dir=" + filepath.Join(r.art, "certs-"+rep.slot), "--webhook-service-namespace=" + managerNS,
		"--floatippool-extender-address=" + rep.extender,
		"--anycastipbinding-provider-config=tencentcloud",
		// Sweeps often enough that an address leaked by a dropped response
		// is collected within the convergence wait.
		"--podelasticip-orphan-grace-period=1m", "--podelasticip-orphan-interval=30s",
		"--anycastipbinding-orphan-grace-period=1m", "--anycastipbinding-orphan-interval=30s",
		"--floatippool-sweep-interval=30s",
	}, r.extenderCerts.ManagerFlags()...)
}

// start starts the process (it must not be running).
func (rep *replica) start() {
	p, err := localcluster.StartProcess("manager-"+rep.slot, rep.bin, rep.args(), nil, filepath.Join(rep.run.art, "logs"))
	if err != nil {
		rep.run.t.Fatalf("starting replica %s: %v", rep.slot, err)
	}
	rep.mu.Lock()
	rep.proc, rep.down = p, false
	rep.mu.Unlock()
	rep.run.t.Cleanup(func() { _ = p.Kill() })
	rep.run.logf("replica %s started (pid %d)", rep.slot, p.Pid())
}

func (rep *replica) process() *localcluster.Process {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	return rep.proc
}

// ready reports whether the replica answers /readyz.
func (rep *replica) ready(ctx context.Context) bool {
	return httpGet(ctx, "http://"+rep.probe+"/readyz") == nil
}

func (rep *replica) waitReady(ctx context.Context) {
	rep.run.waitFor(ctx, "replica "+rep.slot+" ready", func() (bool, string) {
		if err := rep.process().ExitError(); err != nil {
			rep.run.t.Fatalf("replica %s exited: %v", rep.slot, err)
		}
		return rep.ready(ctx), ""
	})
}

// leads reports whether the replica's leader-election gauge says it leads.
func (rep *replica) leads(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+rep.metrics+"/metrics", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

func httpGet(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// leaseHolder is the identity holding the manager's Lease, "" if none.
func (r *run) leaseHolder(ctx context.Context) string {
	var l coordinationv1.Lease
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: leaseName}, &l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// failoverTimeout only keeps a broken election from hanging the run: a
// failover normally completes within FailoverAllowance.
const failoverTimeout = 3 * time.Minute

// leaderWait is how long a kill attempt looks for a leader with a ready
// survivor (an election may be under way) before it counts as a miss.
const leaderWait = 30 * time.Second

// findLeader returns the replica that leads (its leader-election gauge is
// 1 while the Lease has a holder) and the other one, if that one is ready
// to take over; nil when there is none within leaderWait.
func (r *run) findLeader(ctx context.Context) (leader, survivor *replica, holder string) {
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, leaderWait, true, func(ctx context.Context) (bool, error) {
		leader, survivor, holder = nil, nil, r.leaseHolder(ctx)
		for _, rep := range r.replicas {
			if rep.leads(ctx) {
				leader = rep
			} else if rep.ready(ctx) {
				survivor = rep
			}
		}
		return leader != nil && survivor != nil && holder != "", nil
	})
	if leader == nil || survivor == nil || holder == "" {
		return nil, nil, holder
	}
	return leader, survivor, holder
}

// killLeaders SIGKILLs the leader at random moments. The killed replica
// stays down until the failover has completed, then restarts; the next
// kill waits until both replicas are ready again.
//
// A failover is completed when (1) the survivor's leader-election gauge
// reads 1 and the Lease names a holder other than the killed process, and
// (2) the probe IngressDaemonSet, whose spec the run changed after the
// kill, reports that generation as observed. With the killed replica dead
// and not yet restarted, only the survivor can have done either.
func (r *run) killLeaders(ctx context.Context) {
	rng := r.rng(100)
	for sleep(ctx, r.prof.LeaderKill.Pick(rng)) {
		leader, survivor, holder := r.findLeader(ctx)
		if leader == nil {
			if ctx.Err() != nil {
				return
			}
			r.tallyf(func(t *Tally) { t.NoLeader++ })
			r.logf("no leader with a ready survivor to kill within %s (Lease holder %q)", leaderWait, holder)
			continue
		}
		leader.mu.Lock()
		leader.down = true
		p := leader.proc
		leader.mu.Unlock()
		_ = p.Signal(syscall.SIGKILL)
		<-p.Done()
		r.tallyf(func(t *Tally) { t.LeaderKills++ })
		r.logf("killed leader %s (pid %d, Lease holder %s)", leader.slot, p.Pid(), holder)
		began := time.Now()
		if err := r.failover(survivor, holder); err != nil {
			r.problem("failover after killing leader %s (%s): %v", leader.slot, holder, err)
		} else {
			r.tallyf(func(t *Tally) { t.Failovers++ })
			r.logf("failover completed in %.1f s: replica %s leads (%s) and reconciled the probe", time.Since(began).Seconds(), survivor.slot, r.leaseHolder(r.ctx))
		}
		leader.start() // never skipped, even at the end
		r.faultEnded()
		r.waitAllReady()
		r.faultEnded()
	}
}

// failover changes the probe's spec, then waits until the survivor holds
// the Lease and has reconciled that change.
func (r *run) failover(survivor *replica, killed string) error {
	ctx, cancel := context.WithTimeout(r.ctx, failoverTimeout)
	defer cancel()
	gen, err := r.bumpProbe(ctx)
	if err != nil {
		return fmt.Errorf("changing the probe: %w", err)
	}
	var state string
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		now := r.leaseHolder(ctx)
		leads := survivor.leads(ctx)
		observed, err := r.probeObserved(ctx)
		state = fmt.Sprintf("Lease holder %q, replica %s leads: %v, probe generation %d observed %d (%v)", now, survivor.slot, leads, gen, observed, err)
		return now != "" && now != killed && leads && observed >= gen, nil
	})
	if err != nil {
		return fmt.Errorf("not completed within %s: %s", failoverTimeout, state)
	}
	return nil
}

// waitAllReady waits (generously) until every replica answers /readyz.
func (r *run) waitAllReady() {
	for _, rep := range r.replicas {
		err := wait.PollUntilContextTimeout(r.ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			return rep.ready(ctx), nil
		})
		if err != nil {
			r.problem("replica %s never became ready again", rep.slot)
		}
	}
}

// supervise restarts a replica that exited on its own (a crash, or leader
// election lost while etcd was paused), counting it.
func (r *run) supervise(ctx context.Context) {
	for sleep(ctx, time.Second) {
		for _, rep := range r.replicas {
			rep.mu.Lock()
			p, down := rep.proc, rep.down
			rep.mu.Unlock()
			if down || !p.Exited() {
				continue
			}
			r.count("replica exits not caused by the run")
			r.logf("replica %s exited on its own: %v", rep.slot, firstLine(p.ExitError()))
			rep.start()
			r.faultEnded()
		}
	}
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
