//go:build chaos

package chaos

import (
	"context"
	"net/http"
	"syscall"
	"time"

	"github.com/edgeplane/edgeplane/internal/localcluster"
)

// emulatorFaults switches the emulator's fault sets on and off, one set at
// a time, and leaves it clean when the run's chaos phase ends.
func (r *run) emulatorFaults(ctx context.Context) {
	rng := r.rng(200)
	defer func() {
		r.emulator(http.MethodDelete, "/admin/faults", "")
		r.faultEnded()
	}()
	for sleep(ctx, r.prof.FaultOff.Pick(rng)) {
		fs := FaultSets[rng.IntN(len(FaultSets))]
		r.emulator(http.MethodPut, "/admin/faults", fs.Specs)
		r.count("emulator fault windows: " + fs.Name)
		on := r.prof.FaultOn.Pick(rng)
		r.logf("emulator faults on: %s for %s", fs.Name, on.Round(time.Second))
		sleep(ctx, on)
		r.emulator(http.MethodDelete, "/admin/faults", "")
		r.faultEnded()
		r.logf("emulator faults off")
	}
}

// pauseEtcd stops etcd with SIGSTOP once, between 30% and 70% of the chaos
// phase, and resumes it with SIGCONT after the profile's pause.
func (r *run) pauseEtcd(ctx context.Context) {
	rng := r.rng(300)
	at := time.Duration(float64(r.prof.Duration) * (0.3 + 0.4*rng.Float64()))
	if !sleep(ctx, at) {
		return
	}
	if err := r.cluster.Signal(localcluster.Etcd, syscall.SIGSTOP); err != nil {
		r.problem("pausing etcd: %v", err)
		return
	}
	r.logf("etcd paused (SIGSTOP) for %s", r.prof.EtcdPause)
	time.Sleep(r.prof.EtcdPause) // never cut short: etcd must be resumed
	if err := r.cluster.Signal(localcluster.Etcd, syscall.SIGCONT); err != nil {
		r.problem("resuming etcd: %v", err)
	}
	r.count("etcd pauses")
	r.faultEnded()
	r.logf("etcd resumed (SIGCONT)")
}
