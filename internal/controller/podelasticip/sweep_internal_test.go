package podelasticip

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// TestDropOwned: after listing the owners, the sweep keeps only the
// addresses it may be asked to delete (owner gone) or that have no owner
// to judge them by.
func TestDropOwned(t *testing.T) {
	listed := func() map[string]sweptAddr {
		return map[string]sweptAddr{
			"owned":    {owner: "u-1"},
			"orphan":   {owner: "u-2"},
			"no-owner": {},
			"legacy":   {owner: "legacy-owned", reportOnly: "legacy"},
		}
	}
	for _, tc := range []struct {
		name   string
		owners sets.Set[types.UID]
		want   []string
	}{
		{"owned ones dropped", sets.New[types.UID]("u-1", "legacy-owned"), []string{"no-owner", "orphan"}},
		{"no owner exists: all kept", sets.New[types.UID](), []string{"legacy", "no-owner", "orphan", "owned"}},
		{"an empty UID is no owner", sets.New[types.UID](""), []string{"legacy", "no-owner", "orphan", "owned"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := listed()
			dropOwned(found, tc.owners)
			got := slices.Sorted(maps.Keys(found))
			if !slices.Equal(got, tc.want) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}
