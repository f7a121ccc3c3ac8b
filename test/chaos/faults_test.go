//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/localcluster"
)

// faultWindows opens one fault window at a time, of kinds dealt without
// replacement, so the first pass through the deck injects every kind. A
// window starts only while its longest duration is left of the chaos
// phase, and then runs its course (its fault is always undone), so every
// started window is complete; TestProfiles checks that one pass fits.
func (r *run) faultWindows(ctx context.Context) {
	rng := r.rng(200)
	deck := NewDeck(FaultKinds(), r.rng(201))
	deadline, _ := ctx.Deadline()
	defer func() {
		r.emulator(http.MethodDelete, "/admin/faults", "")
		r.faultEnded()
	}()
	for {
		kind := deck.Next()
		if time.Until(deadline) < r.prof.WindowMax(kind) {
			r.logf("fault windows end: %s left, a %s window may take %s", time.Until(deadline).Round(time.Second), kind, r.prof.WindowMax(kind))
			return
		}
		if !sleep(ctx, r.prof.FaultOff.Pick(rng)) {
			return
		}
		on := r.prof.FaultOn.Pick(rng)
		r.tallyf(func(t *Tally) { t.Injected[kind]++ })
		var missing []string
		switch kind {
		case KindCredentialRevocation:
			missing = r.revokeCredentials(on)
		case KindQuotaShrink:
			missing = r.shrinkQuota(on)
		case KindWebhookOutage:
			missing = r.webhookOutage()
		default:
			r.emulatorFaultSet(kind, on)
		}
		r.faultEnded()
		if NeedsProof(kind) {
			if len(missing) > 0 {
				r.logf("%s window without proof: never saw %v", kind, missing)
			} else {
				r.tallyf(func(t *Tally) { t.Proven[kind]++ })
				r.logf("%s window proven", kind)
			}
		}
	}
}

// emulatorFaultSet switches one of the emulator's fault sets on for on.
func (r *run) emulatorFaultSet(name string, on time.Duration) {
	fs, ok := LookupFaultSet(name)
	if !ok {
		r.problem("no emulator fault set %q", name)
		return
	}
	r.emulator(http.MethodPut, "/admin/faults", fs.Specs)
	r.logf("emulator faults on: %s for %s", fs.Name, on.Round(time.Second))
	sleep(r.ctx, on)
	r.emulator(http.MethodDelete, "/admin/faults", "")
	r.logf("emulator faults off")
}

// What the managers sign with: both ClusterProviderConfigs use credentials
// source None, i.e. the emulator's well-known key of their cloud.
var (
	revokeKeys = fmt.Sprintf(`{"ec2Credentials":{%q:null},"tencentCredentials":{%q:null}}`,
		core.DefaultEC2AccessKeyID, core.DefaultTencentSecretID)
	restoreKeys = fmt.Sprintf(`{"ec2Credentials":{%q:{"secretAccessKey":%q}},"tencentCredentials":{%q:%q}}`,
		core.DefaultEC2AccessKeyID, core.DefaultEC2SecretAccessKey, core.DefaultTencentSecretID, core.DefaultTencentSecretKey)
)

// credentialProof: both accounts' configs and the window's probe
// resources of both kinds reported the refusal.
var credentialProof = []string{
	"ClusterProviderConfig/default=CredentialsRejected", "ClusterProviderConfig/tencentcloud=CredentialsRejected",
	"probe PodElasticIP=CredentialsRejected", "probe AnycastIPBinding=CredentialsRejected",
}

// revokeCredentials revokes the keys the managers sign with, for at least
// on and until the managers reported it (at most ProofWait), then
// registers them again. A probe pod and node make sure both accounts are
// called while the keys are gone. It returns the sightings it missed.
func (r *run) revokeCredentials(on time.Duration) []string {
	began := time.Now()
	r.emulator(http.MethodPatch, "/admin/settings", revokeKeys)
	r.logf("credentials revoked: EC2 %s, Tencent %s", core.DefaultEC2AccessKeyID, core.DefaultTencentSecretID)
	probes := r.startProbes(KindCredentialRevocation, 1)
	seen := r.watchReasons(began, on, probes, credentialProof)
	r.emulator(http.MethodPatch, "/admin/settings", restoreKeys)
	r.logf("credentials registered again after %s", time.Since(began).Round(time.Second))
	r.stopProbes(probes)
	return append(seen.Missing(credentialProof), probes.failed...)
}

// The quotas the emulator starts with (startEmulator) and the one a
// quota-shrink window sets: one address per provider, below what the run
// holds, so every new allocation fails while it lasts.
const (
	runQuota    = 1000
	shrunkQuota = 1
)

// quotaProof: a probe resource of each kind was refused by the quota.
var quotaProof = []string{"probe PodElasticIP=QuotaExceeded", "probe AnycastIPBinding=QuotaExceeded"}

// shrinkQuota lowers both address quotas for at least on and until a probe
// PodElasticIP and a probe AnycastIPBinding reported QuotaExceeded (at
// most ProofWait), then restores them. Two probe pods and nodes ask for
// addresses: with a quota of one, at least one of each is refused.
func (r *run) shrinkQuota(on time.Duration) []string {
	began := time.Now()
	r.emulator(http.MethodPatch, "/admin/settings", fmt.Sprintf(`{"ec2AddressQuota":%d,"tencentAddressQuota":%d}`, shrunkQuota, shrunkQuota))
	r.logf("address quotas lowered to %d", shrunkQuota)
	probes := r.startProbes(KindQuotaShrink, maxProbes)
	seen := r.watchReasons(began, on, probes, quotaProof)
	r.emulator(http.MethodPatch, "/admin/settings", fmt.Sprintf(`{"ec2AddressQuota":%d,"tencentAddressQuota":%d}`, runQuota, runQuota))
	r.logf("address quotas restored to %d after %s", runQuota, time.Since(began).Round(time.Second))
	r.stopProbes(probes)
	return append(seen.Missing(quotaProof), probes.failed...)
}

// webhookOutage makes the webhook proxy refuse connections for the
// profile's outage while churn goes on. The pod and node webhooks fail
// open (failurePolicy Ignore), so a probe pod and node created meanwhile
// must be admitted, and the proxy must have refused the API server's calls.
func (r *run) webhookOutage() []string {
	refusedBefore := r.webhookProxy.Refused()
	began := time.Now()
	r.webhookProxy.Refuse(true)
	r.logf("webhook outage: the proxy refuses connections for %s", r.prof.WebhookOutage)
	probes := r.startProbes(KindWebhookOutage, 1)
	sleep(r.ctx, r.prof.WebhookOutage-time.Since(began))
	r.webhookProxy.Refuse(false)
	refused := r.webhookProxy.Refused() - refusedBefore
	r.logf("webhook outage over after %s: %d connections refused", time.Since(began).Round(time.Second), refused)
	r.stopProbes(probes)
	missing := probes.failed
	// One webhook call each for the probe pod and node, at least.
	if refused < 2 {
		missing = append(missing, fmt.Sprintf("webhook calls refused during the outage: %d, want at least 2", refused))
	}
	return missing
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
