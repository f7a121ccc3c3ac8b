package podelasticip_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/plugin/release"
	"github.com/edgeplane/edgeplane/internal/testsupport/steppedclock"
)

// foreignAccount owns addresses this cluster's key can neither see nor
// change, as another AWS account's would be.
const foreignAccount = "999999999999"

// TestPrivateIPInUse: a pod whose private IP already carries another
// account's Elastic IP. EC2 refuses a second one (Resource.AlreadyAssociated:
// edgeplane never reassociates), so the PodElasticIP reports PrivateIPInUse
// instead of a generic error: in Auto mode it keeps its one allocation and
// retries with backoff, in Pool mode it stops at the first refusal instead
// of cycling through the pool (no LostClaim). Both recover once the
// foreign address goes.
func TestPrivateIPInUse(t *testing.T) {
	const autoIP, poolIP, key = "10.0.1.61", "10.0.1.62", "inuse-pool"
	w := newWorld(t, worldOpts{opts: allowClaims(key), addresses: func(string) []core.EC2AddressFixture {
		return append(poolAddresses(5, key),
			core.EC2AddressFixture{AccountID: foreignAccount, NetworkInterfaceID: eni1, PrivateIPAddress: autoIP},
			core.EC2AddressFixture{AccountID: foreignAccount, NetworkInterfaceID: eni1, PrivateIPAddress: poolIP})
	}})
	w.pod("auto", autoIP, hostIP1, nil)
	w.pod("pool", poolIP, hostIP1, nil)
	w.peip("auto", "auto", nil)
	w.peip("pool", "pool", pool(key))
	for _, name := range []string{"auto", "pool"} {
		p := w.waitReason(name, networkingv1alpha1.PodElasticIPReasonPrivateIPInUse)
		if c := p.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "is associated with") {
			t.Errorf("%s: Ready %s %q", name, c.Status, c.Message)
		}
	}
	// Neither retries faster than its backoff: one association per pass
	// (Pool stops at the first refusal), a pass per backoff step.
	w.assertBackedOff([]string{"auto", "pool"}, networkingv1alpha1.PodElasticIPReasonPrivateIPInUse, "ec2/AssociateAddress")
	if n := w.calls("AllocateAddress"); n != 1 {
		t.Errorf("allocations = %d, want 1 (Auto keeps its address while it waits)", n)
	}
	if n := w.eventCount("pool", "LostClaim"); n != 0 {
		t.Errorf("the Pool PodElasticIP lost %d claims: it cycled through the pool", n)
	}
	w.eventually("PrivateIPInUse events", func() (bool, string) {
		a, p := w.eventCount("auto", "PrivateIPInUse"), w.eventCount("pool", "PrivateIPInUse")
		return a > 0 && p > 0, fmt.Sprintf("auto %d, pool %d", a, p)
	})

	// The foreign addresses go: both bind.
	for _, a := range w.sim.World().Snapshot().EC2.Addresses {
		if a.AccountID == foreignAccount {
			if err := w.sim.World().EC2DisassociateAddress(foreignAccount, a.AssociationID, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, ip := range map[string]string{"auto": autoIP, "pool": poolIP} {
		p := w.waitReady(name)
		if a, ok := w.address(p.Status.AllocationID); !ok || a.PrivateIPAddress != ip {
			t.Errorf("%s: address %+v, want it on %s", name, a, ip)
		}
	}
}

// TestCredentialsRejected: the account's key is revoked under three bound
// PodElasticIPs. They and their ClusterProviderConfig report
// CredentialsRejected; the account costs one cloud call per backoff window,
// not one per PodElasticIP and retry (counted by the emulator while the
// backoff window lasts, then after the clock is stepped one window). A PodElasticIP
// deleted meanwhile stays (its finalizer needs the cloud) with that reason
// until `kubectl edgeplane release --keep-cloud` lets it go, leaving its
// address; the others recover once the key works again.
func TestCredentialsRejected(t *testing.T) {
	// The controller's one clock: it follows real time (listing ages,
	// release delays) and the test steps it past the credential backoff.
	clock := &steppedclock.Clock{}
	w := newWorld(t, worldOpts{configController: true, opts: func(o *podelasticip.Options) {
		o.Clock = clock
		o.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Hour, Max: 4 * time.Hour}
	}})
	names := []string{"c0", "c1", "c2"}
	for i, n := range names {
		w.pod(n, fmt.Sprintf("10.0.1.%d", 70+i), hostIP1, nil)
		w.peip(n, n, nil)
	}
	for _, n := range names {
		w.waitReady(n)
	}
	rejections := func() int64 {
		var sum int64
		for k, v := range w.sim.World().Stats() {
			if strings.HasPrefix(k, "ec2/") && strings.HasSuffix(k, "/"+core.EC2AuthFailure) {
				sum += v
			}
		}
		return sum
	}

	if err := w.sim.World().UpdateSettings(func(s *core.Settings) { delete(s.EC2Credentials, core.DefaultEC2AccessKeyID) }); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		w.waitReason(n, networkingv1alpha1.PodElasticIPReasonCredentialsRejected)
	}
	w.waitConfigReason(cloudv1alpha1.ReasonCredentialsRejected)
	first := rejections()
	if first < 1 || first > int64(len(names)) {
		t.Fatalf("%d rejected calls before the gate closed, want 1..%d (only calls already in flight)", first, len(names))
	}
	// Every PodElasticIP keeps retrying (polls, backoff requeues); none of
	// it reaches the cloud while the window lasts.
	w.waitRetries(names)
	if n := rejections(); n != first {
		t.Fatalf("%d rejected calls inside the backoff window, want %d", n, first)
	}

	// Deleting one: its finalizer needs the cloud, so it stays, with the
	// reason saying why. Release refuses a resource that is not deleted.
	dyn := dynamic.NewForConfigOrDie(env.Config)
	kind, _ := release.FindKind("podelasticip")
	if _, err := release.Release(w.ctx, dyn, release.Request{Kind: kind, Namespace: w.ns, Name: "c0", Now: time.Now()}); !errors.Is(err, release.ErrNotDeleting) {
		t.Fatalf("release of a live PodElasticIP: %v, want ErrNotDeleting", err)
	}
	kept := w.get("c0").Status.AllocationID
	w.delete("c0")
	w.waitReason("c0", networkingv1alpha1.PodElasticIPReasonCredentialsRejected)
	res, err := release.Release(w.ctx, dyn, release.Request{Kind: kind, Namespace: w.ns, Name: "c0", Reason: "account closed", Now: time.Now()})
	if err != nil || !strings.Contains(res.Cloud, kept) {
		t.Fatalf("release = %+v, %v; want the kept address %s named", res, err, kept)
	}
	w.waitGone("c0")
	if _, ok := w.address(kept); !ok {
		t.Errorf("the released PodElasticIP's address %s is gone from the cloud; release must keep it", kept)
	}

	// One window later: one probe for the whole account, still rejected.
	clock.Step(time.Hour)
	w.eventually("one probe", func() (bool, string) { n := rejections(); return n == first+1, fmt.Sprint(n) })
	w.waitRetries(names[1:])
	if n := rejections(); n != first+1 {
		t.Fatalf("%d rejected calls after one window, want %d (one probe)", n, first+1)
	}

	// The key works again: the next probe (after the doubled window)
	// opens the account, and everything recovers.
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) {
		s.EC2Credentials[core.DefaultEC2AccessKeyID] = core.EC2Credential{SecretAccessKey: core.DefaultEC2SecretAccessKey}
	}); err != nil {
		t.Fatal(err)
	}
	clock.Step(2 * time.Hour)
	for _, n := range names[1:] {
		w.waitReady(n)
	}
	w.waitConfigReason(cloudv1alpha1.ReasonCredentialsAvailable)
}
