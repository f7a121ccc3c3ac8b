package expect

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTransitionsOwn(t *testing.T) {
	type write struct{ key, before, after string }
	cases := map[string]struct {
		writes             []write
		key, before, after string
		advance            time.Duration
		want               bool
	}{
		"our write, exactly":              {writes: []write{{"k", "1", "2"}}, key: "k", before: "1", after: "2", want: true},
		"nothing written":                 {key: "k", before: "1", after: "2"},
		"someone wrote before our patch":  {writes: []write{{"k", "1", "3"}}, key: "k", before: "2", after: "3"},
		"someone wrote after our patch":   {writes: []write{{"k", "1", "2"}}, key: "k", before: "2", after: "3"},
		"the event spans several writes":  {writes: []write{{"k", "2", "3"}}, key: "k", before: "1", after: "3"},
		"another object":                  {writes: []write{{"k", "1", "2"}}, key: "other", before: "1", after: "2"},
		"two writes in a row, the second": {writes: []write{{"k", "1", "2"}, {"k", "2", "3"}}, key: "k", before: "2", after: "3", want: true},
		"two writes in a row, the first":  {writes: []write{{"k", "1", "2"}, {"k", "2", "3"}}, key: "k", before: "1", after: "2", want: true},
		"unknown start is never recorded": {writes: []write{{"k", "", "2"}}, key: "k", before: "", after: "2"},
		"expired":                         {writes: []write{{"k", "1", "2"}}, key: "k", before: "1", after: "2", advance: 2 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			tr := NewTransitions[string](time.Minute, 10, clk)
			for _, w := range tc.writes {
				tr.Record(w.key, w.before, w.after)
			}
			clk.Step(tc.advance)
			if got := tr.Own(tc.key, tc.before, tc.after); got != tc.want {
				t.Errorf("Own(%q, %q, %q) = %v, want %v", tc.key, tc.before, tc.after, got, tc.want)
			}
		})
	}
	var none *Transitions[string]
	none.Record("k", "1", "2")
	if none.Own("k", "1", "2") {
		t.Error("a nil Transitions owns nothing")
	}
}
