package providerconfig

import (
	"fmt"
	"slices"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	cloudproviderconfig "github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/status"
)

// secretState is what reading the credentials Secret found.
type secretState struct {
	obj       *corev1.Secret // nil when missing or not readable
	forbidden bool           // the manager may not read Secrets in that namespace
}

// readyCondition decides the Ready condition of a config from the tenant
// rules, its credentials source and, for Secret credentials, what reading
// the Secret found. It never puts a secret value in the message.
func readyCondition(v view, secret secretState) xpv2.Condition {
	if v.notAllowed != nil {
		return notReady(cloudv1alpha1.ReasonNotAllowedForTenant,
			"edgeplane never uses this ProviderConfig: "+strings.ReplaceAll(v.notAllowed.Error(), "\n", "; "))
	}
	if v.source != cloudv1alpha1.CredentialsSecret {
		return ready(cloudv1alpha1.ReasonCredentialsAvailable, fmt.Sprintf("credentials come from source %s", v.source))
	}
	if secret.forbidden {
		return notReady(cloudv1alpha1.ReasonSecretForbidden, fmt.Sprintf(
			"edgeplane may not read Secrets in namespace %s: bind the ClusterRole edgeplane-credentials-reader there (chart value credentialNamespaces)",
			v.secret.Namespace))
	}
	if secret.obj == nil {
		return notReady(cloudv1alpha1.ReasonSecretNotFound, fmt.Sprintf("Secret %s not found", v.secret))
	}
	var missing []string
	// The same keys, legacy names included, that connecting reads.
	for _, k := range cloudproviderconfig.RequiredSecretKeys(v.provider) {
		if len(k.Value(secret.obj.Data)) == 0 {
			missing = append(missing, k.Name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return notReady(cloudv1alpha1.ReasonSecretKeyMissing,
			fmt.Sprintf("Secret %s lacks the %s credentials key(s): %s", v.secret, v.provider, strings.Join(missing, ", ")))
	}
	return ready(cloudv1alpha1.ReasonCredentialsAvailable, fmt.Sprintf("credentials come from Secret %s", v.secret))
}

// rejectedCondition reports that the cloud refused the credentials (a
// managed resource's call found out); it clears once a call of the account
// succeeds again.
func rejectedCondition(r credstatus.Rejection) xpv2.Condition {
	return notReady(cloudv1alpha1.ReasonCredentialsRejected, fmt.Sprintf(
		"the cloud rejected these credentials (calls are held back until %s, then retried with a growing backoff): %s",
		r.RetryAt.UTC().Format(time.RFC3339), r.Message))
}

func ready(reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: reason, Message: msg}
}

func notReady(reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: reason, Message: msg}
}

// terminatingCondition explains why a deleted config still exists.
func terminatingCondition(users int64) xpv2.Condition {
	return xpv2.Condition{Type: cloudv1alpha1.TypeTerminating, Status: corev1.ConditionTrue, Reason: cloudv1alpha1.ReasonInUse,
		Message: fmt.Sprintf("deletion waits until %d managed resource(s) stop using this config", users)}
}

// kstatusConditions are the kstatus conditions that go with a Ready
// condition, so that GitOps tools tell waiting from failed: a missing Secret
// may yet appear (Reconciling), a Secret edgeplane may not read or that lacks
// keys, or a config that breaks the tenant rules, needs a person (Stalled).
func kstatusConditions(ready xpv2.Condition) []xpv2.Condition {
	stalled := ready.Reason == cloudv1alpha1.ReasonSecretForbidden || ready.Reason == cloudv1alpha1.ReasonSecretKeyMissing ||
		ready.Reason == cloudv1alpha1.ReasonNotAllowedForTenant
	return status.ManagedKstatus(ready, stalled)
}
