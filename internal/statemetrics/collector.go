package statemetrics

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	descResources = prometheus.NewDesc("edgeplane_resources",
		"Objects of an edgeplane kind, as the manager's cache holds them.", []string{"kind"}, nil)
	descNotReady = prometheus.NewDesc("edgeplane_resources_not_ready",
		"Objects of a kind whose Ready condition is not True, by its reason (NoStatus: no Ready condition yet; Progressing: the condition describes an older generation).",
		[]string{"kind", "reason"}, nil)
	descNotReadySince = prometheus.NewDesc("edgeplane_resources_not_ready_since_timestamp_seconds",
		"Unix time at which the longest-standing not-Ready object of a kind and reason stopped being Ready (its Ready condition's last transition, or its creation when it has none). time() minus this is how long it has been waiting.",
		[]string{"kind", "reason"}, nil)
	descIDSNodes = prometheus.NewDesc("edgeplane_ingressdaemonset_nodes",
		"Nodes of an IngressDaemonSet by state: desired (matching), updated (running the update revision), available (every replica ready and attached).",
		[]string{"namespace", "name", "state"}, nil)
	descIDSRollout = prometheus.NewDesc("edgeplane_ingressdaemonset_rollout_in_progress",
		"1 while an IngressDaemonSet's Progressing condition is True (nodes are being updated), else 0.",
		[]string{"namespace", "name"}, nil)
	descBurstReplicas = prometheus.NewDesc("edgeplane_burstpolicy_replicas",
		"Pods a BurstPolicy governs by placement: local (bound to a local node), burst (bound to a virtual node), pending (not bound yet).",
		[]string{"namespace", "name", "placement"}, nil)
	descFloorShort = prometheus.NewDesc("edgeplane_burstpolicy_local_floor_short",
		"1 while a BurstPolicy's LocalCapacityShort condition is True (replicas that must stay local cannot be scheduled), else 0.",
		[]string{"namespace", "name"}, nil)
	descLeaseTransitions = prometheus.NewDesc("edgeplane_leader_lease_transitions",
		"The leader-election Lease's spec.leaseTransitions: how many times leadership changed hands since the Lease was created. Every replica reads the same Lease.",
		[]string{"lease"}, nil)
	descScrapeErrors = prometheus.NewDesc("edgeplane_state_metrics_errors",
		"1 when the kind could not be read from the cache for this scrape (its series are then missing), else 0.",
		[]string{"kind"}, nil)
)

// listTimeout bounds a scrape's reads of the cache: a cache that has not
// synced yet must not hang the scrape.
const listTimeout = 5 * time.Second

// source is one manager's cache and the kinds its controllers reconcile.
type source struct {
	reader client.Reader
	kinds  []Kind
	log    logr.Logger
	// lease is the leader-election Lease (empty without leader election),
	// read with leaseReader: the cache holds no Leases.
	lease       client.ObjectKey
	leaseReader client.Reader
}

// collector reports the state of the most recently started source. One
// process runs one manager; tests run several in turn, and each scrape
// must see one set of series, never two managers' duplicates.
type collector struct {
	mu      sync.Mutex
	sources []*source
}

var (
	global   = &collector{}
	register sync.Once
)

// Runnable is a manager runnable that makes the manager's cache the source
// of the metrics while the manager runs (on every replica: it needs no
// leader election).
type Runnable struct {
	src *source
}

// NewRunnable returns the runnable for a manager whose cache is reader and
// whose enabled controllers are controllers.
func NewRunnable(reader client.Reader, controllers []string, log logr.Logger) *Runnable {
	return NewRunnableWithLease(reader, controllers, nil, client.ObjectKey{}, log)
}

// NewRunnableWithLease also reports the leader-election Lease lease, read
// with leaseReader (an uncached reader).
func NewRunnableWithLease(reader client.Reader, controllers []string, leaseReader client.Reader, lease client.ObjectKey, log logr.Logger) *Runnable {
	on := map[string]bool{}
	for _, c := range controllers {
		on[c] = true
	}
	var kinds []Kind
	for _, k := range Kinds() {
		if on[k.Controller] {
			kinds = append(kinds, k)
		}
	}
	return &Runnable{src: &source{reader: reader, kinds: kinds, log: log, lease: lease, leaseReader: leaseReader}}
}

