package promtext

import (
	"maps"
	"math"
	"strings"
	"testing"
)

func TestParseAndLabels(t *testing.T) {
	families, err := Parse(strings.NewReader(`# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="a",result="success"} 3
controller_runtime_reconcile_total{controller="a",result="error"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		got = append(got, Labels(m))
	}
	want := []map[string]string{{"controller": "a", "result": "success"}, {"controller": "a", "result": "error"}}
	if len(got) != len(want) || !maps.Equal(got[0], want[0]) || !maps.Equal(got[1], want[1]) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	if _, err := Parse(strings.NewReader("not metrics {")); err == nil {
		t.Fatal("Parse accepted text that is not the exposition format")
	}
}

func TestDelta(t *testing.T) {
	got := Delta(map[string]int{"a": 5, "b": 2, "c": 1}, map[string]int{"a": 3, "b": 2})
	if want := map[string]int{"a": 2, "c": 1}; !maps.Equal(got, want) {
		t.Fatalf("Delta = %v, want %v (unchanged keys dropped, new keys counted from zero)", got, want)
	}
}

func TestBucketsAndQuantileAtMost(t *testing.T) {
	fams, err := Parse(strings.NewReader(`# TYPE d histogram
d_bucket{op="a",le="0.005"} 95
d_bucket{op="a",le="0.025"} 99
d_bucket{op="a",le="+Inf"} 100
d_sum{op="a"} 1
d_count{op="a"} 100
d_bucket{op="b",le="0.005"} 10
d_bucket{op="b",le="0.025"} 10
d_bucket{op="b",le="+Inf"} 10
d_sum{op="b"} 0.01
d_count{op="b"} 10
`))
	if err != nil {
		t.Fatal(err)
	}
	got := Buckets(fams["d"], func(l map[string]string) bool { return l["op"] == "a" })
	if want := map[float64]float64{0.005: 95, 0.025: 99, math.Inf(1): 100}; !maps.Equal(got, want) {
		t.Fatalf("Buckets = %v, want %v", got, want)
	}
	all := Buckets(fams["d"], func(map[string]string) bool { return true })
	for _, c := range []struct {
		name    string
		buckets map[float64]float64
		q       float64
		n       int
		want    float64
	}{
		{"p99 of the 100: one above 25 ms", got, 0.99, 100, 0.025},
		{"p90 of the 100", got, 0.90, 100, 0.005},
		{"p50 of the 100", got, 0.5, 100, 0.005},
		{"p100: one beyond every bound", got, 1, 100, math.Inf(1)},
		// Only 50 of the observations are ours: the 5 above 5 ms may all be
		// ours, more than 1% of 50, and the one above 25 ms too.
		{"p99 of 50 among them", got, 0.99, 50, math.Inf(1)},
		{"p90 of 50 among them", got, 0.90, 50, 0.005},
		// Other observations, all fast, do not lower the bound.
		{"p99 of the 100 among 10 more", all, 0.99, 100, 0.025},
		{"nothing observed", map[float64]float64{0.005: 0, math.Inf(1): 0}, 0.99, 0, 0.005},
	} {
		if got := QuantileAtMost(c.buckets, c.q, c.n); got != c.want {
			t.Errorf("%s: QuantileAtMost = %v, want %v", c.name, got, c.want)
		}
	}
}
