package status

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestClusterBurstPolicyDetail(t *testing.T) {
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"default", map[string]any{}, "bursting on (default)"},
		{"off", map[string]any{"spec": map[string]any{"enabled": false}}, "bursting off"},
		{"every pod, not counted yet", map[string]any{"spec": map[string]any{"enabled": true, "governs": "AllPods"}}, "bursting on, every pod governed"},
		{"every pod", map[string]any{"spec": map[string]any{"governs": "AllPods"}, "status": map[string]any{"burstPods": int64(3), "nonBurstablePods": int64(1)}},
			"bursting on (default), every pod governed: 3 burst, 1 refused"},
		{"selected pods", map[string]any{"spec": map[string]any{"governs": "SelectedPods"}}, "bursting on (default)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clusterBurstPolicyDetail(&unstructured.Unstructured{Object: tc.obj}); got != tc.want {
				t.Errorf("detail = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeElasticIPDetail(t *testing.T) {
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"no address yet", map[string]any{"spec": map[string]any{"nodeName": "n1", "allocation": map[string]any{"mode": "Pool"}}}, "node n1: no address yet (Pool)"},
		{"on the node", map[string]any{"spec": map[string]any{"nodeName": "n1", "allocation": map[string]any{"mode": "Auto"}},
			"status": map[string]any{"publicIP": "203.0.113.7", "instanceID": "i-0123456789abcdef0"}}, "203.0.113.7 → node n1 (i-0123456789abcdef0) Auto"},
	}
	for _, tc := range cases {
		if got := nodeElasticIPDetail(&unstructured.Unstructured{Object: tc.obj}); got != tc.want {
			t.Errorf("%s: detail = %q, want %q", tc.name, got, tc.want)
		}
	}
}
