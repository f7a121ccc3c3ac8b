package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// eniWorld is a VPC with one node (primary ENI eni-node0001 with the node
// IP, a secondary ENI eni-pods0001 with two pod IPs) and a dangling ENI.
func eniWorld(t *testing.T) (*World, *ManualClock) {
	t.Helper()
	return newWorld(t, Settings{TaskDuration: Duration(time.Second)}, &Fixtures{Tencent: TencentFixtures{
		Instances: []TCInstanceFixture{{
			InstanceID: "ins-node0001", VpcID: "vpc-1", SubnetID: "subnet-1", Zone: "ap-hongkong-2",
			NetworkInterfaceID: "eni-node0001", PrivateIPAddresses: []string{"10.0.0.5"},
			NetworkInterfaces: []TCENIFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.1.2", "10.0.1.20"}, Tags: map[string]string{"role": "pods"}}},
		}},
		NetworkInterfaces: []TCENIFixture{{NetworkInterfaceID: "eni-loose001", VpcID: "vpc-1", SubnetID: "subnet-2", PrivateIPAddresses: []string{"10.0.2.7"}}},
		PrivateIPs:        []TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.0.1.21"}}},
	}})
}

func eniIDs(enis []TCNetworkInterface) []string {
	var out []string
	for _, e := range enis {
		out = append(out, e.NetworkInterfaceID)
	}
	return out
}

