package cloud

import (
	"testing"
	"unsafe"
)

func TestTagKey(t *testing.T) {
	// Built as a decoder builds them: separate strings of equal content.
	fresh := func(s string) string { return string([]byte(s)) }
	first := TagKey(fresh("edgeplane.io/intern-test"))
	for _, tc := range []struct {
		name, key string
		shared    bool
	}{
		{"an equal key gets the first copy", "edgeplane.io/intern-test", true},
		{"another key is its own", "edgeplane.io/intern-test-2", false},
		{"the empty key", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := fresh(tc.key)
			got := TagKey(k)
			if got != tc.key {
				t.Fatalf("TagKey(%q) = %q", tc.key, got)
			}
			if same := len(got) > 0 && unsafe.StringData(got) == unsafe.StringData(first); same != tc.shared {
				t.Errorf("shares the first copy: %v, want %v", same, tc.shared)
			}
		})
	}
}
