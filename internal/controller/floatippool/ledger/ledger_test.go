package ledger

import (
	"errors"
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
