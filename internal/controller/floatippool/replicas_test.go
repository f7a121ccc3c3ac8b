package floatippool

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/status"
)

// labelReplica routes a test pool's admission to one replica's webhook.
const labelReplica = "race.edgeplane.io/replica"

// replica is one manager: its own cache, webhook server and pool
// reconciler, as a second Deployment replica would run them (both
// reconcilers active, as during a leader hand-over, which is harsher than
// leader election allows).
type replica struct {
	mgr ctrl.Manager
	// usable records every pool this replica's allocator view (loadPools on
	// its cache) ever found usable.
	mu     sync.Mutex
	usable map[string]bool
}

// observe evaluates the allocator's view of the pools now.
func (r *replica) observe(ctx context.Context, t *testing.T) {
	views, err := loadPools(ctx, r.mgr.GetClient())
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("loading pools: %v", err)
		}
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range views {
		if v.err == nil && v.hasRanges() && strings.HasPrefix(v.name(), "race-") {
			r.usable[v.name()] = true
		}
	}
}

// TestOverlapSafetyAcrossReplicas races the creation of overlapping pools
// through two webhook servers of two managers with separate caches, many
// times: the webhooks (reading their caches) often admit both pools of a
// pair, yet at most one of them may ever be usable for allocation, in
// either replica, and the other ends Ready=False OverlapsPool. Every
// version of the FloatIPPoolLedger is watched: its claims never share an
// IP, not even across versions (no pool is deleted while the race runs, so
// a claim, once written, stands).
func TestOverlapSafetyAcrossReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctrl.SetLogger(logr.Discard())

	// Every ledger version, from before the first race pool on.
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	must(t, err)
	w, err := wc.Watch(ctx, &networkingv1alpha1.FloatIPPoolLedgerList{})
	must(t, err)
	defer w.Stop()
	claimsSeen := map[string]networkingv1alpha1.FloatIPPoolClaim{}
	var ledgerErrs []string
	ledgerDone := make(chan struct{})
	go func() {
		defer close(ledgerDone)
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*networkingv1alpha1.FloatIPPoolLedger)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if msg := overlappingClaims(l.Spec.Claims); msg != "" {
				ledgerErrs = append(ledgerErrs, fmt.Sprintf("version %s: %s", l.ResourceVersion, msg))
			}
			for _, c := range l.Spec.Claims {
				if strings.HasPrefix(c.Pool, "race-") {
					claimsSeen[c.Pool+"/"+strings.Join(c.Ranges, ",")] = c
				}
			}
		}
	}()

	dir := t.TempDir()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600))

	replicas := make([]*replica, 2)
	var hooks []admissionregistrationv1.ValidatingWebhook
	for i := range replicas {
		port := freePort(t)
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
			Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			Controller:    ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
			WebhookServer: webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}),
		})
		must(t, err)
		must(t, SetupWebhook(mgr))
		must(t, (Options{SweepInterval: time.Minute}).Setup()(ctx, mgr, setup.Config{}))
		r := &replica{mgr: mgr, usable: map[string]bool{}}
		replicas[i] = r
		// Evaluate the allocator's view on every change of what it reads.
		for _, obj := range []client.Object{&networkingv1alpha1.FloatIPPool{}, &networkingv1alpha1.FloatIPPoolLedger{}} {
			inf, err := mgr.GetCache().GetInformer(ctx, obj)
			must(t, err)
			_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { r.observe(ctx, t) },
				UpdateFunc: func(any, any) { r.observe(ctx, t) },
				DeleteFunc: func(any) { r.observe(ctx, t) },
			})
			must(t, err)
		}
		mctx, mcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = mgr.Start(mctx) }()
		t.Cleanup(func() { mcancel(); <-done })
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			t.Fatal("cache did not sync")
		}
		url := fmt.Sprintf("https://127.0.0.1:%d/validate-networking-edgeplane-io-v1alpha1-floatippool", port)
		hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{
			Name:                    fmt.Sprintf("r%d.race.networking.edgeplane.io", i),
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: certPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{networkingv1alpha1.Group}, APIVersions: []string{"v1alpha1"}, Resources: []string{"floatippools"}}}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{labelReplica: strconv.Itoa(i)}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "race-replicas"}, Webhooks: hooks}
	must(t, env.Client.Create(ctx, cfg))
	defer func() { _ = env.Client.Delete(context.Background(), cfg) }()
	defer cleanupRacePools(t)
	waitWebhooksServing(ctx, t)

	// Batches of pairs created at once, each pair's pools through different
	// replicas: a = 10.201.<pair>.1-20 (replica 0), b = 10.201.<pair>.11-30
	// (replica 1).
	const batches, pairs = 3, 20
	bothAdmitted := 0
	for batch := range batches {
		var wg sync.WaitGroup
		created := make([][2]bool, pairs)
		for p := range pairs {
			n := batch*pairs + p
			for side, rng := range []string{fmt.Sprintf("10.201.%d.1~10.201.%d.20", n, n), fmt.Sprintf("10.201.%d.11~10.201.%d.30", n, n)} {
				wg.Go(func() {
					pool := racePool(fmt.Sprintf("race-%03d-%c", n, 'a'+side), side, rng, n)
					err := env.Client.Create(ctx, pool)
					if err != nil && !strings.Contains(err.Error(), "overlaps FloatIPPool") {
						t.Errorf("creating %s: %v", pool.Name, err)
					}
					created[p][side] = err == nil
				})
			}
		}
		wg.Wait()
		for p := range pairs {
			n := batch*pairs + p
			if created[p][0] && created[p][1] {
				bothAdmitted++
			}
			settle(ctx, t, replicas, n, created[p])
		}
	}
	t.Logf("%d of %d pairs had both pools admitted by the webhooks (the race the ledger decides)", bothAdmitted, batches*pairs)
	if bothAdmitted == 0 {
		t.Fatal("no pair raced past the webhooks: the test did not exercise the ledger")
	}

	w.Stop()
	<-ledgerDone
	for _, e := range ledgerErrs {
		t.Error("ledger " + e)
	}
	var all []networkingv1alpha1.FloatIPPoolClaim
	for _, c := range claimsSeen {
		all = append(all, c)
	}
	if msg := overlappingClaims(all); msg != "" {
		t.Errorf("claims written at different times overlap: %s", msg)
	}
	for n := range batches * pairs {
		a, b := fmt.Sprintf("race-%03d-a", n), fmt.Sprintf("race-%03d-b", n)
		if ra, rb := everUsable(replicas, a), everUsable(replicas, b); len(ra) > 0 && len(rb) > 0 {
			t.Errorf("overlapping pools %s (usable in replicas %v) and %s (usable in replicas %v) were both usable", a, ra, b, rb)
		}
	}
}

