package expect

import (
	"fmt"
	"slices"
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

// TestTickets: a write in flight is settled by its own ticket only; a
// newer write of the key, expiry or Forget leave the settling a no-op.
func TestTickets(t *testing.T) {
	type state struct {
		w   *Writes[string, string]
		clk *clocktesting.FakePassiveClock
		t   Ticket
	}
	cases := map[string]struct {
		steps []func(s *state) bool // each returns what its call reported
		want  []bool
		// then: Check("k", version)
		version     string
		wantValue   string
		wantVerdict Verdict
	}{
		"landed: the superseded version is behind, the written one current": {
			steps: []func(s *state) bool{func(s *state) bool { return s.w.Landed("k", s.t, "mine", "2") }},
			want:  []bool{true}, version: "1", wantValue: "mine", wantVerdict: Behind,
		},
		"landed: the written version is current": {
			steps: []func(s *state) bool{func(s *state) bool { return s.w.Landed("k", s.t, "mine", "2") }},
			want:  []bool{true}, version: "2", wantValue: "mine", wantVerdict: Current,
		},
		"failed: forgotten": {
			steps: []func(s *state) bool{func(s *state) bool { return s.w.Failed("k", s.t) }},
			want:  []bool{true}, version: "1", wantVerdict: None,
		},
		"a newer write in flight is not settled by the older ticket": {
			steps: []func(s *state) bool{
				func(s *state) bool { s.w.InFlight("k", "newer", "1"); return true },
				func(s *state) bool { return s.w.Failed("k", s.t) },
				func(s *state) bool { return s.w.Landed("k", s.t, "older", "2") },
			},
			want: []bool{true, false, false}, version: "2", wantValue: "newer", wantVerdict: Behind,
		},
		"a record replaces the write in flight": {
			steps: []func(s *state) bool{
				func(s *state) bool { s.w.Record("k", "read", "5"); return true },
				func(s *state) bool { return s.w.Landed("k", s.t, "older", "2") },
			},
			want: []bool{true, false}, version: "5", wantValue: "read", wantVerdict: Current,
		},
		"a write in flight expires after the TTL": {
			steps: []func(s *state) bool{
				func(s *state) bool { s.clk.SetTime(s.clk.Now().Add(time.Minute + time.Second)); return true },
				func(s *state) bool { return s.w.Landed("k", s.t, "mine", "2") },
			},
			want: []bool{true, false}, version: "1", wantVerdict: None,
		},
		"forgotten while in flight": {
			steps: []func(s *state) bool{
				func(s *state) bool { s.w.Forget("k"); return true },
				func(s *state) bool { return s.w.Landed("k", s.t, "mine", "2") },
			},
			want: []bool{true, false}, version: "1", wantVerdict: None,
		},
		"the TTL runs from the landing": {
			steps: []func(s *state) bool{
				func(s *state) bool { s.clk.SetTime(s.clk.Now().Add(50 * time.Second)); return true },
				func(s *state) bool { return s.w.Landed("k", s.t, "mine", "2") },
				func(s *state) bool { s.clk.SetTime(s.clk.Now().Add(50 * time.Second)); return true },
			},
			want: []bool{true, true, true}, version: "2", wantValue: "mine", wantVerdict: Current,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			s := &state{w: New[string, string](time.Minute, 10, clk), clk: clk}
			s.t = s.w.InFlight("k", "next", "1")
			for i, step := range tc.steps {
				if got := step(s); got != tc.want[i] {
					t.Fatalf("step %d reported %v, want %v", i, got, tc.want[i])
				}
			}
			v, verdict := s.w.Check("k", tc.version)
			if v != tc.wantValue || verdict != tc.wantVerdict {
				t.Errorf("Check = %q, %v; want %q, %v", v, verdict, tc.wantValue, tc.wantVerdict)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	w := New[string, int](time.Minute, 3, clk)
	w.Record("a", 1, "")
	clk.SetTime(clk.Now().Add(30 * time.Second))
	w.Record("b", 2, "")
	w.Record("c", 3, "")
	w.Forget("c")
	if got := w.Keys(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Keys = %v, want [a b] (least recently used first, forgotten left out)", got)
	}
	clk.SetTime(clk.Now().Add(31 * time.Second))
	if got := w.Keys(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Keys after a's TTL = %v, want [b]", got)
	}
	w.Record("d", 4, "")
	w.Record("e", 5, "")
	w.Record("f", 6, "")
	if got := w.Keys(); !slices.Equal(got, []string{"d", "e", "f"}) {
		t.Errorf("Keys beyond the size bound = %v, want [d e f]", got)
	}
}

func TestLazy(t *testing.T) {
	var l Lazy[string, int]
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	w := l.Get(time.Minute, 10, clk)
	if l.Get(time.Hour, 1, nil) != w {
		t.Fatal("a second Get made another store")
	}
	w.Record("a", 1, "")
	clk.SetTime(clk.Now().Add(61 * time.Second))
	if _, ok := w.Get("a"); ok {
		t.Error("the store does not run on the first Get's clock and TTL")
	}
}

// TestObserve: Observe answers as Check and forgets the key exactly when
// the reader has caught up.
func TestObserve(t *testing.T) {
	cases := map[string]struct {
		inFlight       bool
		version        string
		wantVerdict    Verdict
		wantRemembered bool
	}{
		"behind: kept":       {version: "1", wantVerdict: Behind, wantRemembered: true},
		"current: forgotten": {version: "2", wantVerdict: Current},
		"newer: forgotten":   {version: "3", wantVerdict: Newer},
		"in flight: kept":    {inFlight: true, version: "2", wantVerdict: Behind, wantRemembered: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := New[string, string](time.Minute, 10, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
			if tc.inFlight {
				w.InFlight("k", "mine", "1")
			} else {
				w.Record("k", "mine", "2", "1")
			}
			v, verdict := w.Observe("k", tc.version)
			if v != "mine" || verdict != tc.wantVerdict {
				t.Errorf("Observe = %q, %v; want mine, %v", v, verdict, tc.wantVerdict)
			}
			if _, ok := w.Get("k"); ok != tc.wantRemembered {
				t.Errorf("remembered after Observe = %v, want %v", ok, tc.wantRemembered)
			}
		})
	}
}

// TestSweep: expired entries nobody reads again are dropped within a TTL
// of a later write, not kept until the size bound pushes them out.
func TestSweep(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	w := New[string, int](time.Minute, 100, clk)
	held := func() (n int) { // every entry the cache holds, expired or not
		w.lru.RemoveAll(func(any) bool { n++; return false })
		return n
	}
	at := func(d time.Duration) { clk.SetTime(time.Unix(0, 0).Add(d)) }
	w.Record("a", 1, "") // sweeps (nothing), the next sweep is due at 60 s
	at(30 * time.Second)
	w.Record("b", 2, "")
	at(61 * time.Second) // a expired
	w.Record("c", 3, "") // sweeps a; next due at 121 s
	if n := held(); n != 2 {
		t.Fatalf("%d entries held after the first sweep, want 2 (b, c)", n)
	}
	at(91 * time.Second) // b expired, no sweep due
	w.Record("d", 4, "")
	if n := held(); n != 3 {
		t.Fatalf("%d entries held before the next sweep is due, want 3 (b, c, d)", n)
	}
	at(122 * time.Second) // c expired too; a sweep is due
	w.Record("e", 5, "")
	if got := w.Keys(); !slices.Equal(got, []string{"d", "e"}) || held() != 2 {
		t.Errorf("after the sweep Keys = %v and %d entries held, want [d e] and 2", got, held())
	}
}

func TestEcho(t *testing.T) {
	type write struct{ key, before, after string }
	cases := map[string]struct {
		writes             []write
		inFlight           *write // a write in flight, then landed
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
		"an in-flight write that landed":  {inFlight: &write{"k", "1", "2"}, key: "k", before: "1", after: "2", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			w := New[string, struct{}](time.Minute, 10, clk)
			for _, wr := range tc.writes {
				w.Record(wr.key, struct{}{}, wr.after, wr.before)
			}
			if f := tc.inFlight; f != nil {
				tk := w.InFlight(f.key, struct{}{}, f.before)
				if w.Echo(f.key, f.before, f.after) {
					t.Error("a write still in flight has no echo yet")
				}
				w.Landed(f.key, tk, struct{}{}, f.after)
			}
			clk.Step(tc.advance)
			if got := w.Echo(tc.key, tc.before, tc.after); got != tc.want {
				t.Errorf("Echo(%q, %q, %q) = %v, want %v", tc.key, tc.before, tc.after, got, tc.want)
			}
		})
	}
}
