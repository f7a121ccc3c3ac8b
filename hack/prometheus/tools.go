//go:build tools

// Package tools pins promtool, which `make test` runs (test/monitoring) to check
// the chart's alert rules with `promtool test rules`.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
