package manager

import (
	"context"
	"fmt"
	"net"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/webhookcert"
)

// The self-managed certificate Rotator keeps one Secret shared by all replicas,
// in the manager's own namespace, and patches the caBundle of edgeplane's
// webhook configurations. Every grant names its object (the Rotator gets and
// watches by name, with a metadata.name field selector), except create, which
// RBAC cannot restrict by name; the chart renames them with the release (its
// templates/rbac.yaml maps each name, and fails on a name it does not know).
// +kubebuilder:rbac:groups="",namespace=edgeplane-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace=edgeplane-system,resources=secrets,verbs=get;update;watch,resourceNames=edgeplane-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;watch;patch,resourceNames=edgeplane-mutating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;watch;patch,resourceNames=edgeplane-validating-webhook-configuration

// Manager is a controller-runtime manager that, in self-managed certificate
// mode, has its webhook certificate in place before the webhook server starts.
type Manager struct {
	ctrl.Manager
	certs *webhookcert.Rotator
}

// Start applies the Go runtime's memory settings (runtime.go, gcpace.go), writes the
// webhook certificate files if needed, then runs the manager until ctx ends.
func (m *Manager) Start(ctx context.Context) error {
	applyRuntimeSettings(ctx, log.FromContext(ctx))
	if m.certs != nil {
		if err := m.certs.EnsureCerts(ctx); err != nil {
			return fmt.Errorf("preparing the webhook certificate: %w", err)
		}
	}
	return m.Manager.Start(ctx)
}

// newCertRotator builds the Rotator for self-managed webhook certificates.
func newCertRotator(cfg *rest.Config, o Options) (*webhookcert.Rotator, error) {
	c, err := webhookcert.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the webhook certificate client: %w", err)
	}
	opts := webhookcert.Options{
		SecretNamespace:                 o.WebhookServiceNamespace,
		SecretName:                      o.WebhookSecretName,
		ServiceName:                     o.WebhookServiceName,
		CertDir:                         o.WebhookCertDir,
		MutatingWebhookConfigurations:   []string{o.MutatingWebhookConfig},
		ValidatingWebhookConfigurations: []string{o.ValidatingWebhookConfig},
	}
	// A manager run outside the cluster (the demo) is reached by its address.
	if ip := net.ParseIP(o.WebhookHost); ip != nil && !ip.IsUnspecified() {
		opts.ExtraIPs = []net.IP{ip}
	}
	r, err := webhookcert.New(c, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the webhook certificate rotator: %w", err)
	}
	return r, nil
}
