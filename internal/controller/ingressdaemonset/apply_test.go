package ingressdaemonset

import "testing"

func TestCoversValue(t *testing.T) {
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	l := func(v ...any) []any { return v }
	for _, tc := range []struct {
		name       string
		live, want any
		covers     bool
	}{
		{name: "equal", live: m("a", "1"), want: m("a", "1"), covers: true},
		{name: "live has more (defaults, other managers)", live: m("a", "1", "b", int64(2)), want: m("a", "1"), covers: true},
		{name: "a value differs", live: m("a", "2"), want: m("a", "1")},
		{name: "a key is missing", live: m("b", "1"), want: m("a", "1")},
		{name: "nested", live: m("spec", m("replicas", int64(5), "paused", false)), want: m("spec", m("replicas", int64(2)))},
		{name: "an empty map asserts nothing", live: m(), want: m("resources", m()), covers: true},
		{name: "a nil value asserts nothing", live: m(), want: m("x", nil), covers: true},
		{name: "lists element by element", live: l(m("name", "c", "image", "i:1", "imagePullPolicy", "Always")), want: l(m("name", "c", "image", "i:1")), covers: true},
		{name: "a list element differs", live: l(m("name", "c", "image", "hand:1")), want: l(m("name", "c", "image", "i:1"))},
		{name: "a list with another length", live: l("a", "b"), want: l("a")},
		{name: "an empty list asserts nothing", live: nil, want: l(), covers: true},
		{name: "a type differs", live: "1", want: m("a", "1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := coversValue(tc.live, tc.want); got != tc.covers {
				t.Errorf("coversValue(%v, %v) = %v, want %v", tc.live, tc.want, got, tc.covers)
			}
		})
	}
}
