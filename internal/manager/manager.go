// Package manager builds and runs edgeplane's controller-runtime manager: leader
// election, secure metrics, health probes, the webhook server, and whichever
// controllers --controllers turns on.
package manager

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/metricsauth"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/admissionbody"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/statemetrics"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// New builds a manager with every enabled controller registered. It does not start it.
func New(ctx context.Context, cfg *rest.Config, o Options, all []Controller) (*Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	// A copy, so the caller's config keeps its own limits.
	cfg = rest.CopyConfig(cfg)
	clientlimit.Apply(cfg, o.KubeAPIQPS, o.KubeAPIBurst)
	enabled, err := EnabledControllers(all, o.Controllers)
	if err != nil {
		return nil, err
	}
	scheme, err := edgescheme.New()
	if err != nil {
		return nil, err
	}
	clusterName, err := resolveClusterName(ctx, cfg, scheme, o.ClusterName)
	if err != nil {
		return nil, err
	}

	metricsOpts := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.MetricsSecure, FilterProvider: withDeadlines(nil)}
	if o.MetricsSecure {
		// Only clients allowed to GET /metrics (a SubjectAccessReview) may
		// scrape; see internal/metricsauth for why not controller-runtime's
		// filters package.
		metricsOpts.FilterProvider = withDeadlines(metricsauth.Filter)
	}
	// The caches hold only what the controllers read (cache.go).
	cacheOpts := CacheOptions(o.WatchNamespace)
	leaseDuration, renewDeadline, retryPeriod := o.LeaseDuration, o.RenewDeadline, o.RetryPeriod
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.PprofAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// A stopping leader hands over at once instead of making the next one
		// wait out the lease; safe because the process exits right after.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		// A standby's controllers start their watches before it leads, so
		// the one that takes the Lease reconciles at once: 0.22 s from
		// taking it to a new object Ready without, 0.02 s with (one
		// reconcile; BenchmarkLeaderFailover's after-acquire-s). Its work
		// queues hold a key per watched object meanwhile, no more than a
		// leader's after its start.
		Controller: config.Controller{EnableWarmup: ptr.To(true)},
		// Every webhook reads its AdmissionReview in one read
		// (admissionbody), within read and write deadlines
		// (serverlimits.go).
		WebhookServer: admissionbody.Server(deadlineWebhookServer{webhook.NewServer(webhook.Options{
			Host:    o.WebhookHost,
			Port:    o.WebhookPort,
			CertDir: o.WebhookCertDir,
		})}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}

	tenants, err := tenancy.NewPolicy(o.TenantEndpoints)
	if err != nil {
		return nil, fmt.Errorf("--tenant-endpoints: %w", err)
	}
	sc := setup.Config{ClusterName: clusterName, WatchNamespace: o.WatchNamespace, Credentials: credstatus.New(), Tenancy: tenants,
		Namespace: o.WebhookServiceNamespace, Sweeps: orphan.NewTurns()}
	names := make([]string, 0, len(enabled))
	servesWebhooks := false
	for _, c := range enabled {
		if err := c.Setup(ctx, mgr, sc); err != nil {
			return nil, fmt.Errorf("setting up controller %s: %w", c.Name, err)
		}
		names = append(names, c.Name)
		servesWebhooks = servesWebhooks || c.ServesWebhooks
	}
	// Every replica reports the objects' state from its cache (alerts and
	// the dashboard read it), for the kinds of the controllers it runs.
	var lease client.ObjectKey
	if ns := leaseNamespace(o.LeaderElectionNamespace); o.LeaderElect && ns != "" {
		lease = client.ObjectKey{Namespace: ns, Name: o.LeaderElectionID}
	}
	if err := mgr.Add(statemetrics.NewRunnableWithLease(mgr.GetCache(), names, mgr.GetAPIReader(), lease, log.FromContext(ctx).WithName("statemetrics"))); err != nil {
		return nil, fmt.Errorf("adding the state metrics: %w", err)
	}
	m := &Manager{Manager: mgr}
	// Without webhooks there is no server to serve, so no certificate is made.
	if servesWebhooks && o.WebhookCertMode == CertModeSelfManaged {
		if m.certs, err = newCertRotator(cfg, o); err != nil {
			return nil, err
		}
		if err := mgr.Add(m.certs); err != nil {
			return nil, fmt.Errorf("adding the webhook certificate rotator: %w", err)
		}
	}
	if servesWebhooks {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return nil, fmt.Errorf("adding the webhook readiness check: %w", err)
		}
	}
	log.FromContext(ctx).Info("Built manager", "clusterName", clusterName, "controllers", names,
		"leaderElection", o.LeaderElect, "watchNamespace", o.WatchNamespace, "tenantEndpoints", tenants.Endpoints(),
		"webhooks", servesWebhooks, "webhookAddress", net.JoinHostPort(o.WebhookHost, strconv.Itoa(o.WebhookPort)))
	return m, nil
}

// resolveClusterName returns the configured cluster name or, when none is set,
// the UID of the kube-system namespace: stable for the cluster's lifetime and
// unique across clusters, so two clusters sharing a cloud account never sweep
// each other's addresses.
func resolveClusterName(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return "", fmt.Errorf("creating a client to read the cluster identity: %w", err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		return "", fmt.Errorf("reading namespace kube-system for the cluster identity (or set --cluster-name): %w", err)
	}
	return string(ns.UID), nil
}

// inClusterNamespaceFile holds the namespace a pod runs in; controller-runtime
// puts the Lease there when --leader-election-namespace is empty.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaseNamespace is the namespace of the leader-election Lease: the flag's,
// else the pod's own ("" outside a pod: the Lease metric is then left out).
func leaseNamespace(flag string) string {
	if flag != "" {
		return flag
	}
	b, err := os.ReadFile(inClusterNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
