package floatippool

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the float-IP metrics: pool capacity and usage, and the
// extender's latencies.
type Metrics struct {
	PoolIPs *prometheus.GaugeVec
	Latency *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		PoolIPs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edgeplane_floatippool_ips",
			Help: "IPs of a FloatIPPool by state (total, allocated, reserved, available).",
		}, []string{"pool", "state"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "edgeplane_floatip_extender_latency_seconds",
			Help:    "Latency of the float-IP scheduler extender by verb (filter, bind) and result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}, []string{"verb", "result"}),
	}
	if reg != nil {
		m.PoolIPs = register(reg, m.PoolIPs)
		m.Latency = register(reg, m.Latency)
	}
	return m
}

// register registers c, or returns the collector already registered under
// its name (a second manager in the same process shares the metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

func (m *Metrics) observe(verb string, start time.Time, err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.Latency.WithLabelValues(verb, result).Observe(time.Since(start).Seconds())
}

func (m *Metrics) setPool(pool string, total, allocated, reserved, available int64) {
	if m == nil {
		return
	}
	m.PoolIPs.WithLabelValues(pool, "total").Set(float64(total))
	m.PoolIPs.WithLabelValues(pool, "allocated").Set(float64(allocated))
	m.PoolIPs.WithLabelValues(pool, "reserved").Set(float64(reserved))
	m.PoolIPs.WithLabelValues(pool, "available").Set(float64(available))
}
