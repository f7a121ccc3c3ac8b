package promtext

import (
	"maps"
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
