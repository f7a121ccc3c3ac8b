package orphan

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics, registered in controller-runtime's registry so the manager's
// /metrics endpoint serves them. The kind label is the Sweeper's Kind.
var (
	orphansFound = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "found_total",
		Help:      "Orphaned cloud objects found past their grace period, by kind and the action taken (Report or Delete). An orphan that is only reported is counted again on every sweep.",
	}, []string{"kind", "action"})

	orphansDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "deleted_total",
		Help:      "Orphaned cloud objects deleted, by kind.",
	}, []string{"kind"})

	orphanDeleteErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "delete_errors_total",
		Help:      "Failed deletions of orphaned cloud objects, by kind.",
	}, []string{"kind"})

	orphanDeletionsHeld = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "deletions_held_total",
		Help:      "Orphaned cloud objects a sweep would have deleted but held back to the next sweep because it reached its deletion cap (--<kind>-orphan-max-deletions), by kind. An orphan held back again is counted again.",
	}, []string{"kind"})

	orphansCurrent = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "objects",
		Help:      "Orphaned cloud objects past their grace period seen by the last completed sweep and still present afterwards (reported, whose deletion failed, or held back by the deletion cap), by kind. Alert on this in report mode.",
	}, []string{"kind"})

	sweepErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "sweep_errors_total",
		Help:      "Sweeps that could not list cloud objects or their owners, by kind.",
	}, []string{"kind"})

	lastSweep = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "last_sweep_timestamp_seconds",
		Help:      "Unix time at which the last completed sweep started, by kind.",
	}, []string{"kind"})

	lastSweepDuration = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "edgeplane",
		Subsystem: "orphan",
		Name:      "last_sweep_duration_seconds",
		Help:      "How long the last completed sweep took, by kind.",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(
		orphansFound, orphansDeleted, orphanDeleteErrors, orphanDeletionsHeld, orphansCurrent,
		sweepErrors, lastSweep, lastSweepDuration,
	)
}
