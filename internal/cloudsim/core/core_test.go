package core

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func newWorld(t *testing.T, s Settings, f *Fixtures) (*World, *ManualClock) {
	t.Helper()
	clock := NewManualClock(t0)
	w, err := New(Options{Seed: 42, Clock: clock, Settings: s, Fixtures: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w, clock
}

func code(err *APIError) string {
	if err == nil {
		return ""
	}
	return err.Code
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"*", "", true},
		{"*", "anything/at:all", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*.example", "x.y.example", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"**a", "bba", true},
		{"eipalloc-*", "eipalloc-0123", true},
	}
	for _, tc := range cases {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestIPPool(t *testing.T) {
	p, err := newIPPool("192.0.2.0/30")
	if err != nil {
		t.Fatal(err)
	}
	a, ok1 := p.take()
	b, ok2 := p.take()
	_, ok3 := p.take()
	if !ok1 || !ok2 || ok3 || a.String() != "192.0.2.1" || b.String() != "192.0.2.2" {
		t.Fatalf("take = %v %v %v %v %v; want .1, .2, then exhausted", a, ok1, b, ok2, ok3)
	}
	p.release(a)
	if c, ok := p.take(); !ok || c != a {
		t.Fatalf("after release take = %v, %v; want %v", c, ok, a)
	}
}

func TestEC2AddressStateMachine(t *testing.T) {
	f := &Fixtures{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{{
		InstanceID: "i-0123456789abcdef0", VpcID: "vpc-1",
		NetworkInterfaces: []EC2ENIFixture{{NetworkInterfaceID: "eni-0123456789abcdef0", PrivateIPAddresses: []string{"10.0.0.1", "10.0.0.2"}}},
	}}}}
	w, _ := newWorld(t, Settings{EC2AddressQuota: 2}, f)
	eni := "eni-0123456789abcdef0"

	a, err := w.EC2AllocateAddress(EC2AllocateInput{TagSpecs: []EC2TagSpec{{ResourceType: "elastic-ip", Tags: []Tag{{"k", "v"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.EC2AllocateAddress(EC2AllocateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.EC2AllocateAddress(EC2AllocateInput{}); code(err) != EC2AddressLimitExceeded {
		t.Fatalf("third allocation: %v, want AddressLimitExceeded", err)
	}
	if _, err := w.EC2AllocateAddress(EC2AllocateInput{TagSpecs: []EC2TagSpec{{ResourceType: "instance"}}}); code(err) != EC2InvalidParameterValue {
		t.Fatalf("wrong tag resource type: %v", err)
	}

	assoc, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.1", AllowReassociation: &no}); code(err) != EC2ResourceAlreadyAssociated {
		t.Fatalf("reassociation with AllowReassociation=false: %v", err)
	}
	if again, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.2", AllowReassociation: &no}); err != nil || again != assoc {
		t.Fatalf("same-target association = %q, %v; want idempotent %q", again, err, assoc)
	}
	// Without the parameter reassociation is automatic.
	moved, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.1"})
	if err != nil || moved == assoc {
		t.Fatalf("automatic reassociation = %q, %v", moved, err)
	}
	// The instance has exactly one ENI, so InstanceId works and targets its
	// primary IP, displacing a.
	viaInstance, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: b.AllocationID, InstanceID: "i-0123456789abcdef0"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := w.EC2DescribeAddresses("", nil, nil, []Filter{{Name: "instance-id", Values: []string{"i-0123456789abcdef0"}}})
	if len(got) != 1 || got[0].AllocationID != b.AllocationID || got[0].AssociationID != viaInstance || got[0].PrivateIPAddress != "10.0.0.1" {
		t.Fatalf("after displacement: %+v", got)
	}
	if err := w.EC2ReleaseAddress("", b.AllocationID, ""); code(err) != EC2InvalidIPAddressInUse {
		t.Fatalf("release associated: %v", err)
	}
	if err := w.EC2DisassociateAddress("", viaInstance, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.EC2DisassociateAddress("", viaInstance, ""); err != nil {
		t.Fatalf("disassociation is idempotent: %v", err)
	}
	if err := w.EC2DisassociateAddress("", "eipassoc-00000000000000000", ""); code(err) != EC2InvalidAssociationIDNotFound {
		t.Fatalf("unknown association: %v", err)
	}
	for _, id := range []string{a.AllocationID, b.AllocationID} {
		if err := w.EC2ReleaseAddress("", id, ""); err != nil {
			t.Fatalf("release %s: %v", id, err)
		}
	}
	if err := w.EC2ReleaseAddress("", a.AllocationID, ""); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("second release: %v", err)
	}
	if n := len(w.Snapshot().EC2.Addresses); n != 0 {
		t.Fatalf("%d addresses leaked", n)
	}
}

// TestEC2NoReassociationOntoTakenTarget: with AllowReassociation=false a
// private IP (by ENI or by instance) that already carries another address
// fails with Resource.AlreadyAssociated and keeps its address; without the
// parameter the address moves, as EC2's automatic reassociation does.
func TestEC2NoReassociationOntoTakenTarget(t *testing.T) {
	f := &Fixtures{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{{
		InstanceID: "i-0123456789abcdef0", VpcID: "vpc-1",
		NetworkInterfaces: []EC2ENIFixture{{NetworkInterfaceID: "eni-0123456789abcdef0", PrivateIPAddresses: []string{"10.0.0.1", "10.0.0.2"}}},
	}}}}
	w, _ := newWorld(t, Settings{}, f)
	eni := "eni-0123456789abcdef0"
	foreign, _ := w.EC2AllocateAddress(EC2AllocateInput{})
	mine, _ := w.EC2AllocateAddress(EC2AllocateInput{})
	held, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: foreign.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	for name, in := range map[string]EC2AssociateInput{
		"network interface": {AllocationID: mine.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.1", AllowReassociation: &no},
		"instance":          {AllocationID: mine.AllocationID, InstanceID: "i-0123456789abcdef0", AllowReassociation: &no},
	} {
		if _, err := w.EC2AssociateAddress(in); code(err) != EC2ResourceAlreadyAssociated {
			t.Fatalf("%s: %v, want Resource.AlreadyAssociated", name, err)
		}
	}
	got, _ := w.EC2DescribeAddresses("", []string{foreign.AllocationID}, nil, nil)
	if len(got) != 1 || got[0].AssociationID != held {
		t.Fatalf("the foreign address lost its association: %+v", got)
	}
	if _, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: mine.AllocationID, NetworkInterfaceID: eni, PrivateIPAddress: "10.0.0.1"}); err != nil {
		t.Fatalf("automatic reassociation: %v", err)
	}
	got, _ = w.EC2DescribeAddresses("", []string{foreign.AllocationID}, nil, nil)
	if len(got) != 1 || got[0].AssociationID != "" {
		t.Fatalf("automatic reassociation left the foreign address associated: %+v", got)
	}
}

// TestEC2Accounts: an address belongs to the account that allocated it.
// Another account does not see it, cannot tag or associate it, and
// releasing it (by allocation ID, or by public IP after the owner's release
// gave the IP to someone else) is AuthFailure; quotas are per account.
func TestEC2Accounts(t *testing.T) {
	w, _ := newWorld(t, Settings{EC2AddressQuota: 1, EC2PublicIPv4Pools: map[string]string{"amazon": "192.0.2.0/30"}}, &Fixtures{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{{
		InstanceID: "i-0123456789abcdef0", VpcID: "vpc-1",
		NetworkInterfaces: []EC2ENIFixture{{NetworkInterfaceID: "eni-0123456789abcdef0", PrivateIPAddresses: []string{"10.0.0.1"}}},
	}}}})
	const alice, bob = "111111111111", "222222222222"
	a, err := w.EC2AllocateAddress(EC2AllocateInput{Account: alice})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.EC2AllocateAddress(EC2AllocateInput{Account: alice}); code(err) != EC2AddressLimitExceeded {
		t.Fatalf("alice's second address: %v, want AddressLimitExceeded", err)
	}
	if got, _ := w.EC2DescribeAddresses(bob, nil, nil, nil); len(got) != 0 {
		t.Fatalf("bob sees %+v", got)
	}
	if _, err := w.EC2DescribeAddresses(bob, []string{a.AllocationID}, nil, nil); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("bob describes alice's address: %v", err)
	}
	if err := w.EC2CreateTags(bob, []string{a.AllocationID}, []Tag{{"k", "v"}}); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("bob tags alice's address: %v", err)
	}
	if _, err := w.EC2AssociateAddress(EC2AssociateInput{Account: bob, AllocationID: a.AllocationID, NetworkInterfaceID: "eni-0123456789abcdef0"}); code(err) != EC2AuthFailure {
		t.Fatalf("bob associates alice's address: %v, want AuthFailure", err)
	}
	if err := w.EC2ReleaseAddress(bob, a.AllocationID, ""); code(err) != EC2AuthFailure {
		t.Fatalf("bob releases alice's address: %v, want AuthFailure", err)
	}
	// Alice releases; bob is given the same public IP; alice's stale
	// release by public IP now hits bob's address.
	if err := w.EC2ReleaseAddress(alice, a.AllocationID, ""); err != nil {
		t.Fatal(err)
	}
	b, err := w.EC2AllocateAddress(EC2AllocateInput{Account: bob, Address: a.PublicIP})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.EC2ReleaseAddress(alice, "", a.PublicIP); code(err) != EC2AuthFailure {
		t.Fatalf("alice releases the IP now allocated to bob: %v, want AuthFailure", err)
	}
	if err := w.EC2ReleaseAddress(alice, a.AllocationID, ""); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("alice releases her released allocation again: %v, want InvalidAllocationID.NotFound", err)
	}
	if got, _ := w.EC2DescribeAddresses(bob, nil, nil, nil); len(got) != 1 || got[0].AllocationID != b.AllocationID {
		t.Fatalf("bob's address after alice's attempts: %+v", got)
	}
}

func TestEC2DescribeFiltersAndTags(t *testing.T) {
	w, clock := newWorld(t, Settings{}, nil)
	a, _ := w.EC2AllocateAddress(EC2AllocateInput{TagSpecs: []EC2TagSpec{{ResourceType: "elastic-ip", Tags: []Tag{{"owner", "pod-a"}, {"cluster", "c1"}}}}})
	b, _ := w.EC2AllocateAddress(EC2AllocateInput{TagSpecs: []EC2TagSpec{{ResourceType: "elastic-ip", Tags: []Tag{{"owner", "pod-b"}}}}, VisibilityDelay: time.Minute})

	ids := func(addrs []EC2Address) []string {
		var out []string
		for _, x := range addrs {
			out = append(out, x.AllocationID)
		}
		return out
	}
	cases := []struct {
		name    string
		filters []Filter
		want    []string
		code    string
	}{
		{"tag value", []Filter{{Name: "tag:owner", Values: []string{"pod-a"}}}, []string{a.AllocationID}, ""},
		{"tag wildcard hides the invisible one", []Filter{{Name: "tag:owner", Values: []string{"pod-*"}}}, []string{a.AllocationID}, ""},
		{"tag-key", []Filter{{Name: "tag-key", Values: []string{"cluster"}}}, []string{a.AllocationID}, ""},
		{"AND of filters", []Filter{{Name: "tag-key", Values: []string{"cluster"}}, {Name: "tag:owner", Values: []string{"pod-b"}}}, nil, ""},
		{"public-ip", []Filter{{Name: "public-ip", Values: []string{a.PublicIP}}}, []string{a.AllocationID}, ""},
		{"unknown filter", []Filter{{Name: "colour", Values: []string{"red"}}}, nil, EC2InvalidParameterValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := w.EC2DescribeAddresses("", nil, nil, tc.filters)
			if code(err) != tc.code {
				t.Fatalf("err = %v, want %q", err, tc.code)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := w.EC2DescribeAddresses("", []string{b.AllocationID}, nil, nil); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("describing an address inside its visibility window by ID: %v, want NotFound", err)
	}
	clock.Advance(time.Minute)
	if got, err := w.EC2DescribeAddresses("", []string{b.AllocationID}, nil, nil); err != nil || len(got) != 1 {
		t.Fatalf("after the window: %v, %v", got, err)
	}

	if err := w.EC2CreateTags("", []string{a.AllocationID}, []Tag{{"aws:reserved", "x"}}); code(err) != EC2InvalidParameterValue {
		t.Fatalf("aws: prefix: %v", err)
	}
	if err := w.EC2CreateTags("", []string{a.AllocationID, "eipalloc-00000000000000000"}, []Tag{{"new", "1"}}); code(err) != EC2InvalidAllocationIDNotFound {
		t.Fatalf("CreateTags with one unknown ID: %v", err)
	}
	if got, _ := w.EC2DescribeAddresses("", nil, nil, []Filter{{Name: "tag-key", Values: []string{"new"}}}); len(got) != 0 {
		t.Fatal("CreateTags is all or nothing, but a tag was added")
	}
	if err := w.EC2CreateTags("", []string{"sg-123"}, []Tag{{"k", "v"}}); code(err) != EC2InvalidID {
		t.Fatalf("untaggable ID: %v", err)
	}
	other := "pod-z"
	if err := w.EC2DeleteTags("", []string{a.AllocationID}, []EC2DeleteTag{{Key: "owner", Value: &other}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.EC2DescribeAddresses("", nil, nil, []Filter{{Name: "tag:owner", Values: []string{"pod-a"}}}); len(got) != 1 {
		t.Fatal("DeleteTags with a non-matching value removed the tag")
	}
	if err := w.EC2DeleteTags("", []string{a.AllocationID}, []EC2DeleteTag{{Key: "owner"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.EC2DescribeAddresses("", nil, nil, []Filter{{Name: "tag-key", Values: []string{"owner"}}}); len(got) != 1 || got[0].AllocationID != b.AllocationID {
		t.Fatalf("after DeleteTags: %+v", got)
	}
}

func TestEC2DescribeNetworkInterfacesPaging(t *testing.T) {
	f := &Fixtures{}
	for range 12 {
		f.EC2.NetworkInterfaces = append(f.EC2.NetworkInterfaces, EC2ENIFixture{VpcID: "vpc-1", PrivateIPAddresses: []string{"10.0.0.1"}})
	}
	w, _ := newWorld(t, Settings{}, f)
	var all []string
	token := ""
	for pages := 0; ; pages++ {
		enis, next, err := w.EC2DescribeNetworkInterfaces(EC2DescribeNetworkInterfacesInput{Filters: []Filter{{Name: "vpc-id", Values: []string{"vpc-1"}}}, MaxResults: 5, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range enis {
			all = append(all, e.NetworkInterfaceID)
		}
		if next == "" {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		token = next
	}
	if len(all) != 12 {
		t.Fatalf("paged %d ENIs, want 12", len(all))
	}
	for _, tc := range []struct {
		in   EC2DescribeNetworkInterfacesInput
		code string
	}{
		{EC2DescribeNetworkInterfacesInput{MaxResults: 4}, EC2InvalidParameterValue},
		{EC2DescribeNetworkInterfacesInput{NextToken: "garbage"}, EC2InvalidPaginationToken},
		{EC2DescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{"eni-00000000000000000"}}, EC2InvalidNetworkInterfaceIDNF},
		{EC2DescribeNetworkInterfacesInput{NetworkInterfaceIDs: []string{all[0]}, MaxResults: 5}, EC2InvalidParameterCombination},
	} {
		if _, _, err := w.EC2DescribeNetworkInterfaces(tc.in); code(err) != tc.code {
			t.Errorf("%+v: err = %v, want %s", tc.in, err, tc.code)
		}
	}
}

func TestTencentStateMachineAndTasks(t *testing.T) {
	f := &Fixtures{Tencent: TencentFixtures{Instances: []TCInstanceFixture{{InstanceID: "ins-aaaaaaaa", PrivateIPAddresses: []string{"10.1.0.5"}}}}}
	w, clock := newWorld(t, Settings{TaskDuration: Duration(time.Second)}, f)

	ids, task, err := w.TCAllocateAddresses(TCAllocateInput{AddressType: "AnycastEIP", ClientToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	again, task2, err := w.TCAllocateAddresses(TCAllocateInput{AddressType: "AnycastEIP", ClientToken: "tok"})
	if err != nil || !cmp.Equal(ids, again) || task != task2 {
		t.Fatalf("same ClientToken = %v/%d, %v; want %v/%d", again, task2, err, ids, task)
	}
	id := ids[0]
	status := func() string {
		addrs, _, err := w.TCDescribeAddresses(TCDescribeAddressesInput{AddressIDs: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) == 0 {
			return "GONE"
		}
		return addrs[0].AddressStatus
	}
	result := func(task uint64) string {
		_, r, err := w.TCDescribeTaskResult(&task, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		name       string
		act        func() (uint64, *APIError)
		during     string
		after      string
		mutexCheck func() *APIError
	}{
		{"allocate", func() (uint64, *APIError) { return task, nil }, TCStatusCreating, TCStatusUnbind,
			func() *APIError {
				_, err := w.TCAssociateAddress(TCAssociateInput{AddressID: id, InstanceID: "ins-aaaaaaaa"})
				return err
			}},
		{"bind", func() (uint64, *APIError) {
			return w.TCAssociateAddress(TCAssociateInput{AddressID: id, InstanceID: "ins-aaaaaaaa"})
		}, TCStatusBinding, TCStatusBind,
			func() *APIError { _, err := w.TCDisassociateAddress(id, false); return err }},
		{"unbind", func() (uint64, *APIError) { return w.TCDisassociateAddress(id, false) }, TCStatusUnbinding, TCStatusUnbind,
			func() *APIError { _, err := w.TCReleaseAddresses([]string{id}, false); return err }},
		{"release", func() (uint64, *APIError) { return w.TCReleaseAddresses([]string{id}, false) }, TCStatusOffline, "GONE",
			func() *APIError {
				_, err := w.TCAssociateAddress(TCAssociateInput{AddressID: id, InstanceID: "ins-aaaaaaaa"})
				return err
			}},
	}
	for _, s := range steps {
		tk, err := s.act()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := status(); got != s.during {
			t.Fatalf("%s: status during the task = %s, want %s", s.name, got, s.during)
		}
		if got := result(tk); got != TCTaskRunning {
			t.Fatalf("%s: task = %s, want RUNNING", s.name, got)
		}
		if err := s.mutexCheck(); code(err) != TCMutexTaskRunning {
			t.Fatalf("%s: a second operation during the task: %v, want MutexTaskRunning", s.name, err)
		}
		clock.Advance(time.Second)
		if got := status(); got != s.after {
			t.Fatalf("%s: status after the task = %s, want %s", s.name, got, s.after)
		}
		if got := result(tk); got != TCTaskSuccess {
			t.Fatalf("%s: task = %s, want SUCCESS", s.name, got)
		}
	}
	if _, _, err := w.TCAllocateAddresses(TCAllocateInput{ClientToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.Snapshot().Tencent.Addresses); n != 0 {
		t.Fatalf("a reused ClientToken created an address after the first was released: %d addresses", n)
	}
}

func TestTencentValidation(t *testing.T) {
	w, _ := newWorld(t, Settings{TencentAddressQuota: 2, TencentAnycastZones: []string{AnycastZoneOverseas}}, nil)
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		in   TCAllocateInput
		code string
	}{
		{"count too large", TCAllocateInput{AddressCount: n(21)}, TCParameterValueRange},
		{"quota", TCAllocateInput{AddressCount: n(3)}, TCAddressQuotaLimitExceeded},
		{"unknown type", TCAllocateInput{AddressType: "WanIP"}, TCInvalidParameterValue},
		{"zone not allow-listed", TCAllocateInput{AddressType: "AnycastEIP", AnycastZone: AnycastZoneGlobal}, TCUnauthorizedAnycastEip},
		{"bad zone", TCAllocateInput{AddressType: "AnycastEIP", AnycastZone: "MARS"}, TCUnavailableZone},
		{"zone without anycast", TCAllocateInput{AnycastZone: AnycastZoneOverseas}, "InvalidParameterValue.Combination"},
		{"bandwidth", TCAllocateInput{InternetMaxBandwidthOut: n(0)}, TCBandwidthOutOfRange},
		{"charge type", TCAllocateInput{InternetChargeType: "FREE"}, TCInvalidParameterValue},
		{"duplicate tag", TCAllocateInput{Tags: []Tag{{"a", "1"}, {"a", "2"}}}, TCInvalidTag},
		{"long token", TCAllocateInput{ClientToken: string(make([]byte, 65))}, TCInvalidParameterValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := w.TCAllocateAddresses(tc.in); code(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	if n := len(w.Snapshot().Tencent.Addresses); n != 0 {
		t.Fatalf("rejected allocations created %d addresses", n)
	}
	many := make([]Filter, 11)
	for i := range many {
		many[i] = Filter{Name: "address-id", Values: []string{"eip-00000000"}}
	}
	for name, in := range map[string]TCDescribeAddressesInput{
		"too many filters": {Filters: many},
		"bad filter":       {Filters: []Filter{{Name: "colour"}}},
		"coexist":          {AddressIDs: []string{"eip-00000000"}, Filters: []Filter{{Name: "address-id", Values: []string{"eip-00000000"}}}},
		"malformed":        {AddressIDs: []string{"eip-1"}},
		"limit":            {Limit: n(101)},
	} {
		if _, _, err := w.TCDescribeAddresses(in); err == nil {
			t.Errorf("%s: DescribeAddresses accepted %+v", name, in)
		}
	}
}

func TestFaultsAreDeterministicAndExpire(t *testing.T) {
	run := func() []string {
		w, _ := newWorld(t, Settings{}, nil)
		if err := w.SetFaults([]FaultSpec{{Provider: ProviderEC2, Action: "DescribeAddresses", ErrorRate: 0.5, ErrorCode: "InternalError"}}); err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 20 {
			_, err := w.Admit(ProviderEC2, "DescribeAddresses", "")
			out = append(out, code(err))
		}
		return out
	}
	first, second := run(), run()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("same seed, different faults (-first +second):\n%s", diff)
	}
	failed := 0
	for _, c := range first {
		if c != "" {
			failed++
		}
	}
	if failed == 0 || failed == 20 {
		t.Fatalf("a 50%% error rate failed %d of 20 requests", failed)
	}

	w, _ := newWorld(t, Settings{}, nil)
	if err := w.SetFaults([]FaultSpec{
		{ErrorRate: 1, ErrorCode: "Unavailable"},
		{Provider: ProviderTencent, Action: "DescribeAddresses", ErrorRate: 1, ErrorCode: "InternalError", Times: 2},
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		_, err := w.Admit(ProviderTencent, "DescribeAddresses", "")
		got = append(got, code(err))
	}
	if diff := cmp.Diff([]string{"InternalError", "InternalError", "Unavailable"}, got); diff != "" {
		t.Fatalf("the specific spec wins until used up, then the wildcard applies (-want +got):\n%s", diff)
	}
	if err := w.SetFaults([]FaultSpec{{ErrorRate: 2}}); err == nil {
		t.Fatal("an error rate of 2 was accepted")
	}
}

func TestRateLimitsUseTheClockAndScale(t *testing.T) {
	w, clock := newWorld(t, Settings{RateLimitOverrides: map[string]Bucket{"tencent/DescribeAddresses": {Burst: 2, RefillPerSecond: 1}}}, nil)
	admit := func() string {
		_, err := w.Admit(ProviderTencent, "DescribeAddresses", "")
		return code(err)
	}
	got := []string{admit(), admit(), admit()}
	clock.Advance(time.Second)
	got = append(got, admit(), admit())
	if diff := cmp.Diff([]string{"", "", TCRequestLimitExceeded, "", TCRequestLimitExceeded}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

	w, _ = newWorld(t, Settings{RateLimitScale: 10}, nil)
	for i := range 50 * 10 {
		if _, err := w.Admit(ProviderEC2, "AllocateAddress", ""); err != nil {
			t.Fatalf("request %d within a burst of 500 (50 x scale 10) was throttled", i)
		}
	}
	if _, err := w.Admit(ProviderEC2, "AllocateAddress", ""); code(err) != EC2RequestLimitExceeded || err.HTTPStatus != 503 {
		t.Fatalf("request 501: %v, want RequestLimitExceeded with HTTP 503", err)
	}
	if err := w.UpdateSettings(func(s *Settings) { s.RateLimitsDisabled = true }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Admit(ProviderEC2, "AllocateAddress", ""); err != nil {
		t.Fatalf("with rate limits disabled: %v", err)
	}
}

func TestDefaultBucketsMatchTheRealClouds(t *testing.T) {
	b := DefaultBuckets()
	want := map[string]Bucket{
		"ec2/AllocateAddress":                      {50, 5},
		"ec2/DescribeAddresses":                    {100, 20},
		"ec2/CreateTags":                           {100, 10},
		"ec2/DescribeNetworkInterfaces#unfiltered": {50, 10},
		"tencent/AllocateAddresses":                {10, 10},
		"tencent/DescribeTaskResult":               {20, 20},
		"tencent/DescribeInstances":                {40, 40},
	}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %+v, want %+v", k, b[k], v)
		}
	}
}

func TestFixturesAreCheckedBeforeApplying(t *testing.T) {
	w, _ := newWorld(t, Settings{}, nil)
	bad := []*Fixtures{
		{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{{InstanceID: "i-bad"}}}},
		{EC2: EC2Fixtures{NetworkInterfaces: []EC2ENIFixture{{InstanceID: "i-0123456789abcdef0"}}}},
		{EC2: EC2Fixtures{Addresses: []EC2AddressFixture{{NetworkInterfaceID: "eni-0123456789abcdef0"}}}},
		{Tencent: TencentFixtures{Addresses: []TCAddressFixture{{AddressID: "eip-aaaaaaaa"}, {AddressID: "eip-aaaaaaaa"}}}},
		{Tencent: TencentFixtures{Addresses: []TCAddressFixture{{InstanceID: "ins-nothere"}}}},
		{Tencent: TencentFixtures{Instances: []TCInstanceFixture{{PrivateIPAddresses: []string{"not-an-ip"}}}}},
	}
	for i, f := range bad {
		if _, err := w.ApplyFixtures(f); err == nil {
			t.Errorf("fixture %d was accepted", i)
		}
	}
	empty, _ := newWorld(t, Settings{}, nil)
	if diff := cmp.Diff(empty.Snapshot(), w.Snapshot()); diff != "" {
		t.Fatalf("rejected fixtures changed the state (-want +got):\n%s", diff)
	}

	res, err := w.ApplyFixtures(&Fixtures{
		EC2: EC2Fixtures{
			Instances: []EC2InstanceFixture{{VpcID: "vpc-1", NetworkInterfaces: []EC2ENIFixture{{PrivateIPAddresses: []string{"10.0.0.1"}}}}},
			Addresses: []EC2AddressFixture{{Tags: map[string]string{"pool": "fixed"}}},
		},
		Tencent: TencentFixtures{
			Instances: []TCInstanceFixture{{InstanceID: "ins-bbbbbbbb", PrivateIPAddresses: []string{"10.1.0.9"}}},
			Addresses: []TCAddressFixture{{AddressType: "AnycastEIP", InstanceID: "ins-bbbbbbbb"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := w.Snapshot()
	if len(res.EC2Instances) != 1 || len(res.EC2NetworkInterfaces) != 1 || len(res.EC2Addresses) != 1 || len(res.TencentAddresses) != 1 {
		t.Fatalf("FixtureResult = %+v", res)
	}
	if snap.EC2.NetworkInterfaces[0].VpcID != "vpc-1" || snap.EC2.NetworkInterfaces[0].Attachment == nil {
		t.Fatalf("ENI did not inherit the instance's VPC and attachment: %+v", snap.EC2.NetworkInterfaces[0])
	}
	if a := snap.Tencent.Addresses[0]; a.AddressStatus != TCStatusBind || a.PrivateAddressIP != "10.1.0.9" {
		t.Fatalf("pre-bound fixture address = %+v", a)
	}
}

func TestResetIsDeterministic(t *testing.T) {
	f := &Fixtures{Tencent: TencentFixtures{Instances: []TCInstanceFixture{{PrivateIPAddresses: []string{"10.1.0.5"}}}}}
	w, _ := newWorld(t, Settings{}, f)
	before, _ := json.Marshal(w.Snapshot())
	if _, _, err := w.TCAllocateAddresses(TCAllocateInput{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Reset(true); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(w.Snapshot())
	if string(before) != string(after) {
		t.Fatalf("reset with the same seed gave a different state:\n%s\n%s", before, after)
	}
	if err := w.Reset(false); err != nil {
		t.Fatal(err)
	}
	if n := len(w.Snapshot().Tencent.Instances); n != 0 {
		t.Fatalf("reset without fixtures kept %d instances", n)
	}
}

func TestSnapshotHidesSecretKeys(t *testing.T) {
	w, _ := newWorld(t, Settings{TencentCredentials: map[string]string{"AKIDx": "the-secret"}}, nil)
	b, err := json.Marshal(w.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "AKIDx") || strings.Contains(s, "the-secret") {
		t.Fatalf("snapshot must list SecretIds but never keys: %s", s)
	}
}

// TestEC2NodeAssociation: what the node EIP path meets. InstanceId works
// only for an instance with exactly one ENI (its primary ENI's primary IP);
// with secondary ENIs attached EC2 answers InvalidInstanceID and the
// primary ENI (device index 0) is found with DescribeNetworkInterfaces and
// addressed directly. DescribeAddresses names the instance either way.
func TestEC2NodeAssociation(t *testing.T) {
	const node, single = "i-0000000000000000a", "i-0000000000000000b"
	f := &Fixtures{EC2: EC2Fixtures{Instances: []EC2InstanceFixture{
		{InstanceID: node, VpcID: "vpc-1", NetworkInterfaces: []EC2ENIFixture{
			{NetworkInterfaceID: "eni-0000000000000000a", PrivateIPAddresses: []string{"10.0.0.10", "10.0.0.11"}},
			{NetworkInterfaceID: "eni-0000000000000001a", PrivateIPAddresses: []string{"10.0.0.20"}},
		}},
		{InstanceID: single, VpcID: "vpc-1", NetworkInterfaces: []EC2ENIFixture{
			{NetworkInterfaceID: "eni-0000000000000000b", PrivateIPAddresses: []string{"10.0.1.10", "10.0.1.11"}},
		}},
	}}}
	w, _ := newWorld(t, Settings{}, f)
	a, _ := w.EC2AllocateAddress(EC2AllocateInput{})
	b, _ := w.EC2AllocateAddress(EC2AllocateInput{})

	errs := []struct {
		name string
		in   EC2AssociateInput
		code string
	}{
		{"several ENIs", EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: node}, EC2InvalidInstanceID},
		{"unknown instance", EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: "i-0000000000000000f"}, EC2InvalidInstanceIDNotFound},
		{"providerID instead of instance ID", EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: "aws:///us-east-1a/" + single}, EC2InvalidInstanceIDMalformed},
		{"instance and ENI", EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: single, NetworkInterfaceID: "eni-0000000000000000b"}, EC2InvalidParameterCombination},
		{"neither", EC2AssociateInput{AllocationID: a.AllocationID}, EC2MissingParameter},
		{"private IP not on the instance", EC2AssociateInput{AllocationID: a.AllocationID, InstanceID: single, PrivateIPAddress: "10.0.0.10"}, EC2InvalidParameterValue},
	}
	for _, tc := range errs {
		if _, err := w.EC2AssociateAddress(tc.in); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}

	primary, _, err := w.EC2DescribeNetworkInterfaces(EC2DescribeNetworkInterfacesInput{Filters: []Filter{
		{Name: "attachment.instance-id", Values: []string{node, single}}, {Name: "attachment.device-index", Values: []string{"0"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range primary {
		got = append(got, e.NetworkInterfaceID+"@"+e.Attachment.InstanceID+"/"+e.PrivateIPAddresses[0].PrivateIPAddress)
		if e.Attachment.DeviceIndex != 0 || e.Attachment.NetworkCardIndex != 0 {
			t.Errorf("primary ENI attachment = %+v", e.Attachment)
		}
	}
	if diff := cmp.Diff([]string{"eni-0000000000000000a@" + node + "/10.0.0.10", "eni-0000000000000000b@" + single + "/10.0.1.10"}, got); diff != "" {
		t.Fatalf("primary ENIs (-want +got):\n%s", diff)
	}

	viaENI, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: a.AllocationID, NetworkInterfaceID: "eni-0000000000000000a", PrivateIPAddress: "10.0.0.10"})
	if err != nil {
		t.Fatal(err)
	}
	viaInstance, err := w.EC2AssociateAddress(EC2AssociateInput{AllocationID: b.AllocationID, InstanceID: single})
	if err != nil {
		t.Fatal(err)
	}
	addrs, _ := w.EC2DescribeAddresses("", nil, nil, []Filter{{Name: "instance-id", Values: []string{node, single}}})
	type assoc struct{ Alloc, Assoc, Instance, ENI, IP string }
	var gotA []assoc
	for _, x := range addrs {
		gotA = append(gotA, assoc{x.AllocationID, x.AssociationID, x.InstanceID, x.NetworkInterfaceID, x.PrivateIPAddress})
	}
	wantA := []assoc{
		{a.AllocationID, viaENI, node, "eni-0000000000000000a", "10.0.0.10"},
		{b.AllocationID, viaInstance, single, "eni-0000000000000000b", "10.0.1.10"},
	}
	if diff := cmp.Diff(wantA, gotA); diff != "" {
		t.Fatalf("associations (-want +got):\n%s", diff)
	}
}
