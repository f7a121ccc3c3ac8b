package podelasticip

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
)

func TestFromTencent(t *testing.T) {
	tags := map[string]string{"k": "v"}
	base := tencentcloud.Address{ID: "eip-00000001", IP: "198.19.0.7", Tags: tags, InstanceID: "ins-1", NetworkInterfaceID: "eni-1", PrivateIP: "10.0.1.5"}
	with := func(status string) tencentcloud.Address { a := base; a.Status = status; return a }
	unbound := func(status string) tencentcloud.Address {
		a := with(status)
		a.InstanceID, a.NetworkInterfaceID, a.PrivateIP = "", "", ""
		return a
	}
	cases := []struct {
		in   tencentcloud.Address
		want decide.Address
	}{
		{with(tencentcloud.StatusBind), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags,
			AssociationID: "eni-1/10.0.1.5", NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.1.5"}},
		{with(tencentcloud.StatusBindENI), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags,
			AssociationID: "eni-1/10.0.1.5", NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.1.5"}},
		// Being bound: the target, not an association yet.
		{with(tencentcloud.StatusBinding), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags,
			Pending: decide.PendingBinding, NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.1.5"}},
		// Being unbound: no longer the pod's.
		{with(tencentcloud.StatusUnbinding), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags, Pending: decide.PendingUnbinding}},
		{unbound(tencentcloud.StatusCreating), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags, Pending: decide.PendingCreating}},
		{unbound(tencentcloud.StatusOffline), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags, Pending: decide.PendingReleasing}},
		{unbound(tencentcloud.StatusUnbind), decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags}},
		// Bound to an instance whose ENI is not shown.
		{func() tencentcloud.Address {
			a := with(tencentcloud.StatusBind)
			a.NetworkInterfaceID, a.PrivateIP = "", ""
			return a
		}(),
			decide.Address{AllocationID: "eip-00000001", PublicIP: "198.19.0.7", Tags: tags, AssociationID: "ins-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.in.Status, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fromTencent(tc.in)); diff != "" {
				t.Errorf("fromTencent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPickENI(t *testing.T) {
	eni := func(id, vpc string) tencentcloud.NetworkInterface {
		return tencentcloud.NetworkInterface{ID: id, VpcID: vpc}
	}
	cases := []struct {
		name      string
		pod, host []tencentcloud.NetworkInterface
		want      string
		ok        bool
	}{
		{"one holder", []tencentcloud.NetworkInterface{eni("eni-a", "vpc-1")}, nil, "eni-a", true},
		{"none", nil, []tencentcloud.NetworkInterface{eni("eni-n", "vpc-1")}, "", false},
		{"two VPCs, the node's decides", []tencentcloud.NetworkInterface{eni("eni-a", "vpc-1"), eni("eni-b", "vpc-2")},
			[]tencentcloud.NetworkInterface{eni("eni-n", "vpc-2")}, "eni-b", true},
		{"two VPCs, node unknown", []tencentcloud.NetworkInterface{eni("eni-a", "vpc-1"), eni("eni-b", "vpc-2")}, nil, "", false},
		{"two VPCs, node's VPC holds none", []tencentcloud.NetworkInterface{eni("eni-a", "vpc-1"), eni("eni-b", "vpc-2")},
			[]tencentcloud.NetworkInterface{eni("eni-n", "vpc-3")}, "", false},
		{"the node's IP itself ambiguous", []tencentcloud.NetworkInterface{eni("eni-a", "vpc-1"), eni("eni-b", "vpc-2")},
			[]tencentcloud.NetworkInterface{eni("eni-n", "vpc-1"), eni("eni-m", "vpc-2")}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pickENI(tc.pod, tc.host)
			if got != tc.want || ok != tc.ok {
				t.Errorf("pickENI = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
