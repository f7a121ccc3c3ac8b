package ledger

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func pool(name string, age int, ranges ...string) Pool {
	return Pool{Name: name, UID: types.UID(name + "-uid"), Created: t0.Add(time.Duration(-age) * time.Second), Ranges: ranges}
}

func claim(name string, ranges ...string) networkingv1alpha1.FloatIPPoolClaim {
	return networkingv1alpha1.FloatIPPoolClaim{Pool: name, UID: name + "-uid", Ranges: ranges}
}

func sets(t *testing.T, pools []Pool) []ipam.Set {
	t.Helper()
	out := make([]ipam.Set, len(pools))
	for i, p := range pools {
		s, err := ipam.ParseSet(p.Ranges, p.ExcludeIPs)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

func TestAdmit(t *testing.T) {
	recreated := pool("a", 1, "10.0.0.1~10.0.0.9")
	recreated.UID = "a-new-uid"
	excluded := pool("b", 1, "10.0.0.1~10.0.0.9")
	excluded.ExcludeIPs = []string{"10.0.0.1~10.0.0.5"}
	cases := map[string]struct {
		claims      []networkingv1alpha1.FloatIPPoolClaim
		pools       []Pool
		want        []networkingv1alpha1.FloatIPPoolClaim
		wantChanged bool
	}{
		"nothing to admit": {},
		"first pool": {
			pools: []Pool{pool("a", 1, "10.0.0.1~10.0.0.9")},
			want:  []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")}, wantChanged: true,
		},
		"admitted already": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")},
			pools:  []Pool{pool("a", 1, "10.0.0.1~10.0.0.9")},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")},
		},
		"disjoint pools share a subnet": {
			pools: []Pool{pool("a", 1, "10.0.0.1~10.0.0.9"), pool("b", 1, "10.0.0.10~10.0.0.19")},
			want:  []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9"), claim("b", "10.0.0.10~10.0.0.19")}, wantChanged: true,
		},
		"of two new overlapping pools the older is admitted": {
			pools: []Pool{pool("a", 1, "10.0.0.5~10.0.0.15"), pool("b", 2, "10.0.0.1~10.0.0.9")},
			want:  []networkingv1alpha1.FloatIPPoolClaim{claim("b", "10.0.0.1~10.0.0.9")}, wantChanged: true,
		},
		"same age: the first name": {
			pools: []Pool{pool("b", 1, "10.0.0.1~10.0.0.9"), pool("a", 1, "10.0.0.9")},
			want:  []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.9")}, wantChanged: true,
		},
		"an admitted pool keeps its IPs from an older one": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("young", "10.0.0.1~10.0.0.9")},
			pools:  []Pool{pool("young", 1, "10.0.0.1~10.0.0.9"), pool("old", 100, "10.0.0.0/24")},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("young", "10.0.0.1~10.0.0.9")},
		},
		"grown ranges are claimed": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")},
			pools:  []Pool{pool("a", 1, "10.0.0.1~10.0.0.19")},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.19")}, wantChanged: true,
		},
		"ranges grown into another claim keep the old claim": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9"), claim("b", "10.0.0.10~10.0.0.19")},
			pools:  []Pool{pool("a", 1, "10.0.0.1~10.0.0.10"), pool("b", 1, "10.0.0.10~10.0.0.19")},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9"), claim("b", "10.0.0.10~10.0.0.19")},
		},
		"excluded IPs do not conflict": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.5")},
			pools:  []Pool{pool("a", 2, "10.0.0.1~10.0.0.5"), excluded},
			want: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.5"),
				{Pool: "b", UID: "b-uid", Ranges: []string{"10.0.0.1~10.0.0.9"}, ExcludeIPs: []string{"10.0.0.1~10.0.0.5"}}},
			wantChanged: true,
		},
		"a recreated pool waits for its old claim to be dropped": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")},
			pools:  []Pool{recreated},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")},
		},
		"a claim that does not parse blocks everyone": {
			claims: []networkingv1alpha1.FloatIPPoolClaim{claim("bad", "nonsense")},
			pools:  []Pool{pool("a", 1, "192.168.0.1")},
			want:   []networkingv1alpha1.FloatIPPoolClaim{claim("bad", "nonsense")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := NewBook(tc.claims)
			changed := b.Admit(tc.pools, sets(t, tc.pools))
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, b.Claims()); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
			// Whatever was admitted, no two claims share an IP.
			got := b.Claims()
			for i := range got {
				for j := range i {
					si, erri := ipam.ParseSet(got[i].Ranges, got[i].ExcludeIPs)
					sj, errj := ipam.ParseSet(got[j].Ranges, got[j].ExcludeIPs)
					if erri != nil || errj != nil {
						continue
					}
					if r, ok := si.Overlap(sj); ok {
						t.Errorf("claims of %s and %s share %s", got[i].Pool, got[j].Pool, r)
					}
				}
			}
		})
	}
}

