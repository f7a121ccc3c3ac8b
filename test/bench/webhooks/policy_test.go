package webhooks_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

// policiesFile holds the node-taint MutatingAdmissionPolicies config/default
// installs, rendered from the chart (webhook.nodeTaints=policy).
const policiesFile = "config/components/node-taint-policies/policies.yaml"

// policyBenchmarked names the benchmark of each policy in policiesFile;
// TestEveryNodeTaintPolicyIsBenchmarked keeps it complete.
var policyBenchmarked = map[string]func(*testing.B){
	"anycastipbinding-node-taint": BenchmarkNodeTaintPolicy200ConcurrentNodes,
	"nodeelasticip-node-taint":    BenchmarkNodeTaintPolicy200ConcurrentElasticIPNodes,
}

// BenchmarkNodeTaintPolicy200ConcurrentNodes is BenchmarkWebhooks200ConcurrentNodes
// with the AnycastIPBinding taint given by its MutatingAdmissionPolicy (the
// default where the API server has them) instead of the Node webhook.
func BenchmarkNodeTaintPolicy200ConcurrentNodes(b *testing.B) {
	benchNodeTaintPolicy(b, "aia.nodes.networking.edgeplane.io", "anycastipbinding-node-taint", networkingv1alpha1.LegacyLabelNeedAIAIP, networkingv1alpha1.LegacyTaintNoAIAIP)
}

// BenchmarkNodeTaintPolicy200ConcurrentElasticIPNodes does the same for the
// NodeElasticIP taint.
func BenchmarkNodeTaintPolicy200ConcurrentElasticIPNodes(b *testing.B) {
	benchNodeTaintPolicy(b, "neip.nodes.networking.edgeplane.io", "nodeelasticip-node-taint", networkingv1alpha1.LabelWantElasticIP, networkingv1alpha1.DefaultNodeElasticIPTaintKey)
}

// benchNodeTaintPolicy runs the node webhook benchmark's work (200 labelled
// nodes created at once, each must come back tainted, then 200 updates at
// once; deleted afterwards, untimed) with the policy named policy installed
// and the Node webhook named webhook taken out of its configuration, against
// the same manager process. It reports, from the API server's own
// histograms over the timed rounds:
//
//   - admission-p99-le-ms: a bound on the p99 of the whole mutating
//     admission of the benchmark's node requests (every mutating plugin, the
//     policy's match conditions and mutation included;
//     apiserver_admission_step_admission_duration_seconds). The histogram
//     also holds the manager's requests of the same window: every
//     observation above a bucket bound is counted as one of the benchmark's,
//     so they can only raise the bound (promtext.QuantileAtMost);
//   - <policy>-check-p99-le-ms: the same bound for the policy's mutation
//     alone (apiserver_mutating_admission_policy_check_duration_seconds);
//   - the client's request p50 and p99 and the manager's CPU, as the webhook
//     benchmarks do.
//
// It fails if the Node webhook is called or a node comes back untainted.
func benchNodeTaintPolicy(b *testing.B, webhook, policy, label, taintKey string) {
	f := setUp(b)
	path := f.paths[webhook]
	probe, work, cleanup := nodeWork(b, f, "map-"+strings.SplitN(webhook, ".", 2)[0], label, taintKey)
	restore := f.installPolicy(b, webhook, policy, probe)
	defer restore()

	var ph phase
	before := f.apiserverHistograms(b, policy)
	b.ResetTimer()
	for range b.N {
		f.run(b, &ph, func(round int, _ bool) { work(round, true) }, cleanup, false)
	}
	b.StopTimer()
	requests := b.N * 2 * concurrentNodes // creations, then updates
	// The clean-up's deletions and the probes are not in the window: read
	// the histograms again only after the last round's work. f.run ran the
	// last clean-up already, which admits deletions (DELETE, not counted).
	after := f.apiserverHistograms(b, policy)
	if n := len(ph.handler[path]) + len(ph.handler[noopPath]); n != 0 {
		b.Fatalf("the API server called the Node webhook %d times with the policy installed", n)
	}
	admission := promtext.QuantileAtMost(promtext.Delta(after.admission, before.admission), 0.99, requests)
	check := promtext.Delta(after.check, before.check)
	if check[math.Inf(1)] < float64(requests)/2 {
		b.Fatalf("the policy %s mutated %v times for %d node creations", policy, check[math.Inf(1)], requests/2)
	}
	// Seconds to milliseconds as floats: a bound beyond the last bucket is
	// +Inf, which a time.Duration cannot hold, and must be reported so.
	b.ReportMetric(1000*admission, "admission-p99-le-ms")
	b.ReportMetric(1000*promtext.QuantileAtMost(check, 0.99, int(check[math.Inf(1)])), policy+"-check-p99-le-ms")
	b.ReportMetric(ms(percentile(ph.requests, 50)), "request-p50-ms")
	b.ReportMetric(ms(percentile(ph.requests, 99)), "request-p99-ms")
	b.ReportMetric(ms(ph.managerCPU)/float64(b.N), "manager-cpu-ms/op")
}

