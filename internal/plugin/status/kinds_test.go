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

func TestPodElasticIPDetail(t *testing.T) {
	peip := func(spec, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "web-0", "namespace": "shop"},
			"spec": spec, "status": status}}
	}
	bound := map[string]any{"publicIP": "198.19.0.7", "nodeName": "w1"}
	cases := []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"no address", peip(map[string]any{"podName": "web-0"}, nil), "pod shop/web-0: no address yet"},
		{"bound", peip(map[string]any{"podName": "web-0"}, bound), "198.19.0.7 → pod shop/web-0 on w1"},
		{"tencent, bound", peip(map[string]any{"podName": "web-0", "tencent": map[string]any{"addressType": "HighQualityEIP", "internetMaxBandwidthOut": int64(10)}}, bound),
			"198.19.0.7 → pod shop/web-0 on w1 (Tencent HighQualityEIP, 10 Mbps)"},
		{"tencent, no address", peip(map[string]any{"podName": "web-0", "tencent": map[string]any{}}, nil), "pod shop/web-0: no address yet (Tencent)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podElasticIPDetail(tc.u); got != tc.want {
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
