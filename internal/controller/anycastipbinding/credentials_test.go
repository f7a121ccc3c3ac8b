package anycastipbinding

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestCredentialsRejected: the account's key is revoked under two bound
// bindings being deleted. Both report CredentialsRejected (not a generic
// CloudError), their finalizers hold, and the account costs one Tencent
// call per backoff window however often they are reconciled (counted by
// the emulator); once the key works again the next probe reopens the
// account and both deletions finish.
func TestCredentialsRejected(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	prev := f.conn.opts.ClientOptions
	f.conn.opts.ClientOptions = func(o *tencentcloud.Options) {
		prev(o)
		o.Clock = manualPassiveClock{f.clock}
		o.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Hour, Max: 4 * time.Hour}
	}
	names := []string{prefix(t) + "-a", prefix(t) + "-b"}
	for i, n := range names {
		f.node(n, "ins-node000"+string(rune('1'+i)), false)
		f.binding(n, n, nil)
		f.converge(n, ready)
	}
	rejected := func() int64 {
		var sum int64
		for k, v := range f.emu.World().Stats() {
			if strings.HasPrefix(k, "tencent/") && strings.Contains(k, "/AuthFailure") {
				sum += v
			}
		}
		return sum
	}
	if err := f.emu.World().UpdateSettings(func(s *core.Settings) { delete(s.TencentCredentials, core.DefaultTencentSecretID) }); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := env.Client.Delete(f.ctx, f.get(n)); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		for _, n := range names {
			f.reconcile(n)
		}
	}
	for _, n := range names {
		b := f.get(n)
		if b == nil || !readyReason(networkingv1alpha1.AnycastReasonCredentialsRejected)(b) {
			t.Fatalf("binding %s: %s, want Ready reason CredentialsRejected and its finalizer held", n, describe(b))
		}
	}
	if n := rejected(); n != 1 {
		t.Fatalf("%d rejected Tencent calls for 10 reconciles inside one window, want 1", n)
	}

	if err := f.emu.World().UpdateSettings(func(s *core.Settings) {
		s.TencentCredentials[core.DefaultTencentSecretID] = core.DefaultTencentSecretKey
	}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	for _, n := range names {
		f.converge(n, gone)
	}
	if n := rejected(); n != 1 {
		t.Fatalf("%d rejected Tencent calls in all, want 1", n)
	}
	if len(f.addresses()) != 0 {
		t.Errorf("addresses left after the deletions: %+v", f.addresses())
	}
}
