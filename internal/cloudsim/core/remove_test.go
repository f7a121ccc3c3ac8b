package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRemoveTencent: a pod's IP handed back unbinds its EIP; a terminated
// CVM unbinds the EIP of its primary ENI, loses that ENI, and leaves its
// secondary ENI dangling with its EIP BIND_ENI.
func TestRemoveTencent(t *testing.T) {
	w, clock := eniWorld(t)
	res, err := w.ApplyFixtures(&Fixtures{Tencent: TencentFixtures{Addresses: []TCAddressFixture{
		{InstanceID: "ins-node0001"},
		{NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"},
		{NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.21"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	nodeEIP, podEIP, otherPodEIP := res.TencentAddresses[0], res.TencentAddresses[1], res.TencentAddresses[2]
	status := func(id string) (string, string, string) {
		t.Helper()
		a, _, err := w.TCDescribeAddresses(TCDescribeAddressesInput{AddressIDs: []string{id}})
		if err != nil || len(a) != 1 {
			t.Fatalf("DescribeAddresses(%s) = %+v, %v", id, a, err)
		}
		return a[0].AddressStatus, a[0].InstanceID, a[0].NetworkInterfaceID
	}

	before := w.Snapshot()
	for name, r := range map[string]*Removals{
		"primary IP":         {Tencent: TencentRemovals{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.1.2"}}}}},
		"IP not on the ENI":  {Tencent: TencentRemovals{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.0.5"}}}}},
		"unknown ENI":        {Tencent: TencentRemovals{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-missing1"}}}},
		"unknown instance":   {Tencent: TencentRemovals{Instances: []string{"ins-missing1"}}},
		"one of two unknown": {Tencent: TencentRemovals{Instances: []string{"ins-node0001", "ins-missing1"}}},
	} {
		if err := w.Remove(r); err == nil {
			t.Errorf("%s: the removal was accepted", name)
		}
	}
	if diff := cmp.Diff(before, w.Snapshot()); diff != "" {
		t.Fatalf("rejected removals changed the state (-want +got):\n%s", diff)
	}

	// A binding task running on the IP holds the removal back.
	free, _, _ := w.TCAllocateAddresses(TCAllocateInput{})
	clock.Advance(time.Second)
	if _, err := w.TCDisassociateAddress(otherPodEIP, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(&Removals{Tencent: TencentRemovals{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.1.21"}}}}}); err == nil {
		t.Fatal("a removal under a running task was accepted")
	}
	clock.Advance(time.Second)

	if err := w.Remove(&Removals{Tencent: TencentRemovals{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.1.20"}}}}}); err != nil {
		t.Fatal(err)
	}
	if st, inst, eni := status(podEIP); st != TCStatusUnbind || inst != "" || eni != "" {
		t.Fatalf("the pod EIP after its IP was returned: %s %s %s", st, inst, eni)
	}
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: free[0], NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}); code(err) != TCInvalidNetworkInterfaceIDNotFound {
		t.Fatalf("binding to a returned IP: %v", err)
	}
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: otherPodEIP, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.21"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)

	if err := w.Remove(&Removals{Tencent: TencentRemovals{Instances: []string{"ins-node0001"}}}); err != nil {
		t.Fatal(err)
	}
	if st, inst, eni := status(nodeEIP); st != TCStatusUnbind || inst != "" || eni != "" {
		t.Fatalf("the node EIP after termination: %s %s %s", st, inst, eni)
	}
	if st, inst, eni := status(otherPodEIP); st != TCStatusBindENI || inst != "" || eni != "eni-pods0001" {
		t.Fatalf("the EIP on the secondary ENI after termination: %s %s %s, want BIND_ENI on eni-pods0001", st, inst, eni)
	}
	snap := w.Snapshot()
	if len(snap.Tencent.Instances) != 0 {
		t.Fatalf("instances left: %+v", snap.Tencent.Instances)
	}
	if diff := cmp.Diff([]string{"eni-pods0001", "eni-loose001"}, eniIDs(snap.Tencent.NetworkInterfaces)); diff != "" {
		t.Fatalf("ENIs after termination (-want +got):\n%s", diff)
	}
	if e := snap.Tencent.NetworkInterfaces[0]; e.InstanceID != "" {
		t.Fatalf("the secondary ENI is still attached: %+v", e)
	}
	// A BIND_ENI address unbinds as usual.
	if _, err := w.TCDisassociateAddress(otherPodEIP, false); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveEC2: a terminated instance takes its primary ENI with it (its
// address is disassociated, stays allocated) and leaves other ENIs
// detached with their addresses.
func TestRemoveEC2(t *testing.T) {
	const node = "i-0000000000000000a"
	w, _ := newWorld(t, Settings{}, &Fixtures{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{{InstanceID: node, VpcID: "vpc-1", NetworkInterfaces: []EC2ENIFixture{
		{NetworkInterfaceID: "eni-0000000000000000a", PrivateIPAddresses: []string{"10.0.0.10"}},
		{NetworkInterfaceID: "eni-0000000000000001a", PrivateIPAddresses: []string{"10.0.0.20"}},
	}}}}})
	a, _ := w.EC2AllocateAddress(EC2AllocateInput{})
	b, _ := w.EC2AllocateAddress(EC2AllocateInput{})
	assocA, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: "eni-0000000000000000a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: b.AllocationID, NetworkInterfaceID: "eni-0000000000000001a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(&Removals{EC2: EC2Removals{Instances: []string{"i-0000000000000000f"}}}); err == nil {
		t.Fatal("terminating an unknown instance was accepted")
	}
	if err := w.Remove(&Removals{EC2: EC2Removals{Instances: []string{node}}}); err != nil {
		t.Fatal(err)
	}
	addrs, _ := w.EC2DescribeAddresses("", nil, nil, nil)
	if len(addrs) != 2 || addrs[0].AssociationID != "" || addrs[0].NetworkInterfaceID != "" || addrs[1].NetworkInterfaceID != "eni-0000000000000001a" || addrs[1].InstanceID != "" {
		t.Fatalf("addresses after termination: %+v", addrs)
	}
	if err := w.EC2DisassociateAddress("", assocA, ""); err != nil {
		t.Fatalf("disassociating the association termination removed: %v (DisassociateAddress is idempotent)", err)
	}
	enis, _, _ := w.EC2DescribeNetworkInterfaces(EC2DescribeNetworkInterfacesInput{})
	if len(enis) != 1 || enis[0].NetworkInterfaceID != "eni-0000000000000001a" || enis[0].Attachment != nil || enis[0].Status != "available" {
		t.Fatalf("ENIs after termination: %+v", enis)
	}
	if _, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: node}); code(err) != EC2InvalidInstanceIDNotFound {
		t.Fatalf("associating with the terminated instance: %v", err)
	}
}
