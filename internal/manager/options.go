package manager

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// Webhook certificate modes.
const (
	// CertModeCertManager: cert-manager writes the serving certificate into a
	// mounted Secret and injects the CA bundle; the manager only reads the files.
	CertModeCertManager = "cert-manager"
	// CertModeSelfManaged: the manager creates and rotates its own CA and
	// serving certificate and injects the CA bundle itself.
	CertModeSelfManaged = "self-managed"
)

// Options are the manager's command-line settings.
type Options struct {
	Controllers    []string
	ClusterName    string
	WatchNamespace string
	// TenantEndpoints are the endpoint overrides tenants' ProviderConfigs
	// may use (e.g. a cloud emulator or a VPC endpoint); empty allows none.
	TenantEndpoints []string

	// KubeAPIQPS and KubeAPIBurst are the client-side limit on the
	// manager's own API requests (none for a negative QPS); clientlimit
	// says why the defaults are what they are.
	KubeAPIQPS   float64
	KubeAPIBurst int

	LeaderElect             bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration

	MetricsAddr   string
	MetricsSecure bool
	ProbeAddr     string
	// PprofAddr serves net/http/pprof for profiling; "" or "0" turns it off.
	PprofAddr string

	WebhookHost             string
	WebhookPort             int
	WebhookCertDir          string
	WebhookCertMode         string
	WebhookServiceName      string
	WebhookServiceNamespace string
	WebhookSecretName       string
	MutatingWebhookConfig   string
	ValidatingWebhookConfig string
}

// DefaultOptions returns the settings used when no flag is given.
func DefaultOptions() Options {
	return Options{
		Controllers:             []string{"*"},
		KubeAPIQPS:              clientlimit.DefaultQPS,
		KubeAPIBurst:            clientlimit.DefaultBurst,
		LeaderElect:             true,
		LeaderElectionID:        "edgeplane-manager.edgeplane.io",
		LeaseDuration:           15 * time.Second,
		RenewDeadline:           10 * time.Second,
		RetryPeriod:             2 * time.Second,
		MetricsAddr:             ":8443",
		MetricsSecure:           true,
		ProbeAddr:               ":8081",
		WebhookPort:             9443,
		WebhookCertDir:          "/tmp/k8s-webhook-server/serving-certs",
		WebhookCertMode:         CertModeSelfManaged,
		WebhookServiceName:      "edgeplane-webhook-service",
		WebhookServiceNamespace: "edgeplane-system",
		WebhookSecretName:       "edgeplane-webhook-server-cert",
		MutatingWebhookConfig:   "edgeplane-mutating-webhook-configuration",
		ValidatingWebhookConfig: "edgeplane-validating-webhook-configuration",
	}
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet, controllerNames []string) {
	fs.Func("controllers", fmt.Sprintf("Comma-separated controllers to run: '*' runs every controller that is on by default, "+
		"'name' turns one on, '-name' turns one off (default \"*\"). Known: %s.", strings.Join(controllerNames, ", ")),
		func(v string) error { o.Controllers = strings.Split(v, ","); return nil })
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName,
		"Identity of this cluster, written as a tag on every cloud object edgeplane creates. Empty means the UID of the kube-system namespace.")
	fs.Func("tenant-endpoints", "Comma-separated cloud API endpoint URLs a tenant's namespaced ProviderConfig may use as its endpoint override "+
		"(e.g. a cloud emulator or a VPC endpoint). Empty (the default) allows none: tenants' accounts are reached only at the clouds' public endpoints, "+
		"so the manager never sends signed requests to a URL a tenant chose. ClusterProviderConfigs may use any endpoint.",
		func(v string) error {
			o.TenantEndpoints = nil
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" {
					o.TenantEndpoints = append(o.TenantEndpoints, e)
				}
			}
			return nil
		})
	fs.StringVar(&o.WatchNamespace, "watch-namespace", o.WatchNamespace,
		"Only watch namespaced objects in this namespace. Empty means all namespaces.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second the manager may send to the Kubernetes API; negative for no client-side limit.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries the manager may send to the Kubernetes API above a positive --kube-api-qps.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"Namespace of the leader election Lease. Empty means the namespace the manager runs in.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "How long a non-leader waits before taking over.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before giving up.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "How long to wait between leader election attempts.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "Address of the metrics endpoint; '0' turns it off.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve metrics over HTTPS, allowing only clients authorised for the /metrics URL.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "Address of the /debug/pprof endpoints (unauthenticated: bind to loopback); empty or '0' turns them off.")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost, "Address the webhook server binds to. Empty means all addresses.")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "Port of the webhook server.")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", o.WebhookCertDir, "Folder holding the webhook server's tls.crt and tls.key.")
	fs.StringVar(&o.WebhookCertMode, "webhook-cert-mode", o.WebhookCertMode,
		"Who provides the webhook certificate: 'cert-manager' (mounted, CA injected by cert-manager) or 'self-managed' (the manager creates, rotates and injects it).")
	fs.StringVar(&o.WebhookServiceName, "webhook-service-name", o.WebhookServiceName, "Service in front of the webhook server (self-managed certificates).")
	fs.StringVar(&o.WebhookServiceNamespace, "webhook-service-namespace", o.WebhookServiceNamespace, "Namespace of that Service and of the certificate Secret (self-managed certificates).")
	fs.StringVar(&o.WebhookSecretName, "webhook-secret-name", o.WebhookSecretName, "Secret holding the self-managed CA and serving certificate.")
	fs.StringVar(&o.MutatingWebhookConfig, "mutating-webhook-configuration", o.MutatingWebhookConfig,
		"MutatingWebhookConfiguration whose caBundle the manager fills (self-managed certificates).")
	fs.StringVar(&o.ValidatingWebhookConfig, "validating-webhook-configuration", o.ValidatingWebhookConfig,
		"ValidatingWebhookConfiguration whose caBundle the manager fills (self-managed certificates).")
}

// Validate reports every bad setting at once.
func (o *Options) Validate() error {
	var errs []error
	if _, err := tenancy.NewPolicy(o.TenantEndpoints); err != nil {
		errs = append(errs, fmt.Errorf("--tenant-endpoints: %w", err))
	}
	if o.WebhookCertMode != CertModeCertManager && o.WebhookCertMode != CertModeSelfManaged {
		errs = append(errs, fmt.Errorf("--webhook-cert-mode must be %q or %q, not %q", CertModeCertManager, CertModeSelfManaged, o.WebhookCertMode))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port must be between 1 and 65535, not %d", o.WebhookPort))
	}
	// Zero would mean client-go's own 5 requests/s: say which is meant.
	if o.KubeAPIQPS == 0 || (!clientlimit.Unlimited(o.KubeAPIQPS) && o.KubeAPIBurst < 1) {
		errs = append(errs, fmt.Errorf("--kube-api-qps (%g) must be negative (no client-side limit) or > 0 with --kube-api-burst (%d) >= 1", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if o.LeaderElect && o.LeaderElectionID == "" {
		errs = append(errs, errors.New("--leader-election-id must not be empty when --leader-elect is on"))
	}
	if o.LeaderElect && !(o.LeaseDuration > o.RenewDeadline && o.RenewDeadline > o.RetryPeriod && o.RetryPeriod > 0) {
		errs = append(errs, fmt.Errorf("leader election needs lease duration (%s) > renew deadline (%s) > retry period (%s) > 0",
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	return errors.Join(errs...)
}
