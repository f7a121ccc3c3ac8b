// Package monitoring tests what an operator looks at: the chart's alert rules
// (every expression run by promtool against synthetic series, every alert
// documented with a runbook), the Grafana dashboard, and that every query of
// both names only metrics, and labels, that a running manager really
// exports. The Prometheus tools are built from Prometheus' Go module by
// hack/build-prometheus-tools.sh (`make prometheus-tools`, a prerequisite of
// `make test`).
package monitoring
