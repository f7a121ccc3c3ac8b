package rbac

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// webhookConfigurations are the resources whose grant would let a holder
// intercept (or switch off) admission for the whole cluster.
var webhookConfigurations = []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}

var (
	roleResources = []string{"roles", "clusterroles"}
	roleWrites    = []string{"create", "update", "patch", "delete", "deletecollection"}
)

// Violations lists what a least-privilege review refuses in one role's rules
// (role names the role in the messages): a wildcard in apiGroups, resources
// or verbs; the escalate and impersonate verbs; a grant on webhook
// configurations, or a bind, that does not name its objects (resourceNames);
// any write of Roles or ClusterRoles.
func Violations(role string, rules []rbacv1.PolicyRule) []string {
	var out []string
	bad := func(i int, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s rule %d: %s", role, i, fmt.Sprintf(format, args...)))
	}
	for i, r := range rules {
		for field, values := range map[string][]string{"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs} {
			if slices.Contains(values, rbacv1.ResourceAll) {
				bad(i, "wildcard in %s %v", field, values)
			}
		}
		for _, v := range []string{"escalate", "impersonate"} {
			if slices.Contains(r.Verbs, v) {
				bad(i, "verb %s", v)
			}
		}
		// A role its holder can write can grant anything; roles are shipped.
		for _, res := range r.Resources {
			if !slices.Contains(roleResources, res) {
				continue
			}
			for _, v := range r.Verbs {
				if slices.Contains(roleWrites, v) {
					bad(i, "%s on %s", v, res)
				}
			}
		}
		if len(r.ResourceNames) > 0 {
			continue
		}
		for _, res := range r.Resources {
			if slices.Contains(webhookConfigurations, res) {
				bad(i, "%v on %s without resourceNames", r.Verbs, res)
			}
		}
		if slices.Contains(r.Verbs, "bind") {
			bad(i, "bind on %v without resourceNames", r.Resources)
		}
	}
	return out
}