func TestTencentENIFixtures(t *testing.T) {
	w, _ := eniWorld(t)
	snap := w.Snapshot()
	got := map[string]TCNetworkInterface{}
	for _, e := range snap.Tencent.NetworkInterfaces {
		got[e.NetworkInterfaceID] = e
	}
	if diff := cmp.Diff([]string{"eni-node0001", "eni-pods0001", "eni-loose001"}, eniIDs(snap.Tencent.NetworkInterfaces)); diff != "" {
		t.Fatalf("ENIs in creation order (-want +got):\n%s", diff)
	}
	node, pods, loose := got["eni-node0001"], got["eni-pods0001"], got["eni-loose001"]
	switch {
	case !node.Primary || node.InstanceID != "ins-node0001" || node.DeviceIndex != 0 || node.VpcID != "vpc-1" || node.Zone != "ap-hongkong-2":
		t.Fatalf("primary ENI = %+v", node)
	case pods.Primary || pods.InstanceID != "ins-node0001" || pods.DeviceIndex != 1 || pods.SubnetID != "subnet-1":
		t.Fatalf("secondary ENI did not inherit the instance's placement: %+v", pods)
	case loose.InstanceID != "" || loose.SubnetID != "subnet-2":
		t.Fatalf("dangling ENI = %+v", loose)
	}
	var ips []string
	for _, p := range pods.PrivateIPAddresses {
		ips = append(ips, fmt.Sprintf("%s/%v", p.PrivateIPAddress, p.Primary))
	}
	if diff := cmp.Diff([]string{"10.0.1.2/true", "10.0.1.20/false", "10.0.1.21/false"}, ips); diff != "" {
		t.Fatalf("pod ENI private IPs (-want +got):\n%s", diff)
	}
	if in := snap.Tencent.Instances[0]; in.NetworkInterfaceID != "eni-node0001" || !cmp.Equal(in.PrivateIPAddresses, []string{"10.0.0.5"}) {
		t.Fatalf("the instance's private IPs are its primary ENI's: %+v", in)
	}

	// A second attachment goes after the existing ones.
	res, err := w.ApplyFixtures(&Fixtures{Tencent: TencentFixtures{NetworkInterfaces: []TCENIFixture{{InstanceID: "ins-node0001", PrivateIPAddresses: []string{"10.0.3.1"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TencentNetworkInterfaces) != 1 {
		t.Fatalf("FixtureResult = %+v", res)
	}
	enis, _, apiErr := w.TCDescribeNetworkInterfaces(TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: res.TencentNetworkInterfaces})
	if apiErr != nil || len(enis) != 1 || enis[0].DeviceIndex != 2 || enis[0].VpcID != "vpc-1" {
		t.Fatalf("third ENI = %+v, %v; want device index 2 in vpc-1", enis, apiErr)
	}

	before := w.Snapshot()
	bad := map[string]*Fixtures{
		"IP taken in the VPC":        {Tencent: TencentFixtures{NetworkInterfaces: []TCENIFixture{{VpcID: "vpc-1", PrivateIPAddresses: []string{"10.0.1.20"}}}}},
		"IP taken via instance VPC":  {Tencent: TencentFixtures{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-loose001", PrivateIPAddresses: []string{"10.0.0.5"}}}}},
		"IP twice in one fixture":    {Tencent: TencentFixtures{Instances: []TCInstanceFixture{{VpcID: "vpc-2", PrivateIPAddresses: []string{"10.9.0.1"}, NetworkInterfaces: []TCENIFixture{{PrivateIPAddresses: []string{"10.9.0.1"}}}}}}},
		"not IPv4":                   {Tencent: TencentFixtures{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-loose001", PrivateIPAddresses: []string{"fd00::1"}}}}},
		"unknown ENI":                {Tencent: TencentFixtures{PrivateIPs: []TCPrivateIPFixture{{NetworkInterfaceID: "eni-missing1", PrivateIPAddresses: []string{"10.0.9.9"}}}}},
		"unknown instance":           {Tencent: TencentFixtures{NetworkInterfaces: []TCENIFixture{{InstanceID: "ins-missing1"}}}},
		"malformed ENI ID":           {Tencent: TencentFixtures{NetworkInterfaces: []TCENIFixture{{NetworkInterfaceID: "eni-X"}}}},
		"existing ENI ID":            {Tencent: TencentFixtures{Instances: []TCInstanceFixture{{NetworkInterfaceID: "eni-loose001"}}}},
		"address on a foreign IP":    {Tencent: TencentFixtures{Addresses: []TCAddressFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.2.7"}}}},
		"two addresses on one IP":    {Tencent: TencentFixtures{Addresses: []TCAddressFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}, {NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}}}},
		"instance and ENI":           {Tencent: TencentFixtures{Addresses: []TCAddressFixture{{InstanceID: "ins-node0001", NetworkInterfaceID: "eni-node0001"}}}},
		"private IP without the ENI": {Tencent: TencentFixtures{Addresses: []TCAddressFixture{{PrivateIPAddress: "10.0.1.20"}}}},
	}
	for name, f := range bad {
		if _, err := w.ApplyFixtures(f); err == nil {
			t.Errorf("%s: the fixture was accepted", name)
		}
	}
	if diff := cmp.Diff(before, w.Snapshot()); diff != "" {
		t.Fatalf("rejected fixtures changed the state (-want +got):\n%s", diff)
	}
	// The same IP in another VPC is fine.
	if _, err := w.ApplyFixtures(&Fixtures{Tencent: TencentFixtures{NetworkInterfaces: []TCENIFixture{{VpcID: "vpc-2", PrivateIPAddresses: []string{"10.0.1.20"}}}}}); err != nil {
		t.Fatalf("an IP of vpc-1 reused in vpc-2: %v", err)
	}

	// Pre-bound addresses: to an attached ENI's private IP it is BIND and
	// names the instance; to a dangling ENI it is BIND_ENI.
	res, err = w.ApplyFixtures(&Fixtures{Tencent: TencentFixtures{Addresses: []TCAddressFixture{
		{NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"},
		{NetworkInterfaceID: "eni-loose001"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	addrs, _, apiErr := w.TCDescribeAddresses(TCDescribeAddressesInput{AddressIDs: res.TencentAddresses})
	if apiErr != nil || len(addrs) != 2 {
		t.Fatalf("DescribeAddresses = %+v, %v", addrs, apiErr)
	}
	type binding struct{ Status, Instance, ENI, IP, Type string }
	gotB := []binding{}
	for _, a := range addrs {
		gotB = append(gotB, binding{a.AddressStatus, a.InstanceID, a.NetworkInterfaceID, a.PrivateAddressIP, a.InstanceType})
	}
	wantB := []binding{
		{TCStatusBind, "ins-node0001", "eni-pods0001", "10.0.1.20", "CVM"},
		{TCStatusBindENI, "", "eni-loose001", "10.0.2.7", "ENI"},
	}
	if diff := cmp.Diff(wantB, gotB); diff != "" {
		t.Fatalf("pre-bound addresses (-want +got):\n%s", diff)
	}
}

func TestTencentDescribeNetworkInterfaces(t *testing.T) {
	w, _ := eniWorld(t)
	u := func(v uint64) *uint64 { return &v }
	f := func(name string, values ...string) Filter { return Filter{Name: name, Values: values} }
	cases := []struct {
		name string
		in   TCDescribeNetworkInterfacesInput
		want []string
	}{
		{"all", TCDescribeNetworkInterfacesInput{}, []string{"eni-node0001", "eni-pods0001", "eni-loose001"}},
		{"by ID", TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{"eni-loose001", "eni-node0001"}}, []string{"eni-node0001", "eni-loose001"}},
		{"vpc and subnet", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("vpc-id", "vpc-1"), f("subnet-id", "subnet-2")}}, []string{"eni-loose001"}},
		{"attached to the node", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("attachment.instance-id", "ins-node0001")}}, []string{"eni-node0001", "eni-pods0001"}},
		{"primary", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("is-primary", "true")}}, []string{"eni-node0001"}},
		{"secondary", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("is-primary", "false")}}, []string{"eni-pods0001", "eni-loose001"}},
		{"eni-type", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("eni-type", "1")}}, []string{"eni-node0001"}},
		{"network-interface-id", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("network-interface-id", "eni-pods0001")}}, []string{"eni-pods0001"}},
		{"tag", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("tag:role", "pods")}}, []string{"eni-pods0001"}},
		{"tag-key", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("tag-key", "role")}}, []string{"eni-pods0001"}},
		// One address-ip value matches fuzzily on its suffix: 10.0.1.2
		// also finds 10.0.1.20 and 10.0.1.21 (here on the same ENI) and
		// 10.0.2.x does not start with it.
		{"address-ip, one value, fuzzy", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("address-ip", "10.0.")}}, []string{"eni-node0001", "eni-pods0001", "eni-loose001"}},
		{"address-ip, one value, exact", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("address-ip", "10.0."), f("ip-exact-match", "true")}}, nil},
		{"address-ip, exact pod IP", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("address-ip", "10.0.1.21"), f("ip-exact-match", "true")}}, []string{"eni-pods0001"}},
		{"address-ip, several values, exact", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("address-ip", "10.0.0.5", "10.0.2")}}, []string{"eni-node0001"}},
		{"no security groups modelled", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("groups.security-group-id", "sg-1")}}, nil},
		{"page", TCDescribeNetworkInterfacesInput{Offset: u(1), Limit: u(1)}, []string{"eni-pods0001"}},
		{"page past the end", TCDescribeNetworkInterfacesInput{Offset: u(1 << 62), Limit: u(100)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := w.TCDescribeNetworkInterfaces(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, eniIDs(got)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if tc.in.Limit == nil && total != len(got) {
				t.Fatalf("TotalCount %d for %d results", total, len(got))
			}
		})
	}

	// Default Limit 20, TotalCount counts every match.
	var more []TCENIFixture
	for i := range 30 {
		more = append(more, TCENIFixture{VpcID: "vpc-big", PrivateIPAddresses: []string{fmt.Sprintf("10.5.0.%d", i+1)}})
	}
	if _, err := w.ApplyFixtures(&Fixtures{Tencent: TencentFixtures{NetworkInterfaces: more}}); err != nil {
		t.Fatal(err)
	}
	page, total, err := w.TCDescribeNetworkInterfaces(TCDescribeNetworkInterfacesInput{Filters: []Filter{f("vpc-id", "vpc-big")}})
	if err != nil || len(page) != 20 || total != 30 {
		t.Fatalf("default page = %d of %d, %v; want 20 of 30", len(page), total, err)
	}

	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("eni-%08d", i)
	}
	errs := []struct {
		name string
		in   TCDescribeNetworkInterfacesInput
		code string
	}{
		{"IDs and filters", TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{"eni-node0001"}, Filters: []Filter{f("vpc-id", "vpc-1")}}, TCInvalidParameterCoexist},
		{"too many IDs", TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: ids}, TCParameterValueLimitExceeded},
		{"malformed ID", TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{"eni-1"}}, TCParameterMalformed},
		{"unknown ID", TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{"eni-node0001", "eni-missing1"}}, TCResourceNotFound},
		{"unknown filter", TCDescribeNetworkInterfacesInput{Filters: []Filter{f("colour", "red")}}, TCFilterInvalidKey},
		{"limit", TCDescribeNetworkInterfacesInput{Limit: u(101)}, TCParameterValueRange},
	}
	for _, tc := range errs {
		if _, _, err := w.TCDescribeNetworkInterfaces(tc.in); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}

