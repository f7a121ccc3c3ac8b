package ipam

import "testing"

func TestGroupOfKey(t *testing.T) {
	cases := map[string]string{
		"pool__web_dp_ns_app_pod-1":  "web",
		"pool__web_":                 "web",
		"pool__web-2_sts_ns_db_db-0": "web-2",
		// The rest need not parse: the pool is still named.
		"pool__web_garbage": "web",
		// Not a pool key.
		"dp_ns_app_pod-1":   "",
		"NULL_ns_NULL_pod":  "",
		"pool__":            "",
		"pool__web":         "",
		"":                  "",
		"xpool__web_dp_a_b": "",
	}
	for key, want := range cases {
		if got := GroupOfKey(key); got != want {
			t.Errorf("GroupOfKey(%q) = %q, want %q", key, got, want)
		}
	}
}
