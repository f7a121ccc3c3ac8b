package rbac_test

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/test/rbac"
)

// TestViolations proves each rule of the review catches what it names, so
// the checks on the real RBAC below can fail.
func TestViolations(t *testing.T) {
	rule := func(groups, resources, verbs []string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
	}
	core, get := []string{""}, []string{"get"}
	cases := map[string]struct {
		rule rbacv1.PolicyRule
		want string // "" : no violation
	}{
		"plain read":             {rule: rule(core, []string{"pods"}, []string{"get", "list", "watch"})},
		"named webhook patch":    {rule: rule([]string{"admissionregistration.k8s.io"}, []string{"mutatingwebhookconfigurations"}, []string{"get", "patch"}, "edgeplane-mutating")},
		"named bind":             {rule: rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, []string{"bind"}, "x")},
		"wildcard verb":          {rule: rule(core, []string{"pods"}, []string{"*"}), want: "wildcard in verbs"},
		"wildcard resource":      {rule: rule(core, []string{"*"}, get), want: "wildcard in resources"},
		"wildcard group":         {rule: rule([]string{"*"}, []string{"pods"}, get), want: "wildcard in apiGroups"},
		"escalate":               {rule: rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, []string{"escalate"}, "x"), want: "verb escalate"},
		"impersonate":            {rule: rule(core, []string{"serviceaccounts"}, []string{"impersonate"}), want: "verb impersonate"},
		"unnamed mutating patch": {rule: rule([]string{"admissionregistration.k8s.io"}, []string{"mutatingwebhookconfigurations"}, []string{"patch"}), want: "on mutatingwebhookconfigurations without resourceNames"},
		"unnamed validating get": {rule: rule([]string{"admissionregistration.k8s.io"}, []string{"validatingwebhookconfigurations"}, get), want: "on validatingwebhookconfigurations without resourceNames"},
		"role create":            {rule: rule([]string{"rbac.authorization.k8s.io"}, []string{"roles", "rolebindings"}, []string{"create"}), want: "create on roles"},
		"cluster role update":    {rule: rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, []string{"update"}, "x"), want: "update on clusterroles"},
		"unnamed bind":           {rule: rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, []string{"bind"}), want: "bind on [clusterroles] without resourceNames"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rbac.Violations("r", []rbacv1.PolicyRule{tc.rule})
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
				t.Errorf("violations %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// checkRoles runs the review over every Role and ClusterRole in objs and
// returns how many it checked.
func checkRoles(t *testing.T, source string, objs []*unstructured.Unstructured) int {
	t.Helper()
	roles := ofKind(objs, "Role", "ClusterRole")
	for _, u := range roles {
		var rules []rbacv1.PolicyRule
		if u.GetKind() == "Role" {
			rules = convert[rbacv1.Role](t, u).Rules
		} else {
			rules = convert[rbacv1.ClusterRole](t, u).Rules
		}
		for _, v := range rbac.Violations(source+": "+u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName(), rules) {
			t.Error(v)
		}
	}
	return len(roles)
}

// TestGeneratedRBACIsLeastPrivilege reviews every Role and ClusterRole the
// repository ships: config/rbac file by file, the kustomize install, and the
// chart rendered with several value sets.
func TestGeneratedRBACIsLeastPrivilege(t *testing.T) {
	if n := checkRoles(t, "config/rbac", readFiles(t, "config/rbac/*.yaml")); n < 6 {
		t.Errorf("config/rbac: reviewed %d roles, want the manager's, credentials, health-check, leader-election and metrics roles", n)
	}
	if n := checkRoles(t, "config/default", kustomizeBuild(t, "config/default")); n < 6 {
		t.Errorf("config/default: reviewed %d roles", n)
	}
	for name, set := range map[string][]string{
		"defaults":                {},
		"credential namespaces":   {"credentialNamespaces={team-a,team-b}", "webhook.certMode=cert-manager"},
		"no leader election, few": {"manager.leaderElection.enabled=false", "manager.controllers={*,-burstpolicy}"},
	} {
		t.Run(name, func(t *testing.T) {
			if n := checkRoles(t, "chart "+name, helmTemplate(t, "prod", "edge", set...)); n < 6 {
				t.Errorf("reviewed %d roles", n)
			}
		})
	}
}

// namedGrants maps each resource a named grant is about to the names it
// grants, over every Role and ClusterRole bound to the manager in objs.
func namedGrants(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, u := range ofKind(objs, "Role", "ClusterRole") {
		var rules []rbacv1.PolicyRule
		if u.GetKind() == "Role" {
			rules = convert[rbacv1.Role](t, u).Rules
		} else {
			rules = convert[rbacv1.ClusterRole](t, u).Rules
		}
		for _, r := range rules {
			for _, res := range r.Resources {
				out[res] = append(out[res], r.ResourceNames...)
			}
		}
	}
	return out
}

// TestNamedGrantsNameRealObjects: a grant restricted by resourceNames is
// only useful if it names the object the manager touches. In the chart (a
// release that is not named edgeplane, in its own namespace) and in
// config/default, the names must be the webhook configurations installed
// with it and the certificate Secret the manager's flags name.
func TestNamedGrantsNameRealObjects(t *testing.T) {
	chart := helmTemplate(t, "prod", "edge")
	args := managerArgs(t, chart)
	def := manager.DefaultOptions()
	for name, tc := range map[string]struct {
		objs []*unstructured.Unstructured
		want map[string]string // resource -> the object's name
	}{
		"chart": {objs: chart, want: map[string]string{
			"mutatingwebhookconfigurations":   args["mutating-webhook-configuration"],
			"validatingwebhookconfigurations": args["validating-webhook-configuration"],
			"secrets":                         args["webhook-secret-name"],
		}},
		"config/default": {objs: kustomizeBuild(t, "config/default"), want: map[string]string{
			"mutatingwebhookconfigurations":   def.MutatingWebhookConfig,
			"validatingwebhookconfigurations": def.ValidatingWebhookConfig,
			"secrets":                         def.WebhookSecretName,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			grants := namedGrants(t, tc.objs)
			installed := map[string]bool{}
			for _, o := range tc.objs {
				installed[o.GetKind()+"/"+o.GetName()] = true
			}
			for res, obj := range tc.want {
				if obj == "" {
					t.Errorf("%s: the manager names no object", res)
					continue
				}
				if !slices.Equal(grants[res], []string{obj}) {
					t.Errorf("%s: named grants %q, want exactly [%s]", res, grants[res], obj)
				}
			}
			for kind, res := range map[string]string{
				"MutatingWebhookConfiguration":   "mutatingwebhookconfigurations",
				"ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
			} {
				if !installed[kind+"/"+tc.want[res]] {
					t.Errorf("the grant on %s names %s, which is not installed", res, tc.want[res])
				}
			}
		})
	}
}

// managerArgs are the chart's manager flags, name to value.
func managerArgs(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range ofKind(objs, "Deployment") {
		for _, c := range convert[appsv1.Deployment](t, u).Spec.Template.Spec.Containers {
			if c.Name != "manager" {
				continue
			}
			for _, a := range c.Args {
				k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				out[k] = v
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the chart renders no manager container")
	}
	return out
}

// webhooks returns every webhook of the configurations in objs.
func webhooks(t *testing.T, objs []*unstructured.Unstructured) []rbac.Webhook {
	t.Helper()
	var out []rbac.Webhook
	for _, u := range ofKind(objs, "MutatingWebhookConfiguration") {
		for _, w := range convert[admissionregistrationv1.MutatingWebhookConfiguration](t, u).Webhooks {
			out = append(out, rbac.Webhook{Name: w.Name, Rules: w.Rules, NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, TimeoutSeconds: w.TimeoutSeconds})
		}
	}
	for _, u := range ofKind(objs, "ValidatingWebhookConfiguration") {
		for _, w := range convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, u).Webhooks {
			out = append(out, rbac.Webhook{Name: w.Name, Rules: w.Rules, NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, TimeoutSeconds: w.TimeoutSeconds})
		}
	}
	return out
}

// admissionPolicies returns the MutatingAdmissionPolicies in objs.
func admissionPolicies(t *testing.T, objs []*unstructured.Unstructured) []rbac.AdmissionPolicy {
	t.Helper()
	var out []rbac.AdmissionPolicy
	for _, u := range ofKind(objs, "MutatingAdmissionPolicy") {
		p := convert[admissionregistrationv1.MutatingAdmissionPolicy](t, u)
		mc := p.Spec.MatchConstraints
		if mc == nil {
			mc = &admissionregistrationv1.MatchResources{}
		}
		out = append(out, rbac.AdmissionPolicy{Name: p.Name, Rules: mc.ResourceRules, NamespaceSelector: mc.NamespaceSelector, ObjectSelector: mc.ObjectSelector})
	}
	return out
}

// TestWebhookScope checks every installed webhook and admission policy:
// config/webhook's generated configurations (manager namespace
// edgeplane-system), the kustomize install (node taints by policy), and
// the chart in a namespace of its own, with the node webhooks (what helm
// template renders without a cluster) and with the node-taint policies.
func TestWebhookScope(t *testing.T) {
	for name, tc := range map[string]struct {
		objs      []*unstructured.Unstructured
		managerNS string
	}{
		"config/webhook":           {objs: readFiles(t, "config/webhook/manifests.yaml"), managerNS: "edgeplane-system"},
		"config/default":           {objs: kustomizeBuild(t, "config/default"), managerNS: "edgeplane-system"},
		"chart":                    {objs: helmTemplate(t, "prod", "edge"), managerNS: "edge"},
		"chart, selectors":         {objs: helmTemplate(t, "edgeplane", "edgeplane-system", "anycastIP.nodeSelector.edge=yes"), managerNS: "edgeplane-system"},
		"chart, node-taint policy": {objs: helmTemplate(t, "prod", "edge", "webhook.nodeTaints=policy", "anycastIP.nodeSelector.edge=yes"), managerNS: "edge"},
	} {
		t.Run(name, func(t *testing.T) {
			ws := webhooks(t, tc.objs)
			ps := admissionPolicies(t, tc.objs)
			// The pod and FloatIPPool webhooks, and each kind's node taint
			// by its webhook or its policy.
			if len(ws) < 2 || len(ws)+len(ps) < 4 {
				t.Fatalf("found %d webhooks and %d admission policies, want the pod and FloatIPPool webhooks and two node taints", len(ws), len(ps))
			}
			for _, w := range ws {
				for _, v := range rbac.WebhookViolations(w, tc.managerNS) {
					t.Error(v)
				}
			}
			for _, p := range ps {
				for _, v := range rbac.PolicyViolations(p, tc.managerNS) {
					t.Error(v)
				}
			}
		})
	}
}

// TestWebhookViolations proves the scope rules catch what they name.
func TestWebhookViolations(t *testing.T) {
	pods := []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{Resources: []string{"pods"}}}}
	nodes := []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{Resources: []string{"nodes"}}}}
	three, five := int32(3), int32(5)
	skip := func(ns ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: ns}}}
	}
	cases := map[string]struct {
		w    rbac.Webhook
		want string
	}{
		"scoped pods":         {w: rbac.Webhook{Name: "p", Rules: pods, TimeoutSeconds: &three, NamespaceSelector: skip("kube-system", "mgr")}},
		"selected nodes":      {w: rbac.Webhook{Name: "n", Rules: nodes, TimeoutSeconds: &three, ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
		"slow":                {w: rbac.Webhook{Name: "p", Rules: pods, TimeoutSeconds: &five, NamespaceSelector: skip("kube-system", "mgr")}, want: "timeoutSeconds 5"},
		"default timeout":     {w: rbac.Webhook{Name: "p", Rules: pods, NamespaceSelector: skip("kube-system", "mgr")}, want: "timeoutSeconds unset"},
		"every pod":           {w: rbac.Webhook{Name: "p", Rules: pods, TimeoutSeconds: &three}, want: "sees pods in namespace kube-system"},
		"manager's own pods":  {w: rbac.Webhook{Name: "p", Rules: pods, TimeoutSeconds: &three, NamespaceSelector: skip("kube-system")}, want: "sees pods in namespace mgr"},
		"every node":          {w: rbac.Webhook{Name: "n", Rules: nodes, TimeoutSeconds: &three}, want: "sees every node"},
		"empty node selector": {w: rbac.Webhook{Name: "n", Rules: nodes, TimeoutSeconds: &three, ObjectSelector: &metav1.LabelSelector{}}, want: "sees every node"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rbac.WebhookViolations(tc.w, "mgr")
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
				t.Errorf("violations %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// TestPolicyViolations proves the scope rules reach admission policies.
func TestPolicyViolations(t *testing.T) {
	rules := func(resource string) []admissionregistrationv1.NamedRuleWithOperations {
		return []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Resources: []string{resource}}}}}
	}
	for name, tc := range map[string]struct {
		p    rbac.AdmissionPolicy
		want string
	}{
		"selected nodes": {p: rbac.AdmissionPolicy{Name: "n", Rules: rules("nodes"), ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
		"every node":     {p: rbac.AdmissionPolicy{Name: "n", Rules: rules("nodes")}, want: "sees every node"},
		"every pod":      {p: rbac.AdmissionPolicy{Name: "p", Rules: rules("pods")}, want: "sees pods in namespace kube-system"},
	} {
		t.Run(name, func(t *testing.T) {
			got := rbac.PolicyViolations(tc.p, "mgr")
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
				t.Errorf("violations %q, want one containing %q", got, tc.want)
			}
		})
	}
}
