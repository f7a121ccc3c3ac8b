package decide

import (
	"testing"

	"github.com/edgeplane/edgeplane/internal/cloud/aws"
)

func TestForeignHolder(t *testing.T) {
	ours := aws.Address{AllocationID: "eipalloc-ours", PublicIP: "198.18.0.1"}
	foreign := aws.Address{AllocationID: "eipalloc-other", PublicIP: "198.18.0.9", AssociationID: "eipassoc-1"}
	cases := map[string]struct {
		eni     string
		visible []aws.Address
		want    string
	}{
		"nothing on the IP (ours lost a race)":        {want: ""},
		"ours already there":                          {eni: ours.PublicIP, visible: []aws.Address{{AllocationID: ours.AllocationID, PublicIP: ours.PublicIP, AssociationID: "a"}}, want: ""},
		"another account's address (only the ENI)":    {eni: "203.0.113.5", want: "203.0.113.5"},
		"an address of ours (ENI and listing)":        {eni: foreign.PublicIP, visible: []aws.Address{foreign}, want: foreign.PublicIP},
		"on a delegated prefix IP (only the listing)": {visible: []aws.Address{foreign}, want: foreign.PublicIP},
		"a listed address that is not associated":     {visible: []aws.Address{{AllocationID: "eipalloc-x", PublicIP: "198.18.0.7"}}, want: ""},
	}
	for name, tc := range cases {
		if got := ForeignHolder(tc.eni, tc.visible, ours); got != tc.want {
			t.Errorf("%s: ForeignHolder = %q, want %q", name, got, tc.want)
		}
	}
}
