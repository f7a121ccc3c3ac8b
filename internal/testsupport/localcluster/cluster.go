package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster is a running local cluster. Its methods are safe for concurrent
// use.
type Cluster struct {
	opts      Options
	dir       string
	removeDir bool // dir was a temporary directory created by Start
	log       logr.Logger

	pki           *pki
	admin         credentials
	etcdURL       string
	apiServerURL  string
	apiServerPort int
	restConfig    *rest.Config
	client        client.Client

	// real is the state of the real nodes; nil without them.
	real *realNodes

	mu       sync.Mutex
	procs    []*process // in start order
	stopping bool

	// died receives one error per process that exits while the cluster is not
	// stopping; Wait reports the first.
	died chan error

	stopOnce sync.Once
	stopErr  error
}

// Start starts a cluster and returns once the API server is ready, the
// controller manager has created the default ServiceAccount, and every node
// in opts.Nodes is Ready. On failure everything already started is stopped
// and the error carries the tail of the failing component's log.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	opts.setDefaults()
	c := &Cluster{opts: opts, dir: opts.Dir, log: opts.Log, died: make(chan error, 8)}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()

	if err := c.prepareDir(); err != nil {
		return nil, err
	}
	c.log.Info("starting local cluster", "dir", c.dir)
	if opts.RealNodes > 0 {
		if err := c.prepareRealNodes(ctx); err != nil {
			return nil, fmt.Errorf("preparing the real nodes: %w", err)
		}
	}
	if err := c.preparePKI(); err != nil {
		return nil, err
	}

	if err := c.startComponent(ctx, c.etcdComponent()); err != nil {
		return nil, err
	}
	if err := c.startComponent(ctx, c.apiServerComponent()); err != nil {
		return nil, err
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	if c.real != nil {
		if err := c.startControlPlaneHost(ctx); err != nil {
			return nil, fmt.Errorf("starting the real nodes' control-plane host: %w", err)
		}
	}
	if !opts.DisableControllerManager {
		if err := c.startComponent(ctx, c.controllerManagerComponent()); err != nil {
			return nil, err
		}
	}
	if !opts.DisableScheduler {
		if err := c.startComponent(ctx, c.schedulerComponent()); err != nil {
			return nil, err
		}
	}
	kwok, err := c.kwokComponent()
	if err != nil {
		return nil, err
	}
	if err := c.startComponent(ctx, kwok); err != nil {
		return nil, err
	}

	// Nodes first: kwok and the controller manager then bring them up while
	// the controller manager is still starting its other controllers.
	for _, spec := range opts.Nodes {
		if err := c.AddNode(ctx, spec); err != nil {
			return nil, err
		}
	}
	if c.real != nil {
		if err := c.startRealNodes(ctx); err != nil {
			return nil, fmt.Errorf("starting the real nodes: %w", err)
		}
	}
	if !opts.DisableControllerManager {
		// Pods are rejected by the ServiceAccount admission plugin until the
		// controller manager has created their namespace's default account.
		if err := c.WaitServiceAccount(ctx, "default", "default"); err != nil {
			return nil, c.withLogTail(fmt.Errorf("waiting for the default ServiceAccount: %w", err), ControllerManager)
		}
	}
	for _, spec := range opts.Nodes {
		if err := c.WaitNodeReady(ctx, spec.Name); err != nil {
			return nil, c.withLogTail(err, Kwok, ControllerManager)
		}
	}
	if c.real != nil {
		if err := c.waitRealNodes(ctx); err != nil {
			return nil, err
		}
	}
	if len(opts.Nodes) > 0 && !opts.DisableControllerManager {
		// The ServiceAccount admission plugin needs the default account,
		// which only the controller manager creates.
		if err := c.warmPodIPs(ctx, opts.Nodes[0].Name); err != nil {
			return nil, c.withLogTail(err, Kwok)
		}
	}
	c.log.Info("local cluster ready", "dir", c.dir, "server", c.apiServerURL, "nodes", len(opts.Nodes),
		"realNodes", opts.RealNodes, "took", time.Since(began).Round(time.Millisecond))
	return c, nil
}

// prepareDir creates the working directory, or a temporary one, and wipes
// the sub-directories a previous run may have left.
func (c *Cluster) prepareDir() error {
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "localcluster-")
		if err != nil {
			return fmt.Errorf("creating temporary cluster dir: %w", err)
		}
		c.dir, c.removeDir = dir, true
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return fmt.Errorf("resolving cluster dir %s: %w", c.dir, err)
	}
	c.dir = dir
	for _, sub := range []string{"pki", "kubeconfigs", "etcd", "logs", "apiserver", ControllerManager, Scheduler, Kwok} {
		if err := os.RemoveAll(filepath.Join(c.dir, sub)); err != nil {
			return fmt.Errorf("cleaning %s: %w", sub, err)
		}
	}
	for _, sub := range []string{"kubeconfigs", "logs"} {
		if err := os.MkdirAll(filepath.Join(c.dir, sub), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", sub, err)
		}
	}
	return nil
}

