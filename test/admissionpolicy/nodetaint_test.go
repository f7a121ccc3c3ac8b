// Package admissionpolicy_test checks the chart's MutatingAdmissionPolicies
// (webhook.nodeTaints=policy) against the Node webhooks they replace: every
// case of both kinds goes through a real API server with the rendered
// policies installed, and the taint it stores must be the one the webhook's
// decision (decide.NeedsTaintAtAdmission of the kind) gives for the same
// request.
package admissionpolicy_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	aiadecide "github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	neipdecide "github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// The NodeElasticIP selector and taint key are not the chart's defaults, so
// the test also shows that the policy follows the values.
const (
	neipTaintKey = "example.com/eip-pending"
	neipPoolKey  = "example.com/pool"
)

var neipSelector = map[string]string{"networking.edgeplane.io/want-elastic-ip": "true", neipPoolKey: "edge"}

// kind is one policy and the webhook decision it must agree with.
type kind struct {
	name   string
	taint  corev1.Taint
	decide func(old, node *corev1.Node) bool
	// selected is a node the kind's selector picks.
	selected map[string]string
}

func kinds() []kind {
	aiaSel := labels.SelectorFromSet(labels.Set{"tke.cloud.tencent.com/need-aia-ip": "true"})
	neipSel := labels.SelectorFromSet(neipSelector)
	return []kind{
		{
			name: "anycastipbinding", taint: aiadecide.Taint(),
			decide:   func(_, node *corev1.Node) bool { return aiadecide.NeedsTaintAtAdmission(node, aiaSel) },
			selected: map[string]string{"tke.cloud.tencent.com/need-aia-ip": "true"},
		},
		{
			name: "nodeelasticip", taint: neipdecide.Taint(neipTaintKey),
			decide: func(old, node *corev1.Node) bool {
				return neipdecide.NeedsTaintAtAdmission(old, node, neipSel, neipTaintKey)
			},
			selected: neipSelector,
		},
	}
}

// renderPolicies renders the chart's node-taint policies. It runs before the
// test's context starts, so rendering never counts against the API calls'
// time budget.
func renderPolicies(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return gotool.Objects(t, "helm", "template", "edgeplane", "charts/edgeplane",
		"--show-only", "templates/node-taint-policies.yaml", "--set", "webhook.nodeTaints=policy",
		"--set-json", fmt.Sprintf(`nodeElasticIP.nodeSelector={%q:"edge"}`, neipPoolKey),
		"--set", "nodeElasticIP.taintKey="+neipTaintKey)
}

