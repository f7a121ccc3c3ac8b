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

	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/test/rbac"
)

// TestViolations proves each rule of the review catches what it names, so
// the checks on the real RBAC below can fail: every escalation path of
// Kubernetes' RBAC good practices, and the exemptions only as narrow as
// they are written.
func TestViolations(t *testing.T) {
	rule := func(groups, resources, verbs []string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
	}
	core, apps, batch, rbacGroup := []string{""}, []string{"apps"}, []string{"batch"}, []string{"rbac.authorization.k8s.io"}
	admission, certs := []string{"admissionregistration.k8s.io"}, []string{"certificates.k8s.io"}
	get := []string{"get"}
	wide := func(r rbacv1.PolicyRule) rbac.Role {
		return rbac.Role{Name: "r", ClusterWide: true, Rules: []rbacv1.PolicyRule{r}}
	}
	inNamespace := func(r rbacv1.PolicyRule) rbac.Role { return rbac.Role{Name: "r", Rules: []rbacv1.PolicyRule{r}} }
	manager := func(r rbacv1.PolicyRule) rbac.Role {
		return rbac.Role{Name: "r", ClusterWide: true, Rules: []rbacv1.PolicyRule{r}, Exempt: rbac.ManagerExemptions}
	}
	cases := map[string]struct {
		role rbac.Role
		want string // "" : no violation
	}{
		"plain read":                  {role: wide(rule(core, []string{"pods"}, []string{"get", "list", "watch"}))},
		"named webhook patch":         {role: wide(rule(admission, []string{"mutatingwebhookconfigurations"}, []string{"get", "patch"}, "edgeplane-mutating"))},
		"secrets read in a namespace": {role: inNamespace(rule(core, []string{"secrets"}, []string{"get"}))},
		"workloads in a namespace":    {role: inNamespace(rule(apps, []string{"daemonsets"}, []string{"create", "patch", "delete"}))},
		"workload reads":              {role: wide(rule(apps, []string{"deployments", "daemonsets", "statefulsets"}, []string{"get", "list", "watch", "delete"}))},
		"the manager's Deployments":   {role: manager(rule(apps, []string{"deployments"}, []string{"create", "patch", "delete", "get"}))},
		"the manager's pod patches":   {role: manager(rule(core, []string{"pods"}, []string{"patch"}))},

		"wildcard verb":          {role: wide(rule(core, []string{"pods"}, []string{"*"})), want: "wildcard in verbs"},
		"wildcard resource":      {role: wide(rule(core, []string{"*"}, get)), want: "wildcard in resources"},
		"wildcard group":         {role: wide(rule([]string{"*"}, []string{"pods"}, get)), want: "wildcard in apiGroups"},
		"wildcard URL":           {role: wide(rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics*"}, Verbs: get}), want: "wildcard in nonResourceURLs"},
		"escalate":               {role: wide(rule(rbacGroup, []string{"clusterroles"}, []string{"escalate"}, "x")), want: "verb escalate"},
		"named bind":             {role: wide(rule(rbacGroup, []string{"clusterroles"}, []string{"bind"}, "edgeplane-healthcheck")), want: "verb bind"},
		"unnamed bind":           {role: wide(rule(rbacGroup, []string{"clusterroles"}, []string{"bind"})), want: "verb bind"},
		"impersonate":            {role: wide(rule(core, []string{"serviceaccounts"}, []string{"impersonate"})), want: "verb impersonate"},
		"unnamed mutating patch": {role: wide(rule(admission, []string{"mutatingwebhookconfigurations"}, []string{"patch"})), want: "patch on mutatingwebhookconfigurations without resourceNames"},
		"unnamed validating get": {role: wide(rule(admission, []string{"validatingwebhookconfigurations"}, get)), want: "get on validatingwebhookconfigurations without resourceNames"},
		"webhook create":         {role: wide(rule(admission, []string{"validatingwebhookconfigurations"}, []string{"create"}, "x")), want: "control of admission: create on validatingwebhookconfigurations"},
		"admission policy write": {role: wide(rule(admission, []string{"validatingadmissionpolicybindings"}, []string{"update"})), want: "update on validatingadmissionpolicybindings without resourceNames"},
		"role create":            {role: wide(rule(rbacGroup, []string{"roles"}, []string{"create"})), want: "role writes: create on roles"},
		"cluster role update":    {role: wide(rule(rbacGroup, []string{"clusterroles"}, []string{"update"}, "x")), want: "update on clusterroles"},
		"role binding create":    {role: inNamespace(rule(rbacGroup, []string{"rolebindings"}, []string{"create"})), want: "role binding writes: create on rolebindings"},
		"role binding delete":    {role: wide(rule(rbacGroup, []string{"rolebindings"}, []string{"delete"})), want: "role binding writes: delete on rolebindings"},
		"cluster role binding":   {role: wide(rule(rbacGroup, []string{"clusterrolebindings"}, []string{"create"})), want: "role binding writes: create on clusterrolebindings"},
		"named binding patch":    {role: wide(rule(rbacGroup, []string{"rolebindings"}, []string{"patch"}, "x")), want: "role binding writes: patch on rolebindings"},
		"secrets list":           {role: wide(rule(core, []string{"secrets"}, []string{"list"})), want: "listing secrets: list on secrets cluster-wide"},
		"secrets watch":          {role: wide(rule(core, []string{"secrets"}, []string{"watch"})), want: "listing secrets: watch on secrets cluster-wide"},
		"secrets get":            {role: wide(rule(core, []string{"secrets"}, get)), want: "listing secrets: get on secrets cluster-wide"},
		"pods create":            {role: wide(rule(core, []string{"pods"}, []string{"create"})), want: "workload creation: create on pods cluster-wide"},
		"pods update":            {role: wide(rule(core, []string{"pods"}, []string{"update"})), want: "workload creation: update on pods cluster-wide"},
		"deployments create":     {role: wide(rule(apps, []string{"deployments"}, []string{"create"})), want: "workload creation: create on deployments cluster-wide"},
		"daemonsets patch":       {role: wide(rule(apps, []string{"daemonsets"}, []string{"patch"})), want: "workload creation: patch on daemonsets cluster-wide"},
		"statefulsets create":    {role: wide(rule(apps, []string{"statefulsets"}, []string{"create"})), want: "workload creation: create on statefulsets cluster-wide"},
		"replicasets create":     {role: wide(rule(apps, []string{"replicasets"}, []string{"create"})), want: "workload creation: create on replicasets cluster-wide"},
		"replication controllers": {role: wide(rule(core, []string{"replicationcontrollers"}, []string{"create"})),
			want: "workload creation: create on replicationcontrollers cluster-wide"},
		"jobs create":          {role: wide(rule(batch, []string{"jobs"}, []string{"create"})), want: "workload creation: create on jobs cluster-wide"},
		"cronjobs create":      {role: wide(rule(batch, []string{"cronjobs"}, []string{"create"})), want: "workload creation: create on cronjobs cluster-wide"},
		"pods exec":            {role: inNamespace(rule(core, []string{"pods/exec"}, []string{"create"})), want: "access to running pods: create on pods/exec"},
		"ephemeral containers": {role: inNamespace(rule(core, []string{"pods/ephemeralcontainers"}, []string{"patch"})), want: "access to running pods: patch on pods/ephemeralcontainers"},
		"persistent volumes":   {role: wide(rule(core, []string{"persistentvolumes"}, []string{"create"})), want: "persistent volume creation: create on persistentvolumes"},
		"nodes/proxy get":      {role: wide(rule(core, []string{"nodes/proxy"}, get)), want: "access to the nodes/proxy subresource: get on nodes/proxy"},
		"token request":        {role: inNamespace(rule(core, []string{"serviceaccounts/token"}, []string{"create"})), want: "token request: create on serviceaccounts/token"},
		"CSR approval":         {role: wide(rule(certs, []string{"certificatesigningrequests/approval"}, []string{"update"})), want: "certificate signing request approval: update on certificatesigningrequests/approval"},
		"signer approve":       {role: wide(rule(certs, []string{"signers"}, []string{"approve"}, "kubernetes.io/kube-apiserver-client")), want: "certificate issuing: approve on signers"},
		"namespace patch":      {role: wide(rule(core, []string{"namespaces"}, []string{"patch"})), want: "namespace modification: patch on namespaces"},
		"namespace update":     {role: wide(rule(core, []string{"namespaces"}, []string{"update"})), want: "namespace modification: update on namespaces"},

		// Exemptions hold for the manager's roles, as written, and no further.
		"Deployments, not the manager's": {role: wide(rule(apps, []string{"deployments"}, []string{"create"})), want: "create on deployments cluster-wide"},
		"the manager's Deployment update": {role: manager(rule(apps, []string{"deployments"}, []string{"update"})),
			want: "workload creation: update on deployments cluster-wide"},
		"the manager's DaemonSets cluster-wide": {role: manager(rule(apps, []string{"daemonsets"}, []string{"create"})),
			want: "workload creation: create on daemonsets cluster-wide"},
		"the manager's pod creation": {role: manager(rule(core, []string{"pods"}, []string{"create"})), want: "workload creation: create on pods cluster-wide"},
		"the manager's Deployments by wildcard": {role: manager(rule(apps, []string{"*"}, []string{"create"})),
			want: "workload creation: create on * cluster-wide"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rbac.Violations(tc.role)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
				t.Errorf("violations %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// TestReviewScopesAndBindings: a role's scope is its bindings', the
// manager's exemptions reach only roles bound to the manager alone, and a
// binding to a role outside the review (cluster-admin) is refused.
func TestReviewScopesAndBindings(t *testing.T) {
	mgr := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "mgr", Namespace: "sys"}
	other := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "sys"}
	secrets := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	deploy := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "deploy"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}}}}
	rb := func(ns, role string, s ...rbacv1.Subject) rbacv1.RoleBinding {
		return rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: role}, Subjects: s}
	}
	crb := func(role string, s ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: role}, Subjects: s}
	}
	for name, tc := range map[string]struct {
		objs rbac.RBAC
		want string
	}{
		"secrets read bound per namespace": {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{secrets}, RoleBindings: []rbacv1.RoleBinding{rb("a", "secrets", mgr)}}},
		"secrets read bound cluster-wide": {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{secrets},
			RoleBindings: []rbacv1.RoleBinding{rb("a", "secrets", mgr)}, ClusterRoleBindings: []rbacv1.ClusterRoleBinding{crb("secrets", mgr)}},
			want: "listing secrets: get on secrets cluster-wide"},
		"secrets read bound nowhere": {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{secrets}}, want: "listing secrets: get on secrets cluster-wide"},
		"the manager's Deployments":  {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{deploy}, ClusterRoleBindings: []rbacv1.ClusterRoleBinding{crb("deploy", mgr)}}},
		"the manager's, shared":      {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{deploy}, ClusterRoleBindings: []rbacv1.ClusterRoleBinding{crb("deploy", mgr, other)}}, want: "create on deployments cluster-wide"},
		"another account's":          {objs: rbac.RBAC{ClusterRoles: []rbacv1.ClusterRole{deploy}, ClusterRoleBindings: []rbacv1.ClusterRoleBinding{crb("deploy", other)}}, want: "create on deployments cluster-wide"},
		"a binding to cluster-admin": {objs: rbac.RBAC{ClusterRoleBindings: []rbacv1.ClusterRoleBinding{crb("cluster-admin", mgr)}}, want: "binds ClusterRole cluster-admin, which is not reviewed"},
		"a role binding to edit":     {objs: rbac.RBAC{RoleBindings: []rbacv1.RoleBinding{rb("a", "edit", mgr)}}, want: "binds ClusterRole edit, which is not reviewed"},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := rbac.Review("src", tc.objs, mgr)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
				t.Errorf("violations %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// review runs rbac.Review over the RBAC objects of objs, for the manager's
// ServiceAccount manager, and returns how many roles it checked.
func review(t *testing.T, source string, objs []*unstructured.Unstructured, manager rbacv1.Subject) int {
	t.Helper()
	var set rbac.RBAC
	for _, u := range objs {
		switch u.GetKind() {
		case "Role":
			set.Roles = append(set.Roles, *convert[rbacv1.Role](t, u))
		case "ClusterRole":
			set.ClusterRoles = append(set.ClusterRoles, *convert[rbacv1.ClusterRole](t, u))
		case "RoleBinding":
			set.RoleBindings = append(set.RoleBindings, *convert[rbacv1.RoleBinding](t, u))
		case "ClusterRoleBinding":
			set.ClusterRoleBindings = append(set.ClusterRoleBindings, *convert[rbacv1.ClusterRoleBinding](t, u))
		}
	}
	violations, n := rbac.Review(source, set, manager)
	for _, v := range violations {
		t.Error(v)
	}
	return n
}

// managerAccount is the ServiceAccount the manager Deployment in objs runs as.
func managerAccount(t *testing.T, objs []*unstructured.Unstructured) rbacv1.Subject {
	t.Helper()
	for _, u := range ofKind(objs, "Deployment") {
		d := convert[appsv1.Deployment](t, u)
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}
			}
		}
	}
	t.Fatal("no manager Deployment")
	return rbacv1.Subject{}
}