// NeedLeaderElection is false: every replica serves the same state.
func (r *Runnable) NeedLeaderElection() bool { return false }

// Start registers the collector (once per process) and serves this
// manager's state until ctx ends.
func (r *Runnable) Start(ctx context.Context) error {
	register.Do(func() { metrics.Registry.MustRegister(global) })
	global.mu.Lock()
	global.sources = append(global.sources, r.src)
	global.mu.Unlock()
	<-ctx.Done()
	global.mu.Lock()
	defer global.mu.Unlock()
	for i, s := range global.sources {
		if s == r.src {
			global.sources = append(global.sources[:i], global.sources[i+1:]...)
			break
		}
	}
	return nil
}

// Describe sends the descriptors.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descResources, descNotReady, descNotReadySince, descIDSNodes, descIDSRollout, descBurstReplicas, descFloorShort, descLeaseTransitions, descScrapeErrors} {
		ch <- d
	}
}

// Collect reads the current source's cache.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	var src *source
	if n := len(c.sources); n > 0 {
		src = c.sources[n-1]
	}
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	src.collect(ctx, ch)
}

func (s *source) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	var states []State
	names := make([]string, 0, len(s.kinds))
	listed := map[string]bool{}
	for _, k := range s.kinds {
		got, err := k.list(ctx, s.reader)
		failed := 0.0
		if err != nil {
			s.log.Error(err, "Reading a kind's state for the metrics", "kind", k.Name)
			failed = 1
		} else {
			names = append(names, k.Name)
			listed[k.Controller] = true
		}
		ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, failed, k.Name)
		for _, st := range got {
			st.Kind = k.Name
			states = append(states, st)
		}
	}
	total, notReady := Summarize(names, states)
	for kind, n := range total {
		ch <- prometheus.MustNewConstMetric(descResources, prometheus.GaugeValue, float64(n), kind)
	}
	for _, g := range notReady {
		ch <- prometheus.MustNewConstMetric(descNotReady, prometheus.GaugeValue, float64(g.Count), g.Kind, g.Reason)
		ch <- prometheus.MustNewConstMetric(descNotReadySince, prometheus.GaugeValue, float64(g.Since.Unix()), g.Kind, g.Reason)
	}
	if listed["ingressdaemonset"] {
		rollouts, err := listRollouts(ctx, s.reader)
		if err != nil {
			s.log.Error(err, "Reading IngressDaemonSet rollouts for the metrics")
		}
		for _, r := range rollouts {
			for state, v := range map[string]int32{"desired": r.Desired, "updated": r.Updated, "available": r.Available} {
				ch <- prometheus.MustNewConstMetric(descIDSNodes, prometheus.GaugeValue, float64(v), r.Namespace, r.Name, state)
			}
			ch <- prometheus.MustNewConstMetric(descIDSRollout, prometheus.GaugeValue, boolValue(r.InProgress), r.Namespace, r.Name)
		}
	}
	if listed["burstpolicy"] {
		floors, err := listFloors(ctx, s.reader)
		if err != nil {
			s.log.Error(err, "Reading BurstPolicy floors for the metrics")
		}
		for _, f := range floors {
			for placement, v := range map[string]int32{"local": f.Local, "burst": f.Burst, "pending": f.Pending} {
				ch <- prometheus.MustNewConstMetric(descBurstReplicas, prometheus.GaugeValue, float64(v), f.Namespace, f.Name, placement)
			}
			ch <- prometheus.MustNewConstMetric(descFloorShort, prometheus.GaugeValue, boolValue(f.Short), f.Namespace, f.Name)
		}
	}
	if s.lease.Name != "" && s.leaseReader != nil {
		lease := &coordinationv1.Lease{}
		if err := s.leaseReader.Get(ctx, s.lease, lease); err != nil {
			if !apierrors.IsNotFound(err) {
				s.log.Error(err, "Reading the leader-election Lease for the metrics", "lease", s.lease)
			}
		} else {
			ch <- prometheus.MustNewConstMetric(descLeaseTransitions, prometheus.GaugeValue, float64(ptr.Deref(lease.Spec.LeaseTransitions, 0)), s.lease.Name)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
