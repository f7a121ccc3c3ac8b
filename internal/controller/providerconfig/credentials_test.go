package providerconfig

import (
	"errors"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

func TestReadyCondition(t *testing.T) {
	ref := &types.NamespacedName{Namespace: "ops", Name: "creds"}
	secret := func(data map[string]string) secretState {
		s := &corev1.Secret{Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return secretState{obj: s}
	}
	cases := map[string]struct {
		view   view
		secret secretState
		want   xpv2.Condition
	}{
		"secret in a namespace the manager may not read": {
			view:   view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secretState{forbidden: true},
			want: notReady(cloudv1alpha1.ReasonSecretForbidden,
				"edgeplane may not read Secrets in namespace ops: bind the ClusterRole edgeplane-credentials-reader there (chart value credentialNamespaces)"),
		},
		"injected identity needs nothing": {
			view: view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsInjectedIdentity},
			want: ready(cloudv1alpha1.ReasonCredentialsAvailable, "credentials come from source InjectedIdentity"),
		},
		"none needs nothing": {
			view: view{provider: cloudv1alpha1.ProviderTencentCloud, source: cloudv1alpha1.CredentialsNone},
			want: ready(cloudv1alpha1.ReasonCredentialsAvailable, "credentials come from source None"),
		},
		"missing secret": {
			view: view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			want: notReady(cloudv1alpha1.ReasonSecretNotFound, "Secret ops/creds not found"),
		},
		"aws secret lacking the secret key": {
			view:   view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"aws_access_key_id": "AKIA", "aws_secret_access_key": ""}),
			want:   notReady(cloudv1alpha1.ReasonSecretKeyMissing, "Secret ops/creds lacks the aws credentials key(s): aws_secret_access_key"),
		},
		"tencent secret with aws keys": {
			view:   view{provider: cloudv1alpha1.ProviderTencentCloud, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"aws_access_key_id": "AKIA", "aws_secret_access_key": "s"}),
			want:   notReady(cloudv1alpha1.ReasonSecretKeyMissing, "Secret ops/creds lacks the tencentcloud credentials key(s): secret_id, secret_key"),
		},
		"complete aws secret": {
			view:   view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"aws_access_key_id": "AKIA", "aws_secret_access_key": "s"}),
			want:   ready(cloudv1alpha1.ReasonCredentialsAvailable, "credentials come from Secret ops/creds"),
		},
		"a tenant config that breaks the rules is never looked at further": {
			view: view{provider: cloudv1alpha1.ProviderAWS, source: cloudv1alpha1.CredentialsSecret, secret: ref,
				notAllowed: errors.Join(errors.New("rule one"), errors.New("rule two"))},
			secret: secret(map[string]string{"aws_access_key_id": "AKIA", "aws_secret_access_key": "s"}),
			want:   notReady(cloudv1alpha1.ReasonNotAllowedForTenant, "edgeplane never uses this ProviderConfig: rule one; rule two"),
		},
		"legacy tencent secret (secretID, secretKey)": {
			view:   view{provider: cloudv1alpha1.ProviderTencentCloud, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"secretID": "AKID", "secretKey": "s"}),
			want:   ready(cloudv1alpha1.ReasonCredentialsAvailable, "credentials come from Secret ops/creds"),
		},
		"legacy tencent secret lacking secretKey": {
			view:   view{provider: cloudv1alpha1.ProviderTencentCloud, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"secretID": "AKID", "secretKey": ""}),
			want:   notReady(cloudv1alpha1.ReasonSecretKeyMissing, "Secret ops/creds lacks the tencentcloud credentials key(s): secret_key"),
		},
		"complete tencent secret": {
			view:   view{provider: cloudv1alpha1.ProviderTencentCloud, source: cloudv1alpha1.CredentialsSecret, secret: ref},
			secret: secret(map[string]string{"secret_id": "AKID", "secret_key": "s"}),
			want:   ready(cloudv1alpha1.ReasonCredentialsAvailable, "credentials come from Secret ops/creds"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readyCondition(tc.view, tc.secret)); diff != "" {
				t.Errorf("Ready condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKstatusConditions(t *testing.T) {
	type states struct{ Reconciling, Stalled corev1.ConditionStatus }
	for name, tc := range map[string]struct {
		ready xpv2.Condition
		want  states
	}{
		"ready":                    {ready(cloudv1alpha1.ReasonCredentialsAvailable, "ok"), states{corev1.ConditionFalse, corev1.ConditionFalse}},
		"secret not found":         {notReady(cloudv1alpha1.ReasonSecretNotFound, "m"), states{corev1.ConditionTrue, corev1.ConditionFalse}},
		"secret forbidden":         {notReady(cloudv1alpha1.ReasonSecretForbidden, "m"), states{corev1.ConditionFalse, corev1.ConditionTrue}},
		"secret key missing":       {notReady(cloudv1alpha1.ReasonSecretKeyMissing, "m"), states{corev1.ConditionFalse, corev1.ConditionTrue}},
		"not allowed for a tenant": {notReady(cloudv1alpha1.ReasonNotAllowedForTenant, "m"), states{corev1.ConditionFalse, corev1.ConditionTrue}},
	} {
		t.Run(name, func(t *testing.T) {
			got := map[xpv2.ConditionType]xpv2.Condition{}
			for _, c := range kstatusConditions(tc.ready) {
				got[c.Type] = c
			}
			if s := (states{got[status.TypeReconciling].Status, got[status.TypeStalled].Status}); s != tc.want {
				t.Errorf("got %+v, want %+v", s, tc.want)
			}
			for _, c := range got {
				if c.Reason != tc.ready.Reason {
					t.Errorf("%s has reason %q, want Ready's %q", c.Type, c.Reason, tc.ready.Reason)
				}
			}
		})
	}
}
