package decide

import (
	"testing"
	"time"
)

// The fuzz target lives here, in a package without an API server: fuzz
// workers re-run TestMain, and the controller package's starts envtest.
func FuzzParseMillis(f *testing.F) {
	f.Add("1795316400123")
	f.Add("")
	f.Add("-1")
	f.Add("99999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		if ts, err := ParseMillis(s); err == nil && ts.Before(time.Unix(0, 0)) {
			t.Fatalf("ParseMillis(%q) = %v before the epoch", s, ts)
		}
	})
}
