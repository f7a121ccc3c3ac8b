// Package promtext reads Prometheus metrics for tests and benchmarks: a
// process's metrics in the text exposition format, a metric's labels, and
// how counters moved between two readings.
package promtext

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// Parse decodes metrics in the text exposition format, by family name.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return families, nil
}

// Get reads and parses the metrics served at url.
func Get(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading %s: %s", url, resp.Status)
	}
	return Parse(resp.Body)
}

// Labels returns m's labels by name.
func Labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Delta is after − before for every key whose value changed: what counters
// read twice counted in between.
func Delta[K comparable, V int | int64 | float64](after, before map[K]V) map[K]V {
	out := map[K]V{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Buckets sums the cumulative bucket counts of fam's histograms whose labels
// match, by upper bound (the +Inf bucket is the count).
func Buckets(fam *dto.MetricFamily, match func(labels map[string]string) bool) map[float64]float64 {
	out := map[float64]float64{}
	for _, m := range fam.GetMetric() {
		h := m.GetHistogram()
		if h == nil || !match(Labels(m)) {
			continue
		}
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				out[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
		out[math.Inf(1)] += float64(h.GetSampleCount())
	}
	return out
}

// QuantileAtMost is the least bucket bound that at least q of n observations
// are known to lie within, from cumulative bucket counts that may also hold
// other observations: it counts every observation above a bound as one of
// the n, so other observations can only raise it. +Inf when no finite
// bound is known.
func QuantileAtMost(buckets map[float64]float64, q float64, n int) float64 {
	total := buckets[math.Inf(1)]
	allowed := math.Floor((1-q)*float64(n) + 1e-9) // 1 − 0.9 is not 0.1 in floating point
	for _, le := range slices.Sorted(maps.Keys(buckets)) {
		if total-buckets[le] <= allowed {
			return le
		}
	}
	return math.Inf(1)
}

// APIServer reads and parses the metrics a kube-apiserver serves at
// /metrics, through c (e.g. a clientset's Discovery().RESTClient()).
func APIServer(ctx context.Context, c rest.Interface) (map[string]*dto.MetricFamily, error) {
	raw, err := c.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return Parse(bytes.NewReader(raw))
}
