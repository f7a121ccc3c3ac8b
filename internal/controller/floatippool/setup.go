// Package floatippool manages fixed pod IPs compatible with galaxy-ipam:
// FloatIPPools (ranges, node subnets, size, release policy) and FloatIPs
// (one object per allocated IP, named after it). Allocation happens in a
// kube-scheduler extender (filter + bind) the manager serves; reconcilers
// keep pool status, pre-allocate, and release IPs by galaxy's policy table.
package floatippool

import (
	"context"
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/metricsauth"
	"github.com/edgeplane/edgeplane/internal/runtime/certdir"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
	"github.com/edgeplane/edgeplane/internal/runtime/informerstore"
)

// Why each grant: pools are read, get finalizers (update/patch) and status;
// FloatIPs are the allocations this controller creates, renews and releases.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatippools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatippools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatips,verbs=get;list;watch;create;update;patch;delete
// The ledger of admitted pools (one object), which the pool reconciler
// creates and updates.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatippoolledgers,verbs=get;list;watch;create;update
// Pods in any namespace may ask for a float IP: read, and patched with the
// allocated address's annotation.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// The scheduler extender binds the pods it placed (galaxy-ipam's bind verb).
// +kubebuilder:rbac:groups="",resources=pods/binding,verbs=create
// Node subnets and namespace labels decide which pool serves a pod.
// +kubebuilder:rbac:groups="",resources=nodes;namespaces,verbs=get;list;watch
// A pod's workload (replicas, strategy) decides when its IP is released.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Self-managed certificates of the extender and the galaxy API: the CA and
// serving certificate, and kube-scheduler's client certificate, each a
// Secret of the manager's namespace it creates, reads, renews and watches
// by name (create cannot be limited by name).
// +kubebuilder:rbac:groups="",namespace=edgeplane-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace=edgeplane-system,resources=secrets,verbs=get;update;watch,resourceNames=edgeplane-floatip-server-cert;edgeplane-floatip-scheduler-client
// The galaxy API asks who its callers are and what they may do with the
// metrics endpoint's grant (TokenReviews, SubjectAccessReviews:
// config/rbac/metrics_auth_role.yaml).

// Options are the float-IP flags.
type Options struct {
	// ExtenderAddress serves the scheduler extender (galaxy: :9040) over
	// TLS to callers with a client certificate of its CA; empty disables it.
	ExtenderAddress string
	// APIAddress serves galaxy-ipam's HTTP API (galaxy: :9041) over TLS to
	// callers with a bearer token allowed each request; empty (the
	// default) disables it.
	APIAddress string
	// CertDir holds both servers' tls.crt and tls.key and the ca.crt that
	// the extender's callers' client certificates must chain to.
	CertDir string
	// Certs says who writes CertDir: CertsSelfManaged or CertsProvided.
	Certs string
	// ServiceName is the Service in front of both servers, whose DNS names
	// the self-managed serving certificate covers; CertSecretName and
	// SchedulerClientSecretName are the self-managed Secrets (the CA and
	// serving certificate; kube-scheduler's client certificate), in the
	// manager's namespace.
	ServiceName, CertSecretName, SchedulerClientSecretName string
	// SweepInterval re-checks every held IP (galaxy's resyncInterval).
	SweepInterval time.Duration
	// MigrateGalaxy translates galaxy-ipam's ConfigMap, Pools and
	// FloatingIPs every MigrateInterval.
	MigrateGalaxy   bool
	MigrateInterval time.Duration
}

