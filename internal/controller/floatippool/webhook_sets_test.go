package floatippool

import (
	"context"
	"strings"
	"testing"
)

// TestValidatorReparsesChangedPools checks that the validator's cache of
// parsed pools answers as parsing every pool afresh would: a pool changed
// since (a new resourceVersion) is checked with its new ranges, a pool that
// does not parse is skipped, and a deleted pool no longer refuses anything.
func TestValidatorReparsesChangedPools(t *testing.T) {
	ctx := context.Background()
	other, bad := benchPool(1), benchPool(2)
	bad.Spec.Subnet = "not-a-subnet"
	r := &poolReader{}
	v := &PoolValidator{Reader: r}
	check := func(wantOverlap string) {
		t.Helper()
		for range 2 { // the second time from the cache
			pool := benchPool(1)
			pool.Name = "new"
			_, err := v.ValidateCreate(ctx, pool)
			switch {
			case wantOverlap == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case wantOverlap != "" && (err == nil || !strings.Contains(err.Error(), "overlaps FloatIPPool "+wantOverlap)):
				t.Fatalf("got %v, want an overlap with %s", err, wantOverlap)
			}
		}
	}
	r.pools = append(r.pools[:0], *other, *bad)
	check(other.Name)
	moved := benchPool(3)
	moved.Name, moved.ResourceVersion = other.Name, "2000"
	r.pools = append(r.pools[:0], *moved, *bad)
	check("")
	// The pool that does not parse but covers the IPs is skipped, as before.
	bad.Spec.Ranges = other.Spec.Ranges
	bad.ResourceVersion = "2001"
	r.pools = append(r.pools[:0], *moved, *bad)
	check("")
	bad.Spec.Subnet = other.Spec.Subnet
	bad.ResourceVersion = "2002"
	r.pools = append(r.pools[:0], *moved, *bad)
	check(bad.Name)
	r.pools = r.pools[:1]
	check("")
}
