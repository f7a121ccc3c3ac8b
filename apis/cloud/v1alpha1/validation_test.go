package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func validCluster(name string) *cloudv1alpha1.ClusterProviderConfig {
	return &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
			Credentials: cloudv1alpha1.ClusterProviderConfigCredentials{
				Source:    cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.SecretReference{Name: "aws-creds", Namespace: "edgeplane-system"},
			},
		},
	}
}

func validNamespaced(name string) *cloudv1alpha1.ProviderConfig {
	return &cloudv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: cloudv1alpha1.ProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-guangzhou"},
			Credentials: cloudv1alpha1.ProviderConfigCredentials{
				Source:    cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "tencent-creds"},
			},
		},
	}
}

// TestCreateValidation proves each rule rejects a bad object and lets a good one through.
func TestCreateValidation(t *testing.T) {
	cases := map[string]struct {
		obj     client.Object
		wantErr string // empty: must be accepted
	}{
		"valid cluster config with a Secret": {obj: validCluster("ok-secret")},
		"valid tenant config with a Secret":  {obj: validNamespaced("ok-tenant")},
		"valid emulator config without credentials": {obj: func() client.Object {
			o := validCluster("ok-emulator")
			o.Spec.Credentials = cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
			o.Spec.Endpoint = "http://127.0.0.1:8600"
			return o
		}()},
		"valid injected identity with a cluster identity": {obj: func() client.Object {
			o := validCluster("ok-identity")
			o.Spec.Credentials = cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}
			o.Spec.ClusterIdentity = "prod-eu_1.a"
			return o
		}()},
		// The endpoint allow-list is the manager's (--tenant-endpoints), which
		// CEL cannot see: the API server accepts any http(s) endpoint here.
		"tenant config without credentials at an endpoint": {obj: func() client.Object {
			o := validNamespaced("ok-tenant-emulator")
			o.Spec.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
			o.Spec.Endpoint = "http://127.0.0.1:8600"
			return o
		}()},
		"tenant config with the manager's injected identity": {obj: func() client.Object {
			o := validNamespaced("tenant-identity")
			o.Spec.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsInjectedIdentity}
			return o
		}(), wantErr: "credentials.source InjectedIdentity is the manager's own cloud identity: only a ClusterProviderConfig may use it"},
		"tenant config with a cluster identity": {obj: func() client.Object {
			o := validNamespaced("tenant-cluster-identity")
			o.Spec.ClusterIdentity = "another-cluster"
			return o
		}(), wantErr: "clusterIdentity may only be set on a ClusterProviderConfig"},
		"Secret source without secretRef": {obj: func() client.Object {
			o := validCluster("no-ref")
			o.Spec.Credentials.SecretRef = nil
			return o
		}(), wantErr: "secretRef must be set when, and only when, source is Secret"},
		"secretRef with another source": {obj: func() client.Object {
			o := validNamespaced("stray-ref")
			o.Spec.Credentials.Source = cloudv1alpha1.CredentialsInjectedIdentity
			return o
		}(), wantErr: "secretRef must be set when, and only when, source is Secret"},
		"no credentials without an endpoint": {obj: func() client.Object {
			o := validNamespaced("none-public")
			o.Spec.Credentials = cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
			return o
		}(), wantErr: "credentials.source None is only allowed with an endpoint override"},
		"endpoint that is not http": {obj: func() client.Object {
			o := validCluster("ftp-endpoint")
			o.Spec.Endpoint = "ftp://127.0.0.1/"
			return o
		}(), wantErr: "endpoint must be an http or https URL with a host"},
		"endpoint that is not a URL": {obj: func() client.Object {
			o := validCluster("junk-endpoint")
			o.Spec.Endpoint = "not a url"
			return o
		}(), wantErr: "endpoint must be an http or https URL with a host"},
		"AWS with a Tencent region": {obj: func() client.Object {
			o := validCluster("aws-tencent-region")
			o.Spec.Region = "ap-guangzhou"
			return o
		}(), wantErr: "region must be an AWS region such as us-east-1"},
		"Tencent with an AWS region": {obj: func() client.Object {
			o := validNamespaced("tencent-aws-region")
			o.Spec.Region = "us-east-1"
			return o
		}(), wantErr: "region must be a Tencent Cloud region such as ap-guangzhou"},
		"unknown provider": {obj: func() client.Object {
			o := validCluster("gcp")
			o.Spec.Provider = "gcp"
			return o
		}(), wantErr: `spec.provider: Unsupported value: "gcp"`},
		"unknown credentials source": {obj: func() client.Object {
			o := validCluster("file-source")
			o.Spec.Credentials.Source = "Filesystem"
			return o
		}(), wantErr: `spec.credentials.source: Unsupported value: "Filesystem"`},
		"cluster identity that is no label value": {obj: func() client.Object {
			o := validCluster("bad-identity")
			o.Spec.ClusterIdentity = "team/prod"
			return o
		}(), wantErr: "spec.clusterIdentity: Invalid value"},
		"cluster Secret reference without a namespace": {obj: func() client.Object {
			o := validCluster("ref-no-namespace")
			o.Spec.Credentials.SecretRef.Namespace = ""
			return o
		}(), wantErr: "spec.credentials.secretRef.namespace"},
		"empty region": {obj: func() client.Object {
			o := validCluster("empty-region")
			o.Spec.Region = ""
			return o
		}(), wantErr: "spec.region"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { env.ExpectCreate(t, tc.obj, tc.wantErr) })
	}
}

// TestProviderIsImmutable proves a config cannot move to another cloud.
func TestProviderIsImmutable(t *testing.T) {
	ctx := testenv.Context(t)
	for i, obj := range []client.Object{validCluster("immutable"), validNamespaced("immutable")} {
		t.Run(fmt.Sprintf("%T", obj), func(t *testing.T) {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating: %v", err)
			}
			switch o := obj.(type) {
			case *cloudv1alpha1.ClusterProviderConfig:
				o.Spec.Provider, o.Spec.Region = cloudv1alpha1.ProviderTencentCloud, "ap-guangzhou"
			case *cloudv1alpha1.ProviderConfig:
				o.Spec.Provider, o.Spec.Region = cloudv1alpha1.ProviderAWS, "us-east-1"
			}
			err := env.Client.Update(ctx, obj)
			if err == nil || !strings.Contains(err.Error(), "provider is immutable") {
				t.Fatalf("case %d: changing the provider: got %v, want a 'provider is immutable' rejection", i, err)
			}
		})
	}
}