// BindFlags registers the options' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.ExtenderAddress, "floatippool-extender-address", o.ExtenderAddress, "Address of the float-IP kube-scheduler extender (galaxy-ipam's --port), served over TLS to callers with a client certificate of the CA in --floatippool-cert-dir; empty disables it.")
	fs.StringVar(&o.APIAddress, "floatippool-api-address", o.APIAddress, "Address of the galaxy-ipam compatible HTTP API, served over TLS to callers with a bearer token allowed each request; empty (the default) disables it.")
	fs.StringVar(&o.CertDir, "floatippool-cert-dir", o.CertDir, "Folder holding the extender's and the API's tls.crt and tls.key, and the ca.crt the extender's callers' client certificates must chain to.")
	fs.StringVar(&o.Certs, "floatippool-certs", o.Certs, "Who writes --floatippool-cert-dir: 'self-managed' (the manager keeps a CA, the serving certificate and kube-scheduler's client certificate in Secrets of its namespace) or 'provided' (e.g. a cert-manager Certificate's Secret, mounted).")
	fs.StringVar(&o.ServiceName, "floatippool-service-name", o.ServiceName, "Service in front of the extender and the API, whose DNS names the self-managed serving certificate covers.")
	fs.StringVar(&o.CertSecretName, "floatippool-cert-secret-name", o.CertSecretName, "Secret holding the self-managed CA and serving certificate of the extender and the API.")
	fs.StringVar(&o.SchedulerClientSecretName, "floatippool-scheduler-client-secret-name", o.SchedulerClientSecretName, "Secret where the manager keeps kube-scheduler's client certificate for the extender (tls.crt, tls.key, ca.crt; self-managed certificates).")
	fs.DurationVar(&o.SweepInterval, "floatippool-sweep-interval", o.SweepInterval, "How often every held float IP is re-checked against its pod.")
	fs.BoolVar(&o.MigrateGalaxy, "floatippool-migrate-galaxy", o.MigrateGalaxy, "Translate galaxy-ipam's kube-system/floatingip-config ConfigMap, Pools and FloatingIPs into FloatIPPools and FloatIPs.")
	fs.DurationVar(&o.MigrateInterval, "floatippool-migrate-interval", o.MigrateInterval, "How often galaxy-ipam's objects are translated again.")
}

// Setup returns the setup.Func that registers the float-IP controllers and servers.
func (o Options) Setup() setup.Func {
	return func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
		return o.setup(ctx, mgr, cfg)
	}
}

// DefaultOptions are galaxy-ipam's extender port, the galaxy API off,
// self-managed certificates and a one-minute resync.
func DefaultOptions() Options {
	return Options{
		ExtenderAddress: ":9040", CertDir: "/tmp/k8s-floatip-server/serving-certs", Certs: CertsSelfManaged,
		ServiceName: "edgeplane-floatip", CertSecretName: "edgeplane-floatip-server-cert", SchedulerClientSecretName: "edgeplane-floatip-scheduler-client",
		SweepInterval: time.Minute, MigrateGalaxy: true, MigrateInterval: time.Minute,
	}
}

// Setup registers the float-IP controllers and servers with default options.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup()(ctx, mgr, cfg)
}

// IndexFields registers the cache indexes this package lists by.
func IndexFields(ctx context.Context, idx client.FieldIndexer) error {
	indexes := map[string]client.IndexerFunc{
		fieldKey:  func(o client.Object) []string { return []string{o.(*networkingv1alpha1.FloatIP).Spec.Key} },
		fieldPool: func(o client.Object) []string { return []string{o.(*networkingv1alpha1.FloatIP).Spec.Pool} },
		indexPodKey: func(o client.Object) []string {
			if k := podKeyOf(o.(*networkingv1alpha1.FloatIP)); k != "" {
				return []string{k}
			}
			return nil
		},
	}
	for name, fn := range indexes {
		if err := idx.IndexField(ctx, &networkingv1alpha1.FloatIP{}, name, fn); err != nil {
			return fmt.Errorf("indexing FloatIPs by %s: %w", name, err)
		}
	}
	// The API server's own pod field, so the same selector works on the
	// cache and on a direct client: nudges list only unscheduled pods. Only
	// those are indexed (under ""): an index entry for every bound pod would
	// cost memory on large clusters and nobody looks pods up by node.
	if err := idx.IndexField(ctx, &corev1.Pod{}, fieldPodNodeName, func(o client.Object) []string {
		if node := o.(*corev1.Pod).Spec.NodeName; node != "" {
			return nil
		}
		return []string{""}
	}); err != nil {
		return fmt.Errorf("indexing pods by %s: %w", fieldPodNodeName, err)
	}
	return nil
}

