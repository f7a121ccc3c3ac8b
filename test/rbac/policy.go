package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// risk is one privilege-escalation path of Kubernetes' RBAC good practices
// (https://kubernetes.io/docs/concepts/security/rbac-good-practices/#privilege-escalation-risks):
// a grant of verbs on resources of groups.
type risk struct {
	// name is what the good-practices page calls it.
	name      string
	groups    []string
	resources []string
	// verbs are the verbs that open the path; nil: any.
	verbs []string
	// clusterWideOnly: granted in one namespace, the path stays in it (a
	// workload there reaches only that namespace's Secrets and accounts).
	clusterWideOnly bool
	// namedVerbs are the verbs a grant that names its objects
	// (resourceNames) may hold: it touches only those.
	namedVerbs []string
}

var (
	reads  = []string{"get", "list", "watch"}
	writes = []string{"create", "update", "patch", "delete", "deletecollection"}
	// workloads are pods and every built-in kind that makes pods.
	workloads = []string{"pods", "replicationcontrollers", "deployments", "daemonsets", "statefulsets", "replicasets", "jobs", "cronjobs"}
)

// risks are the paths the review refuses.
var risks = []risk{
	// get, and list and watch (whose answers hold the values), anywhere.
	{name: "listing secrets", groups: []string{""}, resources: []string{"secrets"}, verbs: reads, clusterWideOnly: true},
	// Pods run as any ServiceAccount of their namespace and mount its
	// Secrets; patch and update change a template's (or a pod's) image.
	{name: "workload creation", groups: []string{"", "apps", "batch"}, resources: workloads,
		verbs: []string{"create", "update", "patch"}, clusterWideOnly: true},
	// Running commands in, or attaching to, pods that exist: their accounts
	// and Secrets, as workload creation.
	{name: "access to running pods", groups: []string{""},
		resources: []string{"pods/exec", "pods/attach", "pods/portforward", "pods/ephemeralcontainers"}},
	// A hostPath PersistentVolume is the node's file system.
	{name: "persistent volume creation", groups: []string{""}, resources: []string{"persistentvolumes"}, verbs: []string{"create", "update", "patch"}},
	// The kubelet API: commands in every pod of the node; get is enough.
	{name: "access to the nodes/proxy subresource", groups: []string{""}, resources: []string{"nodes/proxy"}},
	{name: "token request", groups: []string{""}, resources: []string{"serviceaccounts/token"}, verbs: []string{"create"}},
	{name: "certificate signing request approval", groups: []string{"certificates.k8s.io"},
		resources: []string{"certificatesigningrequests/approval", "certificatesigningrequests/status"}, verbs: []string{"update", "patch"}},
	{name: "certificate issuing", groups: []string{"certificates.k8s.io"}, resources: []string{"signers"}, verbs: []string{"approve", "sign"}},
	// Webhooks see (and mutate) whatever they match; policies decide
	// admission. A grant that names its objects may keep them current.
	{name: "control of admission", groups: []string{"admissionregistration.k8s.io"},
		resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "validatingadmissionpolicies", "validatingadmissionpolicybindings"},
		namedVerbs: []string{"get", "list", "watch", "update", "patch", "delete"}},
	// A namespace's labels choose its Pod Security level and the
	// NetworkPolicies that select it.
	{name: "namespace modification", groups: []string{""}, resources: []string{"namespaces"}, verbs: []string{"update", "patch", "delete", "deletecollection"}},
	// A role its holder can write can grant anything.
	{name: "role writes", groups: []string{rbacv1.GroupName}, resources: []string{"roles", "clusterroles"}, verbs: writes},
	// A binding its holder can write binds any role it holds to anyone.
	{name: "role binding writes", groups: []string{rbacv1.GroupName}, resources: []string{"rolebindings", "clusterrolebindings"}, verbs: writes},
}

// Exemption allows a role one flagged grant the manager cannot work
// without, exactly so: one resource of one group, at most these verbs.
// docs/operations.md's Security model says why (TestSecurityModelExplainsEveryExemption).
type Exemption struct {
	Group, Resource string
	Verbs           []string
	// Why is the reason, for the review's own readers.
	Why string
}

// ManagerExemptions are the flagged grants of the manager's roles.
var ManagerExemptions = []Exemption{
	{Group: "", Resource: "pods", Verbs: []string{"patch"},
		Why: "PodElasticIP, FloatIPPool and BurstPolicy write labels, annotations and scheduling gates of pods in every namespace, each a patch of the fields it owns"},
	{Group: "apps", Resource: "deployments", Verbs: []string{"create", "patch"},
		Why: "IngressDaemonSet's per-node Deployments, in the IngressDaemonSet's namespace, of the template its author wrote (under that namespace's Pod Security admission)"},
}

// Role is one Role or ClusterRole under review.
type Role struct {
	// Name names it in the messages.
	Name string
	// ClusterWide: a ClusterRole bound by a ClusterRoleBinding, or bound
	// nowhere (anyone may bind it anywhere); false: bound in namespaces.
	ClusterWide bool
	Rules       []rbacv1.PolicyRule
	// Exempt are the flagged grants it may hold.
	Exempt []Exemption
}

