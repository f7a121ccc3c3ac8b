package expect

import (
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestCheck(t *testing.T) {
	type step func(w *Writes[string, string])
	record := func(v, version string, supersedes ...string) step {
		return func(w *Writes[string, string]) { w.Record("k", v, version, supersedes...) }
	}
	cases := map[string]struct {
		steps       []step
		version     string
		wantValue   string
		wantVerdict Verdict
	}{
		"nothing remembered": {version: "1", wantVerdict: None},
		"the cache still shows the version the write replaced": {
			steps: []step{record("mine", "2", "1")}, version: "1", wantValue: "mine", wantVerdict: Behind},
		"the cache shows the write": {
			steps: []step{record("mine", "2", "1")}, version: "2", wantValue: "mine", wantVerdict: Current},
		"someone else wrote since": {
			steps: []step{record("mine", "2", "1")}, version: "3", wantValue: "mine", wantVerdict: Newer},
		"every earlier version of a chain of writes is behind": {
			steps: []step{record("a", "2", "1"), record("b", "3", "2"), record("c", "4")}, version: "1", wantValue: "c", wantVerdict: Behind},
		"a write in flight makes any copy behind": {
			steps: []step{func(w *Writes[string, string]) { w.InFlight("k", "next", "1") }}, version: "7", wantValue: "next", wantVerdict: Behind},
		"forgotten": {
			steps: []step{record("mine", "2", "1"), func(w *Writes[string, string]) { w.Forget("k") }}, version: "1", wantVerdict: None},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := New[string, string](time.Minute, 10, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
			for _, s := range tc.steps {
				s(w)
			}
			v, verdict := w.Check("k", tc.version)
			if v != tc.wantValue || verdict != tc.wantVerdict {
				t.Errorf("Check = %q, %v; want %q, %v", v, verdict, tc.wantValue, tc.wantVerdict)
			}
		})
	}
}

// TestSupersededBounded: only the newest versions are remembered as
// superseded; an older one reads as someone else's.
func TestSupersededBounded(t *testing.T) {
	w := New[string, string](time.Minute, 10, nil)
	for i := range maxSuperseded + 5 {
		w.Record("k", "v", fmt.Sprint(i+1), fmt.Sprint(i))
	}
	if _, got := w.Check("k", fmt.Sprint(maxSuperseded+4)); got != Behind {
		t.Errorf("the newest superseded version: %v, want Behind", got)
	}
	if _, got := w.Check("k", "0"); got != Newer {
		t.Errorf("a version beyond the bound: %v, want Newer", got)
	}
}

func TestExpiry(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	w := New[string, int](time.Minute, 2, clk)
	w.Record("a", 1, "")
	clk.SetTime(clk.Now().Add(59 * time.Second))
	if v, ok := w.Get("a"); !ok || v != 1 {
		t.Fatalf("Get within the TTL = %d, %v", v, ok)
	}
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if _, ok := w.Get("a"); ok {
		t.Errorf("an entry older than the TTL is still remembered")
	}
	// Beyond the size bound the least recently used goes.
	w.Record("a", 1, "")
	w.Record("b", 2, "")
	w.Record("c", 3, "")
	if _, ok := w.Get("a"); ok {
		t.Errorf("the oldest entry survived beyond the size bound")
	}
	if _, ok := w.Get("c"); !ok {
		t.Errorf("the newest entry is gone")
	}
}

func TestClaim(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	w := New[string, bool](5*time.Second, 10, clk)
	if !w.Claim("10.0.0.1", true) {
		t.Fatal("the first claim failed")
	}
	if w.Claim("10.0.0.1", true) {
		t.Error("a second claim of a claimed key succeeded")
	}
	clk.SetTime(clk.Now().Add(6 * time.Second))
	if !w.Claim("10.0.0.1", true) {
		t.Error("a claim after the TTL failed")
	}
	w.Forget("10.0.0.1")
	if !w.Claim("10.0.0.1", true) {
		t.Error("a claim after Forget failed")
	}
}
