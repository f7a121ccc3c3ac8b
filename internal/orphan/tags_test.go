package orphan

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

func TestDeletes(t *testing.T) {
	cases := map[string]struct {
		p    xpv2.ManagementPolicies
		want bool
	}{
		"none (default)": {want: true},
		"all":            {p: xpv2.ManagementPolicies{xpv2.ManagementActionAll}, want: true},
		"explicit Delete": {p: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate,
			xpv2.ManagementActionLateInitialize, xpv2.ManagementActionDelete}, want: true},
		"no Delete": {p: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate,
			xpv2.ManagementActionLateInitialize}},
		"observe only": {p: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Deletes(tc.p); got != tc.want {
				t.Fatalf("Deletes(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}