func TestCheck(t *testing.T) {
	b := NewBook([]networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1~10.0.0.9")})
	recreated := pool("a", 1, "10.0.0.1~10.0.0.9")
	recreated.UID = "other"
	cases := map[string]struct {
		pool         Pool
		want         error
		wantConflict string
	}{
		"admitted":                      {pool: pool("a", 1, "10.0.0.1~10.0.0.9")},
		"ranges changed since":          {pool: pool("a", 1, "10.0.0.1~10.0.0.8"), want: ErrNotAdmitted},
		"recreated under the same name": {pool: recreated, want: ErrNotAdmitted},
		"new and disjoint":              {pool: pool("b", 1, "10.0.0.10"), want: ErrNotAdmitted},
		"new and overlapping":           {pool: pool("b", 1, "10.0.0.9~10.0.0.12"), wantConflict: "a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := b.Check(tc.pool, sets(t, []Pool{tc.pool})[0])
			var conflict *ConflictError
			switch {
			case tc.wantConflict != "":
				if !errors.As(err, &conflict) || conflict.Other != tc.wantConflict {
					t.Fatalf("err = %v, want a conflict with %s", err, tc.wantConflict)
				}
			case tc.want == nil && err != nil, tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestOrphansAndDrop(t *testing.T) {
	b := NewBook([]networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1"), claim("b", "10.0.0.2"), claim("c", "10.0.0.3")})
	orphans := b.Orphans(map[string]types.UID{"a": "a-uid", "b": "recreated"})
	if diff := cmp.Diff([]string{"b", "c"}, orphans); diff != "" {
		t.Fatalf("orphans (-want +got):\n%s", diff)
	}
	b.Drop(orphans)
	if diff := cmp.Diff([]networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1")}, b.Claims()); diff != "" {
		t.Fatalf("claims after Drop (-want +got):\n%s", diff)
	}
	// The freed IPs go to the next pool that asks.
	next := pool("d", 1, "10.0.0.2~10.0.0.3")
	if !b.Admit([]Pool{next}, sets(t, []Pool{next})) {
		t.Fatal("the freed IPs were not admitted")
	}
}

// singleIPs are n pools of one IP each (10.1.x.y), named p0, p1, ...
func singleIPs(n int) []networkingv1alpha1.FloatIPPoolClaim {
	out := make([]networkingv1alpha1.FloatIPPoolClaim, n)
	for i := range out {
		out[i] = claim(fmt.Sprintf("p%d", i), fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250))
	}
	return out
}

// manyRanges is a pool with n single-IP ranges in 10.2.<third>.0/24 and
// beyond.
func manyRanges(name string, third, n int) Pool {
	p := pool(name, 1)
	for i := range n {
		p.Ranges = append(p.Ranges, fmt.Sprintf("10.2.%d.%d", third+i/250, 1+i%250))
	}
	return p
}

// TestAdmitBoundsTheLedger: the ledger admits at most 1024 pools and 4096
// ranges and excludeIPs entries in all: a claim copies up to 512 entries
// of up to 100 characters, and about 30 maximal claims would pass etcd's
// object size limit. A pool past either bound is not admitted (it waits,
// as an overlapping one does); a pool whose new spec fits in the room its
// old claim leaves is.
func TestAdmitBoundsTheLedger(t *testing.T) {
	// 1024 pools: the next one waits.
	b := NewBook(singleIPs(1024))
	next := pool("next", 1, "10.3.0.1")
	if b.Admit([]Pool{next}, sets(t, []Pool{next})) {
		t.Errorf("a 1025th pool was admitted")
	}

	// 4000 entries in 16 claims of 250: a pool of 96 ranges fits, one of
	// 97 does not.
	var full []networkingv1alpha1.FloatIPPoolClaim
	for i := range 16 {
		full = append(full, networkingv1alpha1.FloatIPPoolClaim{Pool: fmt.Sprintf("big%d", i), UID: fmt.Sprintf("big%d-uid", i),
			Ranges: manyRanges("x", 10+i, 250).Ranges})
	}
	over, fits := manyRanges("over", 100, 97), manyRanges("fits", 110, 96)
	b = NewBook(full)
	if b.Admit([]Pool{over}, sets(t, []Pool{over})) {
		t.Errorf("a pool taking the ledger to 4097 entries was admitted")
	}
	if !b.Admit([]Pool{fits}, sets(t, []Pool{fits})) {
		t.Errorf("a pool taking the ledger to exactly 4096 entries was not admitted")
	}

	// A full ledger still takes a pool's changed spec that needs no more
	// room than its claim held.
	shrunk := manyRanges("fits", 110, 95)
	if !b.Admit([]Pool{shrunk}, sets(t, []Pool{shrunk})) {
		t.Errorf("a pool's smaller spec was not admitted into a full ledger")
	}
}

// TestCheckReportsAFullLedger: a pool the limits keep out is told so (a
// *FullError naming the limits), not left pending; a pool already admitted
// stays admitted in a full ledger; Drop keeps the limits.
func TestCheckReportsAFullLedger(t *testing.T) {
	b := NewBook([]networkingv1alpha1.FloatIPPoolClaim{claim("a", "10.0.0.1"), claim("b", "10.0.0.2")})
	b.SetLimits(Limits{MaxClaims: 2, MaxEntries: 10})
	c := pool("c", 1, "10.0.0.3")
	var full *FullError
	if err := b.Check(c, sets(t, []Pool{c})[0]); !errors.As(err, &full) || full.Claims != 3 || full.Limits.MaxClaims != 2 {
		t.Fatalf("Check of a pool past the limits: %v, want a FullError for 3 claims over 2", err)
	}
	if a := pool("a", 1, "10.0.0.1"); b.Check(a, sets(t, []Pool{a})[0]) != nil {
		t.Error("an admitted pool is refused in a full ledger")
	}
	b.Drop([]string{"b"})
	b.SetLimits(Limits{MaxClaims: 1, MaxEntries: 10})
	b.Drop(nil)
	if err := b.Check(c, sets(t, []Pool{c})[0]); !errors.As(err, &full) {
		t.Errorf("after Drop: %v, want the limits kept", err)
	}
	if DefaultLimits.MaxClaims != 1024 || DefaultLimits.MaxEntries != 4096 {
		t.Errorf("default limits %+v, want the CRD's 1024 claims and 4096 entries", DefaultLimits)
	}
}
