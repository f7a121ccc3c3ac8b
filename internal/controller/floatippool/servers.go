package floatippool

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/certdir"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
	"github.com/edgeplane/edgeplane/internal/webhookcert"
)

// The extender and the galaxy API serve TLS from one certificate
// directory: the serving certificate covers the Service in front of both,
// and its CA signs the client certificate kube-scheduler presents to the
// extender. The certificates come from one of two places.
const (
	// CertsSelfManaged: the manager keeps a CA and the serving certificate
	// in one Secret, and kube-scheduler's client certificate in another,
	// both in its own namespace, and writes the serving files into the
	// directory (internal/webhookcert, as for the webhooks).
	CertsSelfManaged = "self-managed"
	// CertsProvided: another party writes tls.crt, tls.key and ca.crt into
	// the directory (a cert-manager Certificate's Secret, mounted).
	CertsProvided = "provided"
)

// SchedulerClientName is the common name of the client certificate the
// manager issues to kube-scheduler (self-managed certificates).
const SchedulerClientName = "edgeplane-floatip-scheduler"

// maxBody caps an extender request's body. The scheduler sends node names
// (nodeCacheCapable), so a filter request is the pod and a name per node:
// about 120 KiB at 5,000 nodes. Whole nodes (nodeCacheCapable: false) are
// 3 to 10 KiB each: a few hundred fit. Decoding costs about ten times the
// body in heap (a 60 MiB body held about 617 MiB), so the cap is what keeps
// the manager's 256 MiB limit out of a caller's reach.
const maxBody = 4 << 20

// maxAPIBody caps a galaxy API request's body (a release list or a pool).
const maxAPIBody = 1 << 20

// extenderLimits are the extender's: kube-scheduler waits httpTimeout (30 s
// in the shipped configuration) for an answer and keeps its connections
// alive (90 s idle in its transport), so a connection outlives its idle
// time here only when the scheduler holds it; a bind may run bindTimeout.
var extenderLimits = httpserve.Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      bindTimeout + 15*time.Second,
	IdleTimeout:       120 * time.Second,
	MaxHeaderBytes:    64 << 10,
	MaxBodyBytes:      maxBody,
}

// apiLimits are the galaxy API's: small bodies; a POST /v1/pool with
// preAllocateIP waits for its pool's reconcile.
var apiLimits = httpserve.Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxHeaderBytes:    64 << 10,
	MaxBodyBytes:      maxAPIBody,
}

// serverCerts is where the servers' certificate directory comes from.
type serverCerts struct {
	dir string
	// rotator keeps the directory's files from the Secrets; nil when they
	// are provided.
	rotator *webhookcert.Rotator
}

// certs returns the servers' certificates and, when they are self-managed,
// adds the Rotator that keeps them fresh to the manager.
func (o Options) certs(mgr ctrl.Manager, cfg setup.Config) (*serverCerts, error) {
	sc := &serverCerts{dir: o.CertDir}
	switch o.Certs {
	case CertsProvided:
		return sc, nil
	case CertsSelfManaged:
	default:
		return nil, fmt.Errorf("--floatippool-certs must be %q or %q, not %q", CertsSelfManaged, CertsProvided, o.Certs)
	}
	if cfg.Namespace == "" || o.ServiceName == "" || o.CertSecretName == "" || o.SchedulerClientSecretName == "" {
		return nil, fmt.Errorf("self-managed float-IP server certificates need the manager's namespace (%q), --floatippool-service-name (%q), --floatippool-cert-secret-name (%q) and --floatippool-scheduler-client-secret-name (%q)",
			cfg.Namespace, o.ServiceName, o.CertSecretName, o.SchedulerClientSecretName)
	}
	c, err := webhookcert.NewClient(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("the float-IP certificate client: %w", err)
	}
	rot, err := webhookcert.New(c, webhookcert.Options{
		SecretNamespace: cfg.Namespace, SecretName: o.CertSecretName,
		ServiceName: o.ServiceName, CertDir: o.CertDir,
		ClientSecretName: o.SchedulerClientSecretName, ClientCommonName: SchedulerClientName,
	})
	if err != nil {
		return nil, fmt.Errorf("the float-IP certificate rotator: %w", err)
	}
	if err := mgr.Add(rot); err != nil {
		return nil, fmt.Errorf("adding the float-IP certificate rotator: %w", err)
	}
	sc.rotator = rot
	return sc, nil
}

// tlsServer serves over TLS from the certificate directory, which it makes
// sure exists first (self-managed) and then watches.
type tlsServer struct {
	server httpserve.Server
	certs  *serverCerts
	auth   certdir.ClientAuth
}

// NeedLeaderElection is false: every replica serves.
func (s *tlsServer) NeedLeaderElection() bool { return false }

// Start writes the certificate files if the manager manages them, loads
// them and serves until ctx ends.
func (s *tlsServer) Start(ctx context.Context) error {
	ctx = logr.NewContext(ctx, log.FromContext(ctx).WithValues("server", s.server.Name))
	if s.certs.rotator != nil {
		if err := s.certs.rotator.EnsureCerts(ctx); err != nil {
			return fmt.Errorf("preparing the %s's certificate: %w", s.server.Name, err)
		}
	}
	cfg, err := certdir.ServerConfig(ctx, s.certs.dir, s.auth)
	if err != nil {
		return fmt.Errorf("the %s's TLS: %w", s.server.Name, err)
	}
	srv := s.server
	srv.TLS = cfg
	return srv.Start(ctx)
}

// ExtenderServer serves h on ln as the manager serves the extender: TLS
// from the provided certificates in certDir, client certificates of its
// ca.crt required, the extender's limits. For tests that run an Extender
// without a manager.
func ExtenderServer(ln net.Listener, certDir string, h http.Handler) interface {
	Start(ctx context.Context) error
} {
	return &tlsServer{certs: &serverCerts{dir: certDir}, auth: certdir.RequireClientCert,
		server: httpserve.Server{Name: "float-IP scheduler extender", Listener: ln, Handler: h, Limits: extenderLimits}}
}
