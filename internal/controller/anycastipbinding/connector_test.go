package anycastipbinding

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// gatedReader counts the reads of provider configs and holds each until
// release is closed.
type gatedReader struct {
	client.Reader
	release chan struct{}
	configs atomic.Int32
}

func (g *gatedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*cloudv1alpha1.ClusterProviderConfig); ok {
		g.configs.Add(1)
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Reader.Get(ctx, key, obj, opts...)
}

// TestSharedResolution: passes that need a provider config while another
// pass resolves it wait for that resolution instead of reading the config
// themselves, and all get the same account.
func TestSharedResolution(t *testing.T) {
	ctx := testenv.Context(t)
	cpc := &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "shared-resolution"},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			// The endpoint is never dialled: resolving builds a client only.
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: "http://127.0.0.1:1", ClusterIdentity: "cluster-shared-resolution"},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}
	if err := env.Client.Create(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, cpc) })
	r := &gatedReader{Reader: env.Client, release: make(chan struct{})}
	c := &Connector{reader: r, opts: DefaultOptions(), accounts: newAccounts(DefaultOptions())}

	const passes = 8
	got := make([]*account, passes)
	errs := make([]error, passes)
	var wg sync.WaitGroup
	for i := range passes {
		wg.Go(func() { got[i], errs[i] = c.account(ctx, *providerConfigRef(cpc.Name)) })
	}
	// Hold the first read until every pass has had the chance to find the
	// resolution under way (a pass that comes later finds the account
	// cached, which reads nothing either).
	deadline := time.Now().Add(30 * time.Second)
	for r.configs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(r.release)
	wg.Wait()

	for i := range passes {
		if errs[i] != nil {
			t.Fatalf("pass %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Errorf("pass %d got another account than pass 0", i)
		}
	}
	if n := r.configs.Load(); n != 1 {
		t.Errorf("the provider config was read %d times, want once", n)
	}
}
