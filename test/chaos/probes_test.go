//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// The probes: objects the run creates to see a fault's effect.
const (
	nsProbe = "chaos-probe"
	// failoverProbe is an IngressDaemonSet that selects no node: its spec
	// changes cost nothing, and only the leader's controller writes its
	// status.observedGeneration.
	failoverProbe = "failover-probe"
	// probeInstances are CVM instances seeded for probe nodes, after the
	// aiaInstances of the AIA churn.
	probeInstances = 100
)

// bumpProbe changes the failover probe's spec (its template's image) and
// returns the generation that change made; it retries until ctx ends, as
// the API server may be briefly gone (etcd paused).
func (r *run) bumpProbe(ctx context.Context) (int64, error) {
	var gen int64
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ids := &appsv1alpha1.IngressDaemonSet{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: nsProbe, Name: failoverProbe}, ids); err != nil {
				return err
			}
			ids.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("probe:%d", ids.Generation+1)
			if err := r.c.Update(ctx, ids); err != nil {
				return err
			}
			gen = ids.Generation
			return nil
		})
		if err != nil {
			r.logf("changing the failover probe: %v", err)
		}
		return err == nil, nil
	})
	return gen, err
}

// probeObserved is the generation the failover probe's status describes.
func (r *run) probeObserved(ctx context.Context) (int64, error) {
	ids := &appsv1alpha1.IngressDaemonSet{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: nsProbe, Name: failoverProbe}, ids); err != nil {
		return 0, err
	}
	return ids.Status.ObservedGeneration, nil
}

// probeSet is what a fault window created: pods annotated for an Elastic
// IP (each a PodElasticIP, an EC2 allocation) and nodes labelled for an
// anycast address (each an AnycastIPBinding, a Tencent allocation).
type probeSet struct {
	pods, nodes []string
	// failed lists the probes the API server did not admit.
	failed []string
}

// startProbes creates n probe pods and n probe nodes for a window of kind.
func (r *run) startProbes(kind string, n int) *probeSet {
	ctx := r.ctx
	ps := &probeSet{}
	r.probeWindows++
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nsProbe, Name: fmt.Sprintf("%s-%d-%d", kind, r.probeWindows, i),
			Annotations: map[string]string{translate.Type: translate.TypeAuto}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
		if err := r.c.Create(ctx, pod); err != nil {
			ps.failed = append(ps.failed, fmt.Sprintf("probe pod %s not admitted: %v", pod.Name, err))
		} else {
			ps.pods = append(ps.pods, pod.Name)
		}

		if r.probeNodes >= probeInstances {
			r.problem("more than %d probe nodes: no CVM instance left for them", probeInstances)
			continue
		}
		r.probeNodes++
		name := fmt.Sprintf("%s-%d-%d", kind, r.probeWindows, i)
		err := r.cluster.AddNode(ctx, localcluster.NodeSpec{Name: name,
			Labels:     map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"},
			ProviderID: tencentProviderID(instanceID(aiaInstances + r.probeNodes)),
			Taints:     []corev1.Taint{{Key: taintAIA, Effect: corev1.TaintEffectNoSchedule}}})
		if err != nil {
			ps.failed = append(ps.failed, fmt.Sprintf("probe node %s not admitted: %v", name, err))
		} else {
			ps.nodes = append(ps.nodes, name)
		}
	}
	r.logf("probes for %s: pods %v, nodes %v", kind, ps.pods, ps.nodes)
	return ps
}

// stopProbes deletes a window's probes; their PodElasticIPs and
// AnycastIPBindings go with them, and convergence waits for that.
func (r *run) stopProbes(ps *probeSet) {
	for _, p := range ps.pods {
		r.op("delete probe pod", r.c.Delete(r.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nsProbe, Name: p}}, client.GracePeriodSeconds(0)))
	}
	for _, n := range ps.nodes {
		r.op("delete probe node", r.cluster.DeleteNode(r.ctx, n))
	}
}

// watchReasons samples the Ready reasons of the provider configs and the
// cloud resources every second from began: for at least on, then until
// every wanted sighting was made or ProofWait has passed. The resources of
// the window's probes are also seen as "probe <Kind>": created after the
// fault began, what they show is the fault's doing, not a condition left
// from before.
func (r *run) watchReasons(began time.Time, on time.Duration, ps *probeSet, want []string) Sightings {
	seen := Sightings{}
	for {
		r.sight(r.ctx, seen, ps)
		elapsed := time.Since(began)
		if elapsed >= on && (len(seen.Missing(want)) == 0 || elapsed >= r.prof.ProofWait) {
			return seen
		}
		if !sleep(r.ctx, time.Second) {
			return seen
		}
	}
}

// sight adds the Ready reasons the objects show now (a failed list adds
// nothing: the next sample tries again).
func (r *run) sight(ctx context.Context, seen Sightings, ps *probeSet) {
	var configs cloudv1alpha1.ClusterProviderConfigList
	if r.c.List(ctx, &configs) == nil {
		for _, c := range configs.Items {
			seen.Add("ClusterProviderConfig", c.Name, string(c.GetCondition(xpv2.TypeReady).Reason))
		}
	}
	var peips networkingv1alpha1.PodElasticIPList
	if r.c.List(ctx, &peips) == nil {
		for _, p := range peips.Items {
			reason := string(p.GetCondition(xpv2.TypeReady).Reason)
			seen.Add("PodElasticIP", p.Namespace+"/"+p.Name, reason)
			if p.Namespace == nsProbe && slices.Contains(ps.pods, p.Spec.PodName) {
				seen.Add("probe PodElasticIP", p.Spec.PodName, reason)
			}
		}
	}
	var bindings networkingv1alpha1.AnycastIPBindingList
	if r.c.List(ctx, &bindings) == nil {
		for _, b := range bindings.Items {
			reason := string(b.GetCondition(xpv2.TypeReady).Reason)
			seen.Add("AnycastIPBinding", b.Name, reason)
			if slices.Contains(ps.nodes, b.Spec.NodeName) {
				seen.Add("probe AnycastIPBinding", b.Spec.NodeName, reason)
			}
		}
	}
}
