package decide

import (
	"testing"
)

func TestForeignHolder(t *testing.T) {
	ours := Address{AllocationID: "eipalloc-ours", PublicIP: "198.18.0.1"}
	foreign := Address{AllocationID: "eipalloc-other", PublicIP: "198.18.0.9", AssociationID: "eipassoc-1"}
	cases := map[string]struct {
		eni     string
		visible []Address
		want    string
	}{
		"nothing on the IP (ours lost a race)":        {want: ""},
		"ours already there":                          {eni: ours.PublicIP, visible: []Address{{AllocationID: ours.AllocationID, PublicIP: ours.PublicIP, AssociationID: "a"}}, want: ""},
		"another account's address (only the ENI)":    {eni: "203.0.113.5", want: "203.0.113.5"},
		"an address of ours (ENI and listing)":        {eni: foreign.PublicIP, visible: []Address{foreign}, want: foreign.PublicIP},
		"on a delegated prefix IP (only the listing)": {visible: []Address{foreign}, want: foreign.PublicIP},
		"a listed address that is not associated":     {visible: []Address{{AllocationID: "eipalloc-x", PublicIP: "198.18.0.7"}}, want: ""},
	}
	for name, tc := range cases {
		if got := ForeignHolder(tc.eni, tc.visible, ours); got != tc.want {
			t.Errorf("%s: ForeignHolder = %q, want %q", name, got, tc.want)
		}
	}
}
