//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// op runs one churn operation; an error (the API server is briefly gone
// while etcd is paused, a conflict) is counted, never fatal.
func (r *run) op(name string, err error) {
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
		r.count("churn errors")
		r.logf("%s: %v", name, err)
		return
	}
	r.count("churn: " + name)
}

// churnEIPPods creates and deletes pods with aws-pod-eip-controller's
// annotation (a PodElasticIP each, through the translator).
func (r *run) churnEIPPods(ctx context.Context) {
	rng := r.rng(1)
	n := 0
	for sleep(ctx, r.prof.PodChurn.Pick(rng)) {
		var pods corev1.PodList
		if err := r.c.List(ctx, &pods, client.InNamespace(nsEIP)); err != nil {
			r.op("list eip pods", err)
			continue
		}
		var live []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				live = append(live, p.Name)
			}
		}
		slices.Sort(live)
		if len(live) < r.prof.MaxEIPPods && (len(live) == 0 || rng.Float64() < 0.6) {
			n++
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nsEIP, Name: fmt.Sprintf("eip-%d", n),
				Annotations: map[string]string{translate.Type: translate.TypeAuto}},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
			r.op("create eip pod", r.c.Create(ctx, p))
			continue
		}
		victim := live[rng.IntN(len(live))]
		r.op("delete eip pod", r.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nsEIP, Name: victim}}, client.GracePeriodSeconds(0)))
	}
}

// churnAIANodes adds and removes nodes labelled for an anycast address,
// each on its own CVM instance.
func (r *run) churnAIANodes(ctx context.Context) {
	rng := r.rng(2)
	n := 0
	var nodes []string
	for sleep(ctx, r.prof.NodeChurn.Pick(rng)) {
		if len(nodes) < r.prof.MaxAIANodes && (len(nodes) == 0 || rng.Float64() < 0.6) && n < aiaInstances {
			n++
			name := fmt.Sprintf("aia-%d", n)
			err := r.cluster.AddNode(ctx, localcluster.NodeSpec{Name: name,
				Labels:     map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"},
				ProviderID: tencentProviderID(instanceID(n)),
				Taints:     []corev1.Taint{{Key: taintAIA, Effect: corev1.TaintEffectNoSchedule}}})
			if err == nil {
				nodes = append(nodes, name)
			}
			r.op("add aia node", err)
			continue
		}
		i := rng.IntN(len(nodes))
		err := r.cluster.DeleteNode(ctx, nodes[i])
		if err == nil {
			nodes = slices.Delete(nodes, i, i+1)
		}
		r.op("delete aia node", err)
	}
}

// scale sets a Deployment's replicas.
func (r *run) scale(ctx context.Context, ns, name string, replicas int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(replicas)
		return r.c.Update(ctx, d)
	})
}

// churnFloatIPs scales the float-IP Deployments (two plain, one sharing
// the chaos-shared group of 3 IPs).
func (r *run) churnFloatIPs(ctx context.Context) {
	rng := r.rng(3)
	for sleep(ctx, r.prof.ScaleChurn.Pick(rng)) {
		name := floatDeps[rng.IntN(len(floatDeps))]
		limit := r.prof.MaxFloatReplicas
		if name == "fip-shared" {
			limit = 3
		}
		r.op("scale float-IP deployment", r.scale(ctx, nsFloat, name, int32(rng.IntN(limit+1)))) //nolint:gosec // small
	}
}

// churnBurst scales the burst Deployments.
func (r *run) churnBurst(ctx context.Context) {
	rng := r.rng(4)
	names := slices.Sorted(maps.Keys(burstDeps))
	for sleep(ctx, r.prof.ScaleChurn.Pick(rng)) {
		name := names[rng.IntN(len(names))]
		r.op("scale burst deployment", r.scale(ctx, nsBurst, name, int32(rng.IntN(r.prof.MaxBurstReplicas+1)))) //nolint:gosec // small
	}
}

