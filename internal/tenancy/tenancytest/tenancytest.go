// Package tenancytest builds tenants' ProviderConfigs for tests, including
// ones that break the tenant rules and were stored before the CRD refused
// them.
package tenancytest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// Names of the configs StoreBroken stores.
const (
	// ManagerIdentity uses credentials.source InjectedIdentity.
	ManagerIdentity = "identity"
	// OtherClusterIdentity sets clusterIdentity to OtherCluster.
	OtherClusterIdentity = "cluster-identity"
	// OtherCluster is the identity OtherClusterIdentity names.
	OtherCluster = "another-cluster"
)

// AWSConfig is a tenant's AWS ProviderConfig in ns, with credentials from
// the Secret "aws" there, changed by mutate (nil: as it is).
func AWSConfig(ns, name string, mutate func(*cloudv1alpha1.ProviderConfigSpec)) *cloudv1alpha1.ProviderConfig {
	pc := &cloudv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: cloudv1alpha1.ProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
			Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "aws"}},
		},
	}
	if mutate != nil {
		mutate(&pc.Spec)
	}
	return pc
}

// StoreBroken stores in ns, as if they had been created before the CRD had
// the tenant rules, the AWSConfigs ManagerIdentity and
// OtherClusterIdentity, each changed by mutate first (nil: nothing more).
// They are deleted when the test ends.
func StoreBroken(t *testing.T, env *testenv.Env, ns string, mutate func(*cloudv1alpha1.ProviderConfigSpec)) {
	t.Helper()
	both := func(s *cloudv1alpha1.ProviderConfigSpec) {
		if mutate != nil {
			mutate(s)
		}
	}
	identity := AWSConfig(ns, ManagerIdentity, func(s *cloudv1alpha1.ProviderConfigSpec) {
		both(s)
		s.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}
	})
	otherCluster := AWSConfig(ns, OtherClusterIdentity, func(s *cloudv1alpha1.ProviderConfigSpec) {
		both(s)
		s.ClusterIdentity = OtherCluster
	})
	for obj, rule := range map[*cloudv1alpha1.ProviderConfig]string{identity: "InjectedIdentity", otherCluster: "clusterIdentity"} {
		env.CreateBypassingRules(t, obj, rule)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
}