func (o Options) setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	if o.SweepInterval <= 0 || (o.MigrateGalaxy && o.MigrateInterval <= 0) {
		return fmt.Errorf("--floatippool-sweep-interval (%s) and --floatippool-migrate-interval (%s) must be positive", o.SweepInterval, o.MigrateInterval)
	}
	if err := IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	m := NewMetrics(metrics.Registry)
	c := mgr.GetClient()

	pools := &PoolReconciler{Client: c, Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("floatippool"), Metrics: m}
	allPools := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list networkingv1alpha1.FloatIPPoolList
		if err := c.List(ctx, &list); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, p := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: p.Name}})
		}
		return out
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("floatippool").
		For(&networkingv1alpha1.FloatIPPool{}, builder.WithPredicates(poolChanges())).
		Watches(&networkingv1alpha1.FloatIP{}, poolsOfFloatIP(c, poolStatusDelay)).
		Watches(&networkingv1alpha1.FloatIPPoolLedger{}, allPools).
		Complete(pools); err != nil {
		return fmt.Errorf("building the floatippool controller: %w", err)
	}

	gc := &GCReconciler{Client: c, Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("floatip"), SweepInterval: o.SweepInterval}
	podToFIPs := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		var list networkingv1alpha1.FloatIPList
		// Read-only: only the names are used.
		if err := c.List(ctx, &list, client.MatchingFields{indexPodKey: pod.Namespace + "/" + pod.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, f := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: f.Name}})
		}
		return out
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("floatip").
		For(&networkingv1alpha1.FloatIP{}).
		Watches(&corev1.Pod{}, podToFIPs, builder.WithPredicates(predicate.TypedFuncs[client.Object]{
			UpdateFunc: func(e event.UpdateEvent) bool {
				old, okOld := e.ObjectOld.(*corev1.Pod)
				cur, okCur := e.ObjectNew.(*corev1.Pod)
				return !okOld || !okCur || holderMayBeGone(old, cur)
			},
		})).
		Complete(gc); err != nil {
		return fmt.Errorf("building the floatip controller: %w", err)
	}

	// The pods this replica's filter refuses for want of an IP are nudged
	// when its informer shows one freed (see refusedPods).
	refusals := newRefusedPods()
	index, err := NewFloatIPIndex(ctx, mgr.GetCache(), refusals.freed)
	if err != nil {
		return err
	}
	alloc := &Allocator{Reader: c, Live: mgr.GetAPIReader(), Client: c, Index: index, refusals: refusals}
	var certs *serverCerts
	if o.ExtenderAddress != "" || o.APIAddress != "" {
		if certs, err = o.certs(mgr, cfg); err != nil {
			return err
		}
	}
	if o.ExtenderAddress != "" {
		if err := mgr.Add(&refusalNudger{pods: refusals, client: c}); err != nil {
			return fmt.Errorf("adding the float-IP refusal nudger: %w", err)
		}
		ext := &Extender{Allocator: alloc, Nodes: c, Metrics: m, Recorder: mgr.GetEventRecorder(ExtenderName)}
		if ext.NodeStore, err = informerstore.For(ctx, mgr.GetCache(), &corev1.Node{}); err != nil {
			return fmt.Errorf("the float-IP extender's node store: %w", err)
		}
		srv := &tlsServer{certs: certs, auth: certdir.RequireClientCert,
			server: httpserve.Server{Name: "float-IP scheduler extender", Addr: o.ExtenderAddress, Handler: ext, Limits: extenderLimits}}
		if err := mgr.Add(srv); err != nil {
			return fmt.Errorf("adding the float-IP extender: %w", err)
		}
	}
	if o.MigrateGalaxy {
		mig := &Migrator{Client: c, Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("floatippool-migration"), Interval: o.MigrateInterval}
		if err := mgr.Add(mig); err != nil {
			return fmt.Errorf("adding the galaxy-ipam migration: %w", err)
		}
	}
	if o.APIAddress != "" {
		guard, err := metricsauth.NewGuardFor(mgr.GetConfig(), mgr.GetHTTPClient())
		if err != nil {
			return fmt.Errorf("the galaxy-ipam API's authorisation: %w", err)
		}
		api := &GalaxyAPI{Client: c, Live: mgr.GetAPIReader(), Pools: pools, Guard: guard}
		srv := &tlsServer{certs: certs, auth: certdir.NoClientCert,
			server: httpserve.Server{Name: "galaxy-ipam compatible API", Addr: o.APIAddress, Handler: api.Handler(log.FromContext(ctx)), Limits: apiLimits}}
		if err := mgr.Add(srv); err != nil {
			return fmt.Errorf("adding the galaxy-ipam API: %w", err)
		}
	}
	return nil
}