// churnIngress changes the IngressDaemonSet's template (a rollout) and
// joins and removes nodes it selects.
func (r *run) churnIngress(ctx context.Context) {
	rollouts, joins := r.rng(5), r.rng(6)
	nextRollout, nextJoin := r.prof.Rollout.Pick(rollouts), r.prof.NodeJoin.Pick(joins)
	version, n := 1, 0
	var joined []string
	for {
		wait := min(nextRollout, nextJoin)
		if !sleep(ctx, wait) {
			return
		}
		nextRollout -= wait
		nextJoin -= wait
		if nextRollout <= 0 {
			version++
			image := fmt.Sprintf("proxy:%d", version)
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				ids := &appsv1alpha1.IngressDaemonSet{}
				if err := r.c.Get(ctx, client.ObjectKey{Namespace: nsIngress, Name: idsName}, ids); err != nil {
					return err
				}
				ids.Spec.Template.Spec.Containers[0].Image = image
				return r.c.Update(ctx, ids)
			})
			r.op("ingress rollout", err)
			r.logf("IngressDaemonSet rollout to %s", image)
			nextRollout = r.prof.Rollout.Pick(rollouts)
		}
		if nextJoin <= 0 {
			r.ingressNodeChange(ctx, joins, &n, &joined)
			nextJoin = r.prof.NodeJoin.Pick(joins)
		}
	}
}

func (r *run) ingressNodeChange(ctx context.Context, rng *rand.Rand, n *int, joined *[]string) {
	if len(*joined) < r.prof.MaxIngressJoins && (len(*joined) == 0 || rng.Float64() < 0.7) {
		*n++
		name := fmt.Sprintf("ingress-%d", *n)
		err := r.cluster.AddNode(ctx, localcluster.NodeSpec{Name: name, Labels: map[string]string{labelIngress: "true"}})
		if err == nil {
			*joined = append(*joined, name)
		}
		r.op("ingress node join", err)
		r.logf("ingress node %s joined", name)
		return
	}
	name := (*joined)[0]
	err := r.cluster.DeleteNode(ctx, name)
	if err == nil {
		*joined = (*joined)[1:]
	}
	r.op("ingress node removal", err)
	r.logf("ingress node %s removed", name)
}

// ingressSampler watches the IngressDaemonSet throughout the run: in every
// sample, the nodes degraded beyond maxDegradedNodes. A node counts once it
// has been seen at full strength (a node that just joined is not degraded,
// it is new) and until it is removed.
type ingressSampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	worst   int
	sample  string
	samples int
	// mostDegraded is the most established nodes degraded at once, within
	// the budget or not: it shows the watcher saw the rollouts.
	mostDegraded int
}

func (r *run) startIngressSampler() *ingressSampler {
	ctx, cancel := context.WithCancel(r.ctx)
	s := &ingressSampler{cancel: cancel, done: make(chan struct{})}
	established := map[string]bool{}
	go func() {
		defer close(s.done)
		for sleep(ctx, 300*time.Millisecond) {
			nodes, pods, err := r.ingressView(ctx)
			if err != nil {
				continue
			}
			s.samples++
			bad := DegradedNodes(nodes, pods, perNode)
			var counted []string
			for _, n := range nodes {
				if !slices.Contains(bad, n) {
					established[n] = true
				}
			}
			for _, n := range bad {
				if established[n] {
					counted = append(counted, n)
				}
			}
			s.mostDegraded = max(s.mostDegraded, len(counted))
			if excess := len(counted) - idsBudget; excess > s.worst {
				s.worst = excess
				s.sample = fmt.Sprintf("degraded %s (budget %d)", strings.Join(counted, ", "), idsBudget)
				r.logf("IngressDaemonSet budget exceeded: %s", s.sample)
			}
		}
	}()
	return s
}

// stop ends sampling and returns the worst excess over the budget.
func (s *ingressSampler) stop() (int, string) {
	s.cancel()
	<-s.done
	return s.worst, fmt.Sprintf("%s; %d samples", s.sample, s.samples)
}

// counts reports the sampling for the end-of-run block.
func (s *ingressSampler) counts(r *run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts["IngressDaemonSet samples"] = s.samples
	r.counts["IngressDaemonSet most nodes degraded at once (budget 1)"] = s.mostDegraded
}