// Violations lists what a least-privilege review refuses in r: a wildcard in
// apiGroups, resources, verbs or nonResourceURLs; the escalate, bind and
// impersonate verbs; and each escalation path of risks (at any scope, or
// cluster-wide, as the path is), unless the grant is in r.Exempt.
func Violations(r Role) []string {
	var out []string
	bad := func(i int, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s rule %d: %s", r.Name, i, fmt.Sprintf(format, args...)))
	}
	for i, rule := range r.Rules {
		for field, values := range map[string][]string{"apiGroups": rule.APIGroups, "resources": rule.Resources, "verbs": rule.Verbs, "nonResourceURLs": rule.NonResourceURLs} {
			if slices.Contains(values, rbacv1.ResourceAll) || slices.ContainsFunc(values, func(v string) bool { return field == "nonResourceURLs" && strings.HasSuffix(v, "*") }) {
				bad(i, "wildcard in %s %v", field, values)
			}
		}
		for _, v := range []string{"escalate", "bind", "impersonate"} {
			if slices.Contains(rule.Verbs, v) {
				bad(i, "verb %s on %v", v, rule.Resources)
			}
		}
		for _, k := range risks {
			if k.clusterWideOnly && !r.ClusterWide {
				continue
			}
			for _, g := range rule.APIGroups {
				if !matches(k.groups, g) {
					continue
				}
				for _, res := range rule.Resources {
					if !matches(k.resources, res) {
						continue
					}
					for _, v := range rule.Verbs {
						if k.verbs != nil && !matches(k.verbs, v) {
							continue
						}
						if len(rule.ResourceNames) > 0 && slices.Contains(k.namedVerbs, v) {
							continue
						}
						if exempt(r.Exempt, g, res, v) {
							continue
						}
						bad(i, "%s: %s on %s%s", k.name, v, res, where(rule, k))
					}
				}
			}
		}
	}
	return out
}

// matches reports whether a grant of value covers one of want (a wildcard
// covers everything).
func matches(want []string, value string) bool {
	return value == rbacv1.ResourceAll || slices.Contains(want, value)
}

func exempt(ex []Exemption, group, resource, verb string) bool {
	return slices.ContainsFunc(ex, func(e Exemption) bool {
		return e.Group == group && e.Resource == resource && slices.Contains(e.Verbs, verb)
	})
}

func where(rule rbacv1.PolicyRule, k risk) string {
	switch {
	case k.namedVerbs != nil && len(rule.ResourceNames) == 0:
		return " without resourceNames"
	case k.clusterWideOnly:
		return " cluster-wide"
	}
	return ""
}

// RBAC is the RBAC objects of one install.
type RBAC struct {
	Roles               []rbacv1.Role
	ClusterRoles        []rbacv1.ClusterRole
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// Review runs Violations over every role of objs, each at the scope its
// bindings give it, with ManagerExemptions for the roles bound to manager
// alone; and refuses a binding to a role objs does not hold (cluster-admin,
// say), which the review could not see. It returns the violations and how
// many roles it reviewed.
func Review(source string, objs RBAC, manager rbacv1.Subject) ([]string, int) {
	var out []string
	type ref struct{ kind, namespace, name string }
	subjects := map[ref][]rbacv1.Subject{}
	clusterBound := map[string]bool{}
	for _, b := range objs.RoleBindings {
		ns := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			ns = ""
		}
		k := ref{b.RoleRef.Kind, ns, b.RoleRef.Name}
		subjects[k] = append(subjects[k], b.Subjects...)
	}
	for _, b := range objs.ClusterRoleBindings {
		k := ref{"ClusterRole", "", b.RoleRef.Name}
		subjects[k] = append(subjects[k], b.Subjects...)
		clusterBound[b.RoleRef.Name] = true
	}
	reviewed := map[ref]bool{}
	onlyManager := func(k ref) []Exemption {
		s := subjects[k]
		if len(s) == 0 || slices.ContainsFunc(s, func(x rbacv1.Subject) bool {
			return x.Kind != manager.Kind || x.Name != manager.Name || x.Namespace != manager.Namespace
		}) {
			return nil
		}
		return ManagerExemptions
	}
	for _, r := range objs.Roles {
		k := ref{"Role", r.Namespace, r.Name}
		reviewed[k] = true
		out = append(out, Violations(Role{Name: source + ": Role/" + r.Namespace + "/" + r.Name, Rules: r.Rules, Exempt: onlyManager(k)})...)
	}
	for _, r := range objs.ClusterRoles {
		k := ref{"ClusterRole", "", r.Name}
		reviewed[k] = true
		wide := clusterBound[r.Name] || len(subjects[k]) == 0
		out = append(out, Violations(Role{Name: source + ": ClusterRole/" + r.Name, ClusterWide: wide, Rules: r.Rules, Exempt: onlyManager(k)})...)
	}
	for _, b := range objs.RoleBindings {
		ns := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			ns = ""
		}
		if !reviewed[ref{b.RoleRef.Kind, ns, b.RoleRef.Name}] {
			out = append(out, fmt.Sprintf("%s: RoleBinding/%s/%s binds %s %s, which is not reviewed here", source, b.Namespace, b.Name, b.RoleRef.Kind, b.RoleRef.Name))
		}
	}
	for _, b := range objs.ClusterRoleBindings {
		if !reviewed[ref{"ClusterRole", "", b.RoleRef.Name}] {
			out = append(out, fmt.Sprintf("%s: ClusterRoleBinding/%s binds %s %s, which is not reviewed here", source, b.Name, b.RoleRef.Kind, b.RoleRef.Name))
		}
	}
	return out, len(reviewed)
}