// everUsable lists the replicas that ever found pool usable.
func everUsable(replicas []*replica, pool string) []int {
	var out []int
	for i, r := range replicas {
		r.mu.Lock()
		if r.usable[pool] {
			out = append(out, i)
		}
		r.mu.Unlock()
	}
	return out
}

// settle waits until pair n's outcome is final in both replicas: exactly
// one created pool usable, and the other (if created) Ready=False
// OverlapsPool.
func settle(ctx context.Context, t *testing.T, replicas []*replica, n int, created [2]bool) {
	t.Helper()
	names := [2]string{fmt.Sprintf("race-%03d-a", n), fmt.Sprintf("race-%03d-b", n)}
	deadline := time.Now().Add(time.Minute)
	for {
		last := ""
		usable := map[string]int{}
		for _, r := range replicas {
			r.observe(ctx, t)
			views, err := loadPools(ctx, r.mgr.GetClient())
			must(t, err)
			for _, v := range views {
				if v.err == nil && (v.name() == names[0] || v.name() == names[1]) {
					usable[v.name()]++
				}
			}
		}
		switch {
		case len(usable) != 1:
			last = fmt.Sprintf("usable in the replicas: %v", usable)
		default:
			for name := range usable {
				if usable[name] != len(replicas) {
					last = fmt.Sprintf("%s usable in %d replicas", name, usable[name])
				}
			}
		}
		if last == "" && created[0] && created[1] {
			for _, name := range names {
				if usable[name] > 0 {
					continue
				}
				var p networkingv1alpha1.FloatIPPool
				must(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, &p))
				if c := status.Get(&p, networkingv1alpha1.FloatIPTypeReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != networkingv1alpha1.FloatIPReasonOverlap {
					last = fmt.Sprintf("%s: Ready = %+v, want False OverlapsPool", name, c)
				}
			}
		}
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pair %d did not settle: %s", n, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func racePool(name string, replica int, rng string, n int) *networkingv1alpha1.FloatIPPool {
	return &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelReplica: strconv.Itoa(replica)}},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{rng}, Subnet: fmt.Sprintf("10.201.%d.0/24", n),
			NodeSubnets: []string{"192.168.201.0/24"}},
	}
}

// waitWebhooksServing waits until the API server calls both replicas'
// webhooks: a pool overlapping a probe pool is refused through each.
func waitWebhooksServing(ctx context.Context, t *testing.T) {
	t.Helper()
	probe := racePool("race-probe", 0, "10.201.255.1", 255)
	must(t, env.Client.Create(ctx, probe))
	deadline := time.Now().Add(time.Minute)
	for i := range 2 {
		for {
			dup := racePool(fmt.Sprintf("race-probe-%d", i), i, "10.201.255.1", 255)
			err := env.Client.Create(ctx, dup)
			if err != nil && strings.Contains(err.Error(), "overlaps FloatIPPool race-probe") {
				break
			}
			if err == nil {
				must(t, env.Client.Delete(ctx, dup))
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d's webhook never refused an overlapping pool: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// cleanupRacePools deletes every race pool, finalizer and all.
func cleanupRacePools(t *testing.T) {
	ctx := context.Background()
	var list networkingv1alpha1.FloatIPPoolList
	if err := env.Client.List(ctx, &list); err != nil {
		t.Error(err)
		return
	}
	for i := range list.Items {
		p := &list.Items[i]
		if !strings.HasPrefix(p.Name, "race-") {
			continue
		}
		if len(p.Finalizers) > 0 {
			p.Finalizers = nil
			_ = env.Client.Update(ctx, p)
		}
		_ = client.IgnoreNotFound(env.Client.Delete(ctx, p))
	}
}

// overlappingClaims describes the first two claims that share an IP ("" if
// none).
func overlappingClaims(claims []networkingv1alpha1.FloatIPPoolClaim) string {
	sets := make([]ipam.Set, len(claims))
	for i, c := range claims {
		s, err := ipam.ParseSet(c.Ranges, c.ExcludeIPs)
		if err != nil {
			return fmt.Sprintf("claim of %s does not parse: %v", c.Pool, err)
		}
		sets[i] = s
	}
	for i := range claims {
		for j := range i {
			if claims[i].Pool == claims[j].Pool {
				continue
			}
			if r, ok := sets[i].Overlap(sets[j]); ok {
				return fmt.Sprintf("claims of %s and %s share %s", claims[i].Pool, claims[j].Pool, r)
			}
		}
	}
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
