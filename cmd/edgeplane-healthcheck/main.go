// Command edgeplane-healthcheck is the per-node health endpoint of an
// IngressDaemonSet. The controller runs it in a hostNetwork DaemonSet per
// health-check port, in the platform's namespace under the platform's
// ServiceAccount:
//
//	edgeplane-healthcheck --bind-address=$(HOST_IP) --port=10080 --namespace=NS --ingress-daemonset=NAME --node=$(NODE_NAME)
//
// GET /ok and /healthz answer 200 only if no update or detachment is
// pending for the node and it has at least its minimum of ready replicas
// (replicasPerNode − maxUnavailablePodsPerNode, at least 1), else 503 with a
// one-line reason. /livez and
// /metrics are served on the same port, on the bind address only (the
// node's address the load balancer checks), with the timeouts and caps of
// healthcheck.DefaultLimits. It watches only this node's Deployment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	"github.com/edgeplane/edgeplane/internal/healthcheck"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "edgeplane-healthcheck:", err)
		os.Exit(1)
	}
}

func run() error {
	var bindAddress, addr, namespace, ids, node string
	var port int
	flag.StringVar(&bindAddress, "bind-address", "", "IP address to listen on: the node's address the load balancer checks (empty: every address of the node).")
	flag.IntVar(&port, "port", 10080, "Port of /ok, /healthz, /livez and /metrics.")
	flag.StringVar(&addr, "addr", "", "Deprecated: use --bind-address and --port. host:port to listen on; wins over them when set.")
	flag.StringVar(&namespace, "namespace", "", "Namespace of the IngressDaemonSet.")
	flag.StringVar(&ids, "ingress-daemonset", "", "Name of the IngressDaemonSet.")
	flag.StringVar(&node, "node", os.Getenv("NODE_NAME"), "Name of this node (default $NODE_NAME).")
	flag.Parse()
	if namespace == "" || ids == "" || node == "" {
		return errors.New("--namespace, --ingress-daemonset and --node are required")
	}
	if addr == "" {
		if bindAddress != "" && net.ParseIP(bindAddress) == nil {
			return fmt.Errorf("--bind-address %q is not an IP address", bindAddress)
		}
		if port < 1 || port > 65535 {
			return fmt.Errorf("--port %d is not between 1 and 65535", port)
		}
		addr = net.JoinHostPort(bindAddress, strconv.Itoa(port))
	}
	name := naming.DeploymentName(ids, node)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the Kubernetes client config: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("building the scheme: %w", err)
	}
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}: {Field: fields.OneTermEqualSelector("metadata.name", name)},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the cache: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { _ = c.Start(ctx) }()
	// Start the informer for Deployments now, so the first check does not wait.
	if _, err := c.GetInformer(ctx, &appsv1.Deployment{}); err != nil {
		return fmt.Errorf("starting the Deployment informer: %w", err)
	}
	var synced atomic.Bool
	live := func() error {
		if !synced.Load() {
			syncCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if !c.WaitForCacheSync(syncCtx) {
				return errors.New("cache not synced yet")
			}
			synced.Store(true)
		}
		return nil
	}
	srv := healthcheck.NewServer(addr, healthcheck.Handler(&healthcheck.Checker{Reader: c, Namespace: namespace, Deployment: name}, live, nil),
		healthcheck.DefaultLimits())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "edgeplane-healthcheck: serving %s/%s on %s\n", namespace, name, addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