// admissionHistograms are the API server's cumulative buckets this
// benchmark reads.
type admissionHistograms struct {
	// admission: the mutating step of CREATE and UPDATE requests admitted.
	admission map[float64]float64
	// check: the policy's mutations.
	check map[float64]float64
}

func (f *fixture) apiserverHistograms(b *testing.B, policy string) admissionHistograms {
	fams, err := promtext.APIServer(b.Context(), f.apiserver)
	if err != nil {
		b.Fatal(err)
	}
	family := func(name string) *dto.MetricFamily {
		if fam, ok := fams[name]; ok {
			return fam
		}
		return &dto.MetricFamily{}
	}
	return admissionHistograms{
		admission: promtext.Buckets(family("apiserver_admission_step_admission_duration_seconds"), func(l map[string]string) bool {
			return l["type"] == "admit" && (l["operation"] == "CREATE" || l["operation"] == "UPDATE")
		}),
		check: promtext.Buckets(family("apiserver_mutating_admission_policy_check_duration_seconds"), func(l map[string]string) bool {
			return l["policy"] == policy
		}),
	}
}

// installPolicy creates policy and its binding from policiesFile and takes
// webhook out of its configuration, waiting until a probe node is tainted
// by the policy without a call to the webhook. restore undoes both.
func (f *fixture) installPolicy(b *testing.B, webhook, policy string, probe func(i int) error) (restore func()) {
	ctx := b.Context()
	var objs []client.Object
	for _, o := range gotool.File(b, policiesFile) {
		if o.GetName() == policy {
			objs = append(objs, o)
		}
	}
	if len(objs) != 2 {
		b.Fatalf("%s has %d objects named %s, want the policy and its binding", policiesFile, len(objs), policy)
	}
	for _, o := range objs {
		if err := f.env.Client.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	var saved admissionregistrationv1.MutatingWebhook
	var list admissionregistrationv1.MutatingWebhookConfigurationList
	if err := f.env.Client.List(ctx, &list); err != nil {
		b.Fatal(err)
	}
	for _, c := range list.Items {
		if i := slices.IndexFunc(c.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return w.Name == webhook }); i >= 0 {
			cfg, saved = c, c.Webhooks[i]
			cfg.Webhooks = slices.Delete(slices.Clone(c.Webhooks), i, i+1)
		}
	}
	if cfg.Name == "" {
		b.Fatalf("no configuration holds webhook %s", webhook)
	}
	if err := f.env.Client.Update(ctx, &cfg); err != nil {
		b.Fatal(err)
	}
	restore = func() {
		ctx := context.Background()
		for _, o := range objs {
			if err := client.IgnoreNotFound(f.env.Client.Delete(ctx, o)); err != nil {
				b.Error(err)
			}
		}
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(&cfg), &c); err != nil {
			b.Error(err)
			return
		}
		c.Webhooks = append(c.Webhooks, saved)
		if err := f.env.Client.Update(ctx, &c); err != nil {
			b.Error(err)
		}
		// The next benchmark's probe (point) waits for its webhook; the
		// policy must be gone too: wait until a probe no longer reaches it.
		f.awaitPolicy(b, policy, probe, false)
	}
	f.awaitPolicy(b, policy, probe, true)
	f.probeUntil(b, "the API server to stop calling webhook "+webhook, probe, func(called map[string][]time.Duration, err error) bool {
		return err == nil && len(called) == 0
	})
	return restore
}

// awaitPolicy waits until probe requests reach policy (on) or stop
// reaching it (off), by its check counter.
func (f *fixture) awaitPolicy(b *testing.B, policy string, probe func(i int) error, on bool) {
	eventually.That(b.Context(), b, fmt.Sprintf("probes reaching policy %s: %v", policy, on), func() (bool, string) {
		before := f.apiserverHistograms(b, policy).check[math.Inf(1)]
		probes++
		err := probe(probes)
		reached := f.apiserverHistograms(b, policy).check[math.Inf(1)] > before
		return err == nil && reached == on, fmt.Sprintf("reached %v, probe error %v", reached, err)
	})
}

// TestEveryNodeTaintPolicyIsBenchmarked fails when policiesFile holds a
// policy no benchmark here measures, or a benchmarked one is gone.
func TestEveryNodeTaintPolicyIsBenchmarked(t *testing.T) {
	var got []string
	for _, o := range gotool.File(t, policiesFile) {
		if o.GetKind() == "MutatingAdmissionPolicy" {
			got = append(got, o.GetName())
		}
	}
	slices.Sort(got)
	want := slices.Sorted(func(yield func(string) bool) {
		for name := range policyBenchmarked {
			if !yield(name) {
				return
			}
		}
	})
	if !slices.Equal(got, want) {
		t.Errorf("%s holds policies %v; the benchmarks measure %v", policiesFile, got, want)
	}
}
