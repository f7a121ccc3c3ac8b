package providerconfig

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

// config is what this controller needs of a ProviderConfig or a ClusterProviderConfig.
type config interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
	SetConditions(...xpv2.Condition)
	GetUsers() int64
	SetUsers(int64)
}

// view is the kind-independent reading of a config.
type view struct {
	kind     string
	provider cloudv1alpha1.Provider
	source   cloudv1alpha1.CredentialsSource
	// secret is set when the credentials come from a Secret.
	secret *types.NamespacedName
	status *cloudv1alpha1.ProviderConfigStatus
	// notAllowed is why a ProviderConfig breaks the tenant rules (nil when
	// it keeps them, and for a ClusterProviderConfig).
	notAllowed error
}

func viewOf(c config) view {
	switch pc := c.(type) {
	case *cloudv1alpha1.ProviderConfig:
		v := view{kind: cloudv1alpha1.ProviderConfigKind, provider: pc.Spec.Provider,
			source: pc.Spec.Credentials.Source, status: &pc.Status}
		if ref := pc.Spec.Credentials.SecretRef; ref != nil {
			// A tenant's Secret is always in its own namespace.
			v.secret = &types.NamespacedName{Namespace: pc.Namespace, Name: ref.Name}
		}
		return v
	case *cloudv1alpha1.ClusterProviderConfig:
		v := view{kind: cloudv1alpha1.ClusterProviderConfigKind, provider: pc.Spec.Provider,
			source: pc.Spec.Credentials.Source, status: &pc.Status}
		if ref := pc.Spec.Credentials.SecretRef; ref != nil {
			v.secret = &types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		}
		return v
	}
	panic("providerconfig: unexpected config type") // a programming error: only the two kinds are registered
}