func TestTencentAssociateToENIPrivateIP(t *testing.T) {
	w, clock := eniWorld(t)
	alloc := func() string {
		t.Helper()
		ids, _, err := w.TCAllocateAddresses(TCAllocateInput{})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	pod, other, node := alloc(), alloc(), alloc()
	clock.Advance(time.Second)
	describe := func(id string) TCAddress {
		t.Helper()
		a, _, err := w.TCDescribeAddresses(TCDescribeAddressesInput{AddressIDs: []string{id}})
		if err != nil || len(a) != 1 {
			t.Fatalf("DescribeAddresses(%s) = %+v, %v", id, a, err)
		}
		return a[0]
	}
	onENI := func(eniID, ip string) TCPrivateIP {
		t.Helper()
		enis, _, err := w.TCDescribeNetworkInterfaces(TCDescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{eniID}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range enis[0].PrivateIPAddresses {
			if p.PrivateIPAddress == ip {
				return p
			}
		}
		t.Fatalf("%s is not on %s", ip, eniID)
		return TCPrivateIP{}
	}

	task, err := w.TCAssociateAddress(TCAssociateInput{AddressID: pod, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"})
	if err != nil {
		t.Fatal(err)
	}
	if a := describe(pod); a.AddressStatus != TCStatusBinding || a.NetworkInterfaceID != "eni-pods0001" || a.PrivateAddressIP != "10.0.1.20" {
		t.Fatalf("during the task: %+v", a)
	}
	if p := onENI("eni-pods0001", "10.0.1.20"); p.PublicIPAddress != "" {
		t.Fatalf("the ENI shows the EIP before the binding finished: %+v", p)
	}
	// The target is taken while the first binding runs.
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}); code(err) != TCInvalidPrivateIPAlreadyBindEip {
		t.Fatalf("second EIP onto a private IP being bound: %v", err)
	}
	clock.Advance(time.Second)
	if _, r, _ := w.TCDescribeTaskResult(&task, ""); r != TCTaskSuccess {
		t.Fatalf("task = %s", r)
	}
	a := describe(pod)
	want := TCAddress{AddressStatus: TCStatusBind, InstanceID: "ins-node0001", NetworkInterfaceID: "eni-pods0001", PrivateAddressIP: "10.0.1.20", InstanceType: "CVM"}
	if got := (TCAddress{AddressStatus: a.AddressStatus, InstanceID: a.InstanceID, NetworkInterfaceID: a.NetworkInterfaceID, PrivateAddressIP: a.PrivateAddressIP, InstanceType: a.InstanceType}); !cmp.Equal(got, want) {
		t.Fatalf("bound to an attached ENI's private IP: %+v, want %+v", got, want)
	}
	if p := onENI("eni-pods0001", "10.0.1.20"); p.PublicIPAddress != a.AddressIP || p.AddressID != pod {
		t.Fatalf("the ENI's private IP shows %+v, want %s/%s", p, a.AddressIP, pod)
	}
	// A pod EIP on a secondary ENI is not the instance's public IP.
	insts, _, _ := w.TCDescribeInstances(TCDescribeInstancesInput{InstanceIDs: []string{"ins-node0001"}})
	if len(insts[0].PublicIPAddresses) != 0 {
		t.Fatalf("instance public IPs = %v, want none (only the primary ENI's count)", insts[0].PublicIPAddresses)
	}
	for name, fs := range map[string][]Filter{
		"network-interface-id":            {{Name: "network-interface-id", Values: []string{"eni-pods0001"}}},
		"private-ip-address":              {{Name: "private-ip-address", Values: []string{"10.0.1.20"}}},
		"private-ip-address, first value": {{Name: "private-ip-address", Values: []string{"10.0.1.20", "10.9.9.9"}}},
		"instance-type":                   {{Name: "instance-type", Values: []string{"CVM"}}},
	} {
		got, _, err := w.TCDescribeAddresses(TCDescribeAddressesInput{Filters: fs})
		if err != nil || len(got) != 1 || got[0].AddressID != pod {
			t.Errorf("DescribeAddresses by %s = %+v, %v", name, got, err)
		}
	}
	if got, _, _ := w.TCDescribeAddresses(TCDescribeAddressesInput{Filters: []Filter{{Name: "private-ip-address", Values: []string{"10.9.9.9", "10.0.1.20"}}}}); len(got) != 0 {
		t.Fatalf("private-ip-address uses only its first value, got %+v", got)
	}
	if enis, _, _ := w.TCDescribeNetworkInterfaces(TCDescribeNetworkInterfacesInput{Filters: []Filter{{Name: "public-address-ip", Values: []string{a.AddressIP}}}}); !cmp.Equal(eniIDs(enis), []string{"eni-pods0001"}) {
		t.Fatalf("public-address-ip found %v", eniIDs(enis))
	}

	errs := []struct {
		name string
		in   TCAssociateInput
		code string
	}{
		{"instance and ENI", TCAssociateInput{AddressID: other, InstanceID: "ins-node0001", NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.21"}, "InvalidParameterConflict"},
		{"neither", TCAssociateInput{AddressID: other}, TCMissingAssociateEntity},
		{"ENI without private IP", TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-pods0001"}, TCMissingParameter},
		{"malformed ENI", TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.1.21"}, "InvalidParameterValue.NetworkInterfaceIdMalformed"},
		{"unknown ENI", TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-missing1", PrivateIPAddress: "10.0.1.21"}, TCInvalidNetworkInterfaceIDNotFound},
		{"IP of another ENI", TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.0.5"}, TCInvalidNetworkInterfaceIDNotFound},
		{"IP taken", TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}, TCInvalidPrivateIPAlreadyBindEip},
		{"bound address to another ENI", TCAssociateInput{AddressID: pod, NetworkInterfaceID: "eni-node0001", PrivateIPAddress: "10.0.0.5"}, TCNetworkInterfaceIDNotMatch},
		{"bound address to another IP", TCAssociateInput{AddressID: pod, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.21"}, TCPrivateIPAddressNotMatch},
		{"bound address to the same IP", TCAssociateInput{AddressID: pod, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20"}, TCAddressStatusNotPermit},
		{"bound address to an instance", TCAssociateInput{AddressID: pod, InstanceID: "ins-node0001"}, TCAddressStatusNotPermit},
	}
	for _, tc := range errs {
		if _, err := w.TCAssociateAddress(tc.in); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}

	// The instance form and the ENI form name the same target: the primary
	// ENI's primary IP.
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: node, NetworkInterfaceID: "eni-node0001", PrivateIPAddress: "10.0.0.5"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: other, InstanceID: "ins-node0001"}); code(err) != TCInvalidInstanceAlreadyBindEip {
		t.Fatalf("instance whose primary IP is bound through its ENI: %v", err)
	}
	insts, _, _ = w.TCDescribeInstances(TCDescribeInstancesInput{InstanceIDs: []string{"ins-node0001"}})
	if !cmp.Equal(insts[0].PublicIPAddresses, []string{describe(node).AddressIP}) {
		t.Fatalf("instance public IPs = %v, want the primary ENI's EIP", insts[0].PublicIPAddresses)
	}

	// A dangling ENI: BIND_ENI, naming no instance; a failed unbinding
	// leaves it there, a successful one frees the IP.
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-loose001", PrivateIPAddress: "10.0.2.7"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if a := describe(other); a.AddressStatus != TCStatusBindENI || a.InstanceID != "" || a.InstanceType != "ENI" {
		t.Fatalf("bound to a dangling ENI: %+v", a)
	}
	if _, err := w.TCDisassociateAddress(other, true); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if a := describe(other); a.AddressStatus != TCStatusBindENI || a.NetworkInterfaceID != "eni-loose001" {
		t.Fatalf("after a failed unbinding: %+v, want BIND_ENI on eni-loose001", a)
	}
	for _, id := range []string{other, pod} {
		if _, err := w.TCDisassociateAddress(id, false); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Second)
	for _, id := range []string{other, pod} {
		if a := describe(id); a.AddressStatus != TCStatusUnbind || a.InstanceID != "" || a.NetworkInterfaceID != "" || a.PrivateAddressIP != "" || a.InstanceType != "" {
			t.Fatalf("after unbinding: %+v", a)
		}
	}
	if p := onENI("eni-pods0001", "10.0.1.20"); p.PublicIPAddress != "" {
		t.Fatalf("the private IP still shows an EIP after unbinding: %+v", p)
	}
	// The freed private IP takes another address; a failed binding leaves
	// both unbound.
	if _, err := w.TCAssociateAddress(TCAssociateInput{AddressID: other, NetworkInterfaceID: "eni-pods0001", PrivateIPAddress: "10.0.1.20", TaskFail: true}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if a := describe(other); a.AddressStatus != TCStatusUnbind || a.NetworkInterfaceID != "" {
		t.Fatalf("after a failed binding: %+v", a)
	}
}