// TestGeneratedRBACIsLeastPrivilege reviews every Role and ClusterRole the
// repository ships, at the scope its bindings give it: config/rbac (its
// files together), the kustomize install, and the chart rendered with
// several value sets.
func TestGeneratedRBACIsLeastPrivilege(t *testing.T) {
	configManager := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "controller-manager", Namespace: "edgeplane-system"}
	if n := review(t, "config/rbac", readFiles(t, "config/rbac/*.yaml"), configManager); n < 6 {
		t.Errorf("config/rbac: reviewed %d roles, want the manager's, credentials, health-check, leader-election and metrics roles", n)
	}
	def := kustomizeBuild(t, "config/default")
	if n := review(t, "config/default", def, managerAccount(t, def)); n < 6 {
		t.Errorf("config/default: reviewed %d roles", n)
	}
	for name, set := range map[string][]string{
		"defaults":                {},
		"credential namespaces":   {"credentialNamespaces={team-a,team-b}", "webhook.certMode=cert-manager"},
		"no leader election, few": {"manager.leaderElection.enabled=false", "manager.controllers={*,-burstpolicy}"},
		"the CNI plugin, scale workloads": {"floatIP.cni.enabled=true", "floatIP.cni.apiServer=https://10.96.0.1:443",
			"burstPolicy.scaleWorkloads[0].apiGroup=apps.kruise.io", "burstPolicy.scaleWorkloads[0].resource=clonesets"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := helmTemplate(t, "prod", "edge", set...)
			if n := review(t, "chart "+name, objs, managerAccount(t, objs)); n < 6 {
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
// with it and the certificate Secrets the manager's flags name.
func TestNamedGrantsNameRealObjects(t *testing.T) {
	chart := helmTemplate(t, "prod", "edge")
	args := managerArgs(t, chart)
	def := manager.DefaultOptions()
	fip := floatippool.DefaultOptions()
	for name, tc := range map[string]struct {
		objs []*unstructured.Unstructured
		want map[string]string // resource -> the object's name
		// secrets are the Secrets the manager names: the webhook's and the
		// float-IP servers' two.
		secrets []string
	}{
		"chart": {objs: chart, want: map[string]string{
			"mutatingwebhookconfigurations":   args["mutating-webhook-configuration"],
			"validatingwebhookconfigurations": args["validating-webhook-configuration"],
		}, secrets: []string{args["webhook-secret-name"], args["floatippool-cert-secret-name"], args["floatippool-scheduler-client-secret-name"]}},
		"config/default": {objs: kustomizeBuild(t, "config/default"), want: map[string]string{
			"mutatingwebhookconfigurations":   def.MutatingWebhookConfig,
			"validatingwebhookconfigurations": def.ValidatingWebhookConfig,
		}, secrets: []string{def.WebhookSecretName, fip.CertSecretName, fip.SchedulerClientSecretName}},
	} {
		t.Run(name, func(t *testing.T) {
			grants := namedGrants(t, tc.objs)
			slices.Sort(tc.secrets)
			if got := slices.Sorted(slices.Values(grants["secrets"])); slices.Contains(tc.secrets, "") || !slices.Equal(got, tc.secrets) {
				t.Errorf("secrets: named grants %q, want exactly %q", grants["secrets"], tc.secrets)
			}
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