// installPolicies creates the rendered policies and their bindings.
func installPolicies(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	t.Helper()
	var policies int
	for _, o := range objs {
		if o.GetKind() == "MutatingAdmissionPolicy" {
			policies++
		}
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if policies != 2 {
		t.Fatalf("the chart rendered %d policies, want 2", policies)
	}
}

// awaitPolicies waits until each kind's policy taints a node it selects: a
// new policy takes the API server a few seconds to load.
func awaitPolicies(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, k := range kinds() {
		i := 0
		eventually.That(ctx, t, "the "+k.name+" policy tainting a selected node", func() (bool, string) {
			i++
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%s-%d", k.name, i), Labels: k.selected}}
			if err := env.Client.Create(ctx, n); err != nil {
				return false, err.Error()
			}
			if err := env.Client.Delete(ctx, n); err != nil {
				return false, err.Error()
			}
			return nodepatch.HasTaint(n, k.taint), fmt.Sprintf("probe taints %v", n.Spec.Taints)
		})
	}
}

// nodeCase is a request: create (before nil) or update from what the API
// server stored for before.
type nodeCase struct {
	name   string
	before *corev1.Node
	node   func(old *corev1.Node) *corev1.Node
}

func TestPoliciesDecideAsTheWebhooks(t *testing.T) {
	objs := renderPolicies(t)
	ctx := testenv.Context(t)
	installPolicies(t, ctx, objs)
	awaitPolicies(t, ctx)

	address := map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-abc"}
	for _, k := range kinds() {
		other := corev1.Taint{Key: "example.com/other", Value: "x", Effect: corev1.TaintEffectNoExecute}
		sameKeyOtherEffect := k.taint
		sameKeyOtherEffect.Effect = corev1.TaintEffectNoExecute
		withLabel := func(m map[string]string, key, value string) map[string]string {
			out := map[string]string{key: value}
			for k, v := range m {
				out[k] = v
			}
			return out
		}
		someOfSelector := map[string]string{}
		for key, v := range k.selected {
			someOfSelector[key] = v
			break
		}
		node := func(l, a map[string]string, taints ...corev1.Taint) *corev1.Node {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: l, Annotations: a}, Spec: corev1.NodeSpec{Taints: taints}}
		}
		create := func(n *corev1.Node) func(*corev1.Node) *corev1.Node {
			return func(*corev1.Node) *corev1.Node { return n }
		}
		edit := func(f func(n *corev1.Node)) func(*corev1.Node) *corev1.Node {
			return func(old *corev1.Node) *corev1.Node { n := old.DeepCopy(); f(n); return n }
		}
		untaint := func(n *corev1.Node) {
			n.Spec.Taints = nil
		}
		cases := []nodeCase{
			{name: "selected", node: create(node(k.selected, nil))},
			{name: "selected, with other taints", node: create(node(k.selected, nil, other, sameKeyOtherEffect))},
			{name: "selected, tainted already", node: create(node(k.selected, nil, k.taint))},
			{name: "selected, anycast address recorded", node: create(node(k.selected, address))},
			{name: "selected, anycast address annotation empty", node: create(node(k.selected, map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: ""}))},
			{name: "selected, Elastic IP label", node: create(node(withLabel(k.selected, networkingv1alpha1.LabelNodeElasticIP, "203.0.113.7"), nil))},
			{name: "selected, Elastic IP label empty", node: create(node(withLabel(k.selected, networkingv1alpha1.LabelNodeElasticIP, ""), nil))},
			{name: "part of the selector", node: create(node(someOfSelector, nil))},
			{name: "selector label, another value", node: create(node(withLabel(k.selected, "tke.cloud.tencent.com/need-aia-ip", "false"), nil))},
			{name: "not selected", node: create(node(map[string]string{"a": "b"}, nil))},
			{name: "labelled for the selector", before: node(map[string]string{"a": "b"}, nil),
				node: edit(func(n *corev1.Node) { n.Labels = withLabel(k.selected, "a", "b") })},
			{name: "selected, untainted without an address", before: node(k.selected, nil), node: edit(untaint)},
			{name: "selected, untainted with the address recorded", before: node(k.selected, nil),
				node: edit(func(n *corev1.Node) { untaint(n); n.Annotations = address })},
			{name: "selected, the address record removed", before: node(k.selected, address),
				node: edit(func(n *corev1.Node) { n.Annotations = nil })},
			{name: "selected, the Elastic IP label removed", before: node(withLabel(k.selected, networkingv1alpha1.LabelNodeElasticIP, "203.0.113.7"), nil),
				node: edit(func(n *corev1.Node) { delete(n.Labels, networkingv1alpha1.LabelNodeElasticIP) })},
			{name: "selector label removed", before: node(k.selected, nil),
				node: edit(func(n *corev1.Node) { untaint(n); n.Labels = map[string]string{"a": "b"} })},
			{name: "another label added", before: node(k.selected, address),
				node: edit(func(n *corev1.Node) { n.Labels["c"] = "d" })},
		}
		for i, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				name := fmt.Sprintf("%s-%d", k.name, i)
				var old *corev1.Node
				if c.before != nil {
					old = c.before.DeepCopy()
					old.Name = name
					if err := env.Client.Create(ctx, old); err != nil {
						t.Fatal(err)
					}
				}
				req := c.node(old)
				req.Name = name
				want := nodepatch.HasTaint(req, k.taint) || k.decide(old, req)
				stored := req.DeepCopy()
				var err error
				if old == nil {
					err = env.Client.Create(ctx, stored)
				} else {
					err = env.Client.Update(ctx, stored)
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), stored) })
				if got := nodepatch.HasTaint(stored, k.taint); got != want {
					t.Errorf("stored taints %v: tainted %v, the webhook's decision %v", stored.Spec.Taints, got, want)
				}
				if n := countTaint(stored, k.taint); n > 1 {
					t.Errorf("the taint is there %d times: %v", n, stored.Spec.Taints)
				}
				for _, t0 := range req.Spec.Taints {
					if !nodepatch.HasTaint(stored, t0) {
						t.Errorf("the request's taint %v was lost: %v", t0, stored.Spec.Taints)
					}
				}
			})
		}
	}
}

func countTaint(n *corev1.Node, t corev1.Taint) int {
	c := 0
	for _, x := range n.Spec.Taints {
		if x.MatchTaint(&t) {
			c++
		}
	}
	return c
}
