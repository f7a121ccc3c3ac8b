// Package healthcheck is the per-node health endpoint of an IngressDaemonSet,
// for an external load balancer: GET /ok (or /healthz) answers 200 only if
// no update or detachment is pending for this node and it serves with at
// least its minimum of ready replicas (replicasPerNode less
// maxUnavailablePodsPerNode, at least 1), otherwise 503 with a one-line
// reason. It reads only this node's Deployment.
//
// The same port serves /livez (the process is up and its cache synced) and
// /metrics, so two health-checker DaemonSets on one node (one per port)
// never collide on a metrics port.
package healthcheck

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// Evaluate decides the health of a node from its Deployment (nil: none). It
// is pure: healthy only if the Deployment exists, is not marked for an
// update (phase label) and has at least MinReady replicas ready. (The
// Deployment's observedGeneration is not compared: annotation changes move
// the generation too, and a template change only happens while the node is
// Updating.)
func Evaluate(d *appsv1.Deployment) (bool, string) {
	if d == nil {
		return false, "no Deployment for this node"
	}
	if p := d.Labels[appsv1alpha1.LabelPhase]; p != "" && p != string(appsv1alpha1.NodePhaseReady) {
		return false, fmt.Sprintf("node is %s for an update", p)
	}
	if d.DeletionTimestamp != nil {
		return false, "the node's Deployment is being deleted"
	}
	want := ptr.Deref(d.Spec.Replicas, 1)
	if want == 0 {
		return false, "no replicas on this node"
	}
	need := MinReady(d)
	if d.Status.ReadyReplicas < need {
		if need < want {
			return false, fmt.Sprintf("%d/%d replicas ready, at least %d needed", d.Status.ReadyReplicas, want, need)
		}
		return false, fmt.Sprintf("%d/%d replicas ready", d.Status.ReadyReplicas, want)
	}
	return true, fmt.Sprintf("%d/%d replicas ready", d.Status.ReadyReplicas, want)
}

// MinReady is how many ready replicas a node's Deployment needs for the node
// to serve: its replicas less what its rolling-update strategy lets be
// unavailable (maxUnavailablePodsPerNode; a percentage rounds down, as the
// Deployment controller rounds it), at least 1. Every node has a replica
// starting when replicasPerNode is raised: requiring all of them would fail
// every node at once, an outage caused by adding capacity. Without a
// rolling-update strategy every replica is needed.
func MinReady(d *appsv1.Deployment) int32 {
	want := ptr.Deref(d.Spec.Replicas, 1)
	var unavailable int32
	if ru := d.Spec.Strategy.RollingUpdate; d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType && ru != nil && ru.MaxUnavailable != nil {
		n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(want), false)
		if err == nil && n > 0 {
			unavailable = int32(min(n, int(want))) //nolint:gosec // bounded by want, an int32
		}
	}
	return max(want-unavailable, 1)
}

// Checker checks one node's Deployment.
type Checker struct {
	// Reader reads the Deployment: a cache holding just that object in the
	// binary, any client in tests.
	Reader client.Reader
	// Namespace and Deployment name this node's Deployment.
	Namespace, Deployment string
	// Timeout bounds one read (default 2s).
	Timeout time.Duration
}

// Check reads the Deployment and evaluates it.
func (c *Checker) Check(ctx context.Context) (bool, string) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := &appsv1.Deployment{}
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Deployment}, d)
	switch {
	case apierrors.IsNotFound(err):
		return Evaluate(nil)
	case err != nil:
		return false, "cannot read the node's Deployment: " + oneLine(err.Error())
	}
	return Evaluate(d)
}

func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

// Handler serves /ok, /healthz, /livez and /metrics. live reports whether
// the process is ready to answer (nil: always). Metrics are registered on
// reg (nil: a new registry).
func Handler(c *Checker, live func() error, reg *prometheus.Registry) http.Handler {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	checks := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edgeplane_ingressdaemonset_healthcheck_requests_total",
		Help: "Health checks answered, by result (healthy, unhealthy).",
	}, []string{"result"})
	healthy := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "edgeplane_ingressdaemonset_healthcheck_healthy",
		Help: "1 if the last health check of this node was healthy, else 0.",
	})
	reg.MustRegister(checks, healthy)

	mux := http.NewServeMux()
	check := func(w http.ResponseWriter, r *http.Request) {
		ok, reason := c.Check(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok {
			checks.WithLabelValues("healthy").Inc()
			healthy.Set(1)
			w.WriteHeader(http.StatusOK)
			_, _ = fmt.Fprintf(w, "healthy: %s\n", reason)
			return
		}
		checks.WithLabelValues("unhealthy").Inc()
		healthy.Set(0)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "unhealthy: %s\n", reason)
	}
	mux.HandleFunc("GET /ok", check)
	mux.HandleFunc("GET /healthz", check)
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		if live != nil {
			if err := live(); err != nil {
				http.Error(w, oneLine(err.Error()), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}
