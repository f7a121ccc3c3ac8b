//go:build e2e

// Package nodetaint_test runs config/default's node-taint
// MutatingAdmissionPolicies on the local cluster (real kube-scheduler and
// kube-controller-manager, kwok nodes) with no manager at all: a node the
// AnycastIPBinding or NodeElasticIP selector picks is tainted from its first
// version by the API server itself, so pods that need such a node stay
// Pending for the taint even while the manager is down (the Node webhooks,
// failurePolicy Ignore, let it through untainted then).
package nodetaint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	aiadecide "github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	neipdecide "github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

const ns = "nodetaint-e2e"

func TestNodeTaintPoliciesWithoutTheManager(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cluster := localcluster.StartForTest(ctx, t, localcluster.Options{
		Scheme: scheme,
		Nodes:  []localcluster.NodeSpec{{Name: "plain-1", CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")}},
	})
	c := cluster.Client()
	installPolicies(ctx, t, c)
	if err := cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}

	for _, k := range []struct {
		node, label string
		taint       corev1.Taint
	}{
		{"aia-edge-1", networkingv1alpha1.LegacyLabelNeedAIAIP, aiadecide.Taint()},
		{"neip-edge-1", networkingv1alpha1.LabelWantElasticIP, neipdecide.Taint(networkingv1alpha1.DefaultNodeElasticIPTaintKey)},
	} {
		t.Run(k.node, func(t *testing.T) {
			awaitPolicy(ctx, t, c, k.label, k.taint)
			// A pod that needs the labelled node and tolerates nothing waits
			// from before the node exists.
			waiting := pod(k.node+"-before", k.label, nil)
			if err := c.Create(ctx, waiting); err != nil {
				t.Fatal(err)
			}
			first, err := cluster.WatchFirstNodeVersion(ctx, k.node)
			if err != nil {
				t.Fatal(err)
			}
			if err := cluster.AddNode(ctx, localcluster.NodeSpec{Name: k.node, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"),
				Labels: map[string]string{k.label: "true"}}); err != nil {
				t.Fatal(err)
			}
			n, err := first(eventually.Timeout)
			if err != nil {
				t.Fatal(err)
			}
			if !nodepatch.HasTaint(n, k.taint) {
				t.Fatalf("the node's first version has no %s taint: %v", k.taint.Key, n.Spec.Taints)
			}
			eventually.That(ctx, t, "the node Ready with only the policy's taint", func() (bool, string) {
				node := &corev1.Node{}
				if err := c.Get(ctx, client.ObjectKey{Name: k.node}, node); err != nil {
					return false, err.Error()
				}
				return nodeReady(node) && len(node.Spec.Taints) == 1 && nodepatch.HasTaint(node, k.taint), fmt.Sprintf("taints %v", node.Spec.Taints)
			})
			// The node is usable but for the taint: a pod that tolerates it
			// lands there.
			tolerating := pod(k.node+"-tolerating", k.label, []corev1.Toleration{{Key: k.taint.Key, Operator: corev1.TolerationOpExists}})
			if err := c.Create(ctx, tolerating); err != nil {
				t.Fatal(err)
			}
			eventually.That(ctx, t, "the tolerating pod on the node", func() (bool, string) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(tolerating), tolerating); err != nil {
					return false, err.Error()
				}
				return tolerating.Spec.NodeName == k.node, "node " + tolerating.Spec.NodeName
			})
			// A pod created now is scheduled against the Ready node, and the
			// taint alone keeps it off; neither it nor the one that waited is
			// ever placed.
			after := pod(k.node+"-after", k.label, nil)
			if err := c.Create(ctx, after); err != nil {
				t.Fatal(err)
			}
			eventually.That(ctx, t, "the new pod refused for the taint", func() (bool, string) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(after), after); err != nil {
					return false, err.Error()
				}
				for _, cond := range after.Status.Conditions {
					if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
						return strings.Contains(cond.Message, "untolerated taint"), cond.Message
					}
				}
				return false, "not tried yet"
			})
			for _, p := range []*corev1.Pod{waiting, after} {
				if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
					t.Fatal(err)
				}
				if p.Spec.NodeName != "" {
					t.Errorf("pod %s was placed on %s although it does not tolerate the taint", p.Name, p.Spec.NodeName)
				}
			}
		})
	}
}

// pod needs a node labelled label=true and tolerates tolerations.
func pod(name, label string, tolerations []corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{label: "true"},
			Tolerations:  tolerations,
			Containers:   []corev1.Container{{Name: "web", Image: "nginx"}},
		},
	}
}

// installPolicies creates what config/components/node-taint-policies adds
// to config/default.
func installPolicies(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	for _, o := range gotool.File(t, "config/components/node-taint-policies/policies.yaml") {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// awaitPolicy waits until a node object labelled label=true (no kwok node:
// kwok manages only the nodes AddNode creates) comes back with taint; the
// API server takes a few seconds to load a new policy.
func awaitPolicy(ctx context.Context, t *testing.T, c client.Client, label string, taint corev1.Taint) {
	t.Helper()
	i := 0
	eventually.That(ctx, t, "the policy in effect", func() (bool, string) {
		i++
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i), Labels: map[string]string{label: "true"}}}
		if err := c.Create(ctx, n); err != nil {
			return false, err.Error()
		}
		if err := c.Delete(ctx, n); err != nil {
			return false, err.Error()
		}
		return nodepatch.HasTaint(n, taint), fmt.Sprintf("probe taints %v", n.Spec.Taints)
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