// preparePKI creates the CA, the API server's serving certificate and the
// client credentials of the admin and each component. Kubeconfigs are written
// later, once the API server's port is known.
func (c *Cluster) preparePKI() error {
	p, err := newPKI(filepath.Join(c.dir, "pki"))
	if err != nil {
		return err
	}
	c.pki = p
	var realGateway []net.IP
	if c.real != nil {
		// The real nodes reach the API server at the gateway.
		realGateway = append(realGateway, c.real.plan.Gateway.Addr().AsSlice())
	}
	if _, _, err := p.issueServing(apiServerCertName, kubernetesServiceIP, realGateway...); err != nil {
		return err
	}
	if c.real != nil {
		if err := c.prepareRealPKI(); err != nil {
			return err
		}
	}
	if _, _, err := p.issueClient(frontProxyClientName, frontProxyClientCN); err != nil {
		return err
	}
	cert, key, err := p.issueClient("admin", "edgeplane-admin", "system:masters")
	if err != nil {
		return err
	}
	c.admin = credentials{caPEM: p.caPEM, certPEM: cert, keyPEM: key}
	return nil
}

// connect writes the kubeconfigs (the API server's port is now fixed) and
// builds the admin clients.
func (c *Cluster) connect() error {
	// The controller manager and scheduler use their own identities, which the
	// API server's bootstrap RBAC policy already grants what they need; kwok
	// acts for many kubelets and runs as an administrator.
	identities := []struct {
		name, cn string
		groups   []string
	}{
		{ControllerManager, "system:kube-controller-manager", nil},
		{Scheduler, "system:kube-scheduler", nil},
		{Kwok, "kwok", []string{"system:masters"}},
	}
	for _, id := range identities {
		cert, key, err := c.pki.issueClient(id.name+"-client", id.cn, id.groups...)
		if err != nil {
			return err
		}
		creds := credentials{caPEM: c.pki.caPEM, certPEM: cert, keyPEM: key}
		if err := creds.writeKubeconfig(c.componentKubeconfig(id.name), c.apiServerURL, id.cn); err != nil {
			return err
		}
	}
	if err := c.admin.writeKubeconfig(c.KubeconfigPath(), c.apiServerURL, "edgeplane-admin"); err != nil {
		return err
	}
	c.restConfig = c.admin.restConfig(c.apiServerURL)
	cl, err := client.New(c.restConfig, client.Options{Scheme: c.opts.Scheme})
	if err != nil {
		return fmt.Errorf("building client: %w", err)
	}
	c.client = cl
	return nil
}

// withLogTail appends the log tails of the named components to err.
func (c *Cluster) withLogTail(err error, names ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range names {
		for _, p := range c.procs {
			if p.name == name {
				err = fmt.Errorf("%w%s", err, p.logTail())
			}
		}
	}
	return err
}

// componentKubeconfig is the kubeconfig a component connects with.
func (c *Cluster) componentKubeconfig(name string) string { return ComponentKubeconfig(c.dir, name) }

// ComponentKubeconfig is where the cluster in dir (Options.Dir) keeps the
// kubeconfig of a component (Scheduler, ControllerManager, ...): known
// before the cluster starts, for configuration files handed to Start.
func ComponentKubeconfig(dir, component string) string {
	return filepath.Join(dir, "kubeconfigs", component+".kubeconfig")
}

func (c *Cluster) logDir() string { return filepath.Join(c.dir, "logs") }

// Dir is the cluster's working directory.
func (c *Cluster) Dir() string { return c.dir }

// LogDir holds one <component>.log per process.
func (c *Cluster) LogDir() string { return c.logDir() }

// LogPath is the log file of a component (Etcd, APIServer, ...).
func (c *Cluster) LogPath(component string) string {
	return filepath.Join(c.logDir(), component+".log")
}

// RESTConfig returns a copy of the admin (system:masters) client
// configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// KubeconfigPath is an admin kubeconfig file for kubectl and other tools.
// Certificates are inline, so the file can be copied elsewhere.
func (c *Cluster) KubeconfigPath() string {
	return filepath.Join(c.dir, "kubeconfigs", "admin.kubeconfig")
}

// Client is an admin controller-runtime client using Options.Scheme. It reads
// straight from the API server (no cache), so tests see their own writes.
func (c *Cluster) Client() client.Client { return c.client }
