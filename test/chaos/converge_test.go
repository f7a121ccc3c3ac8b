//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// state lists everything the invariants look at.
func (r *run) state(ctx context.Context) (State, error) {
	s := State{Cluster: clusterIdentity}
	raw := r.emulator(http.MethodGet, "/admin/state", "")
	if err := json.Unmarshal(raw, &s.Cloud); err != nil {
		return s, fmt.Errorf("decoding the emulator state: %w", err)
	}
	var peips networkingv1alpha1.PodElasticIPList
	var bindings networkingv1alpha1.AnycastIPBindingList
	var fips networkingv1alpha1.FloatIPList
	var nodes corev1.NodeList
	var pods corev1.PodList
	var deps appsv1.DeploymentList
	for _, l := range []struct {
		list client.ObjectList
		opts []client.ListOption
	}{{&peips, nil}, {&bindings, nil}, {&fips, nil}, {&nodes, nil}, {&pods, nil}, {&deps, []client.ListOption{client.InNamespace(nsBurst)}}} {
		if err := r.c.List(ctx, l.list, l.opts...); err != nil {
			return s, err
		}
	}
	s.PodElasticIPs, s.Bindings, s.FloatIPs, s.Nodes, s.Pods, s.BurstDeployments = peips.Items, bindings.Items, fips.Items, nodes.Items, pods.Items, deps.Items
	return s, nil
}

// steady reports whether the controllers have caught up with the churn:
// every annotated pod's (churned or probe) PodElasticIP and every labelled node's binding is
// Ready (and none is left for a pod or node that is gone), every workload
// is rolled out and ready.
func (r *run) steady(ctx context.Context, s State) (bool, string) {
	var waiting []string
	peips := map[string]networkingv1alpha1.PodElasticIP{}
	for _, p := range s.PodElasticIPs {
		peips[p.Namespace+"/"+p.Name] = p
	}
	eipPods := map[string]bool{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if (p.Namespace != nsEIP && p.Namespace != nsProbe) || !live(p) {
			continue
		}
		eipPods[p.Namespace+"/"+p.Name] = true
		if peip, ok := peips[p.Namespace+"/"+p.Name]; !ok || peip.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			waiting = append(waiting, "PodElasticIP "+p.Name)
		}
	}
	for k := range peips {
		if (strings.HasPrefix(k, nsEIP+"/") || strings.HasPrefix(k, nsProbe+"/")) && !eipPods[k] {
			waiting = append(waiting, "PodElasticIP of a deleted pod "+k)
		}
	}
	bindings := map[string]networkingv1alpha1.AnycastIPBinding{}
	for _, b := range s.Bindings {
		bindings[b.Spec.NodeName] = b
	}
	aiaNodes := map[string]bool{}
	for _, n := range s.Nodes {
		if n.Labels[networkingv1alpha1.LegacyLabelNeedAIAIP] != "true" {
			continue
		}
		aiaNodes[n.Name] = true
		if b, ok := bindings[n.Name]; !ok || b.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			waiting = append(waiting, "AnycastIPBinding "+n.Name)
		}
	}
	for node := range bindings {
		if !aiaNodes[node] {
			waiting = append(waiting, "AnycastIPBinding of a deleted node "+node)
		}
	}
	for _, ns := range []string{nsFloat, nsBurst} {
		if ok, state := r.deploymentsSteady(ctx, ns); !ok {
			waiting = append(waiting, state)
		}
	}
	if ok, state := r.ingressSteady(ctx); !ok {
		waiting = append(waiting, state)
	}
	return len(waiting) == 0, strings.Join(waiting, "; ")
}

// converge waits until the controllers are steady and every end-of-run
// invariant holds, and returns the figures: the invariants as they stand
// at that moment (or when the profile's bound ran out) and the time from
// the end of the last fault.
func (r *run) converge(lastFault time.Time) Figures {
	ctx := r.ctx
	deadline := time.Now().Add(r.prof.Converge)
	var (
		f     = Figures{Converged: -1}
		last  string
		round int
	)
	for {
		s, err := r.state(ctx)
		if err == nil {
			f.Violations = Check(s)
			ok, waiting := r.steady(ctx, s)
			if ok && f.Zero() {
				f.Converged = time.Since(lastFault)
				r.logf("converged %.1f s after the last fault", f.Converged.Seconds())
				return f
			}
			last = waiting
			if !f.Zero() {
				last += fmt.Sprintf("; invariants not yet at 0: %v", f.Failures())
			}
		} else {
			last = err.Error()
		}
		if round++; round%15 == 0 {
			r.logf("not converged yet: %s", last)
		}
		if time.Now().After(deadline) {
			r.logf("no convergence within %s of the last fault; last state: %s", r.prof.Converge, last)
			return f
		}
		if !sleep(ctx, 2*time.Second) {
			return f
		}
	}
}
