package webhookcert

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func validOptions() Options {
	return Options{
		SecretNamespace: "edgeplane-system",
		SecretName:      "webhook-cert",
		ServiceName:     "edgeplane-webhook",
		CertDir:         "/tmp/certs",
	}
}

func TestOptionsValidate(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr []string
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{
			name:    "required fields",
			mutate:  func(o *Options) { *o = Options{} },
			wantErr: []string{"SecretNamespace is required", "SecretName is required", "ServiceName is required", "CertDir is required"},
		},
		{
			name:    "serving renewal window longer than validity",
			mutate:  func(o *Options) { o.CertValidity = 20 * day },
			wantErr: []string{"CertRenewBefore (720h0m0s) must be shorter than CertValidity"},
		},
		{
			name:    "CA renewal window longer than validity",
			mutate:  func(o *Options) { o.CAValidity = 300 * day },
			wantErr: []string{"CARenewBefore (8760h0m0s) must be shorter than CAValidity"},
		},
		{
			name:    "serving renewal window not shorter than the CA's",
			mutate:  func(o *Options) { o.CARenewBefore = 30 * day },
			wantErr: []string{"must be shorter than CARenewBefore"},
		},
		{
			name:    "serving renewal window too short to defer",
			mutate:  func(o *Options) { o.CertRenewBefore = time.Minute },
			wantErr: []string{"must be longer than 10m0s"},
		},
		{
			name:    "negative interval",
			mutate:  func(o *Options) { o.CheckInterval = -time.Second },
			wantErr: []string{"CheckInterval must not be negative"},
		},
		{
			name:    "nil IP",
			mutate:  func(o *Options) { o.ExtraIPs = []net.IP{net.ParseIP("not an ip")} },
			wantErr: []string{"nil IP"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.mutate(&o)
			err := o.withDefaults().validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestOptionsNames(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantDNS []string
	}{
		{
			name:    "service namespace defaults to the Secret's",
			mutate:  func(*Options) {},
			wantDNS: []string{"edgeplane-webhook.edgeplane-system.svc", "edgeplane-webhook.edgeplane-system.svc.cluster.local"},
		},
		{
			name: "explicit namespace, domain and extra names without duplicates",
			mutate: func(o *Options) {
				o.ServiceNamespace = "other"
				o.ClusterDomain = "corp.example"
				o.ExtraDNSNames = []string{"localhost", "edgeplane-webhook.other.svc"}
			},
			wantDNS: []string{"edgeplane-webhook.other.svc", "edgeplane-webhook.other.svc.corp.example", "localhost"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.mutate(&o)
			if diff := cmp.Diff(tt.wantDNS, o.withDefaults().policy().dnsNames); diff != "" {
				t.Errorf("DNS names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewChecksClientScheme(t *testing.T) {
	secretsOnly := runtime.NewScheme()
	if err := corev1.AddToScheme(secretsOnly); err != nil {
		t.Fatal(err)
	}
	withWebhooks := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, admissionregistrationv1.AddToScheme} {
		if err := add(withWebhooks); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		scheme  *runtime.Scheme
		mutate  func(*Options)
		wantErr string
	}{
		{name: "Secrets only, nothing to inject", scheme: secretsOnly, mutate: func(*Options) {}},
		{
			name:    "webhook configurations unknown",
			scheme:  secretsOnly,
			mutate:  func(o *Options) { o.MutatingWebhookConfigurations = []string{"x"} },
			wantErr: "MutatingWebhookConfiguration",
		},
		{
			name:   "webhook configurations known",
			scheme: withWebhooks,
			mutate: func(o *Options) { o.ValidatingWebhookConfigurations = []string{"x"} },
		},
		{
			name:    "CRDs unknown",
			scheme:  withWebhooks,
			mutate:  func(o *Options) { o.CRDs = []string{"x"} },
			wantErr: "CustomResourceDefinition",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.mutate(&o)
			_, err := New(fake.NewClientBuilder().WithScheme(tt.scheme).Build(), o)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}
