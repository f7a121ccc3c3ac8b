package localcluster

import (
	"net/netip"
	"testing"
)

func TestPlanRealNetwork(t *testing.T) {
	plan, err := planRealNetwork(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Gateway.String(); got != "172.31.0.1/24" {
		t.Errorf("gateway = %s, want 172.31.0.1/24", got)
	}
	want := []realNodeAddrs{
		{Name: "real-1", Veth: "lcveth1", IP: netip.MustParsePrefix("172.31.0.11/24"), PodCIDR: netip.MustParsePrefix("10.244.1.0/24")},
		{Name: "real-2", Veth: "lcveth2", IP: netip.MustParsePrefix("172.31.0.12/24"), PodCIDR: netip.MustParsePrefix("10.244.2.0/24")},
	}
	if len(plan.Nodes) != len(want) {
		t.Fatalf("nodes = %+v, want %+v", plan.Nodes, want)
	}
	for i := range want {
		if plan.Nodes[i] != want[i] {
			t.Errorf("node %d = %+v, want %+v", i, plan.Nodes[i], want[i])
		}
	}

	// The largest plan still fits its subnets and never overlaps kwok's
	// pod range or the service range.
	largest, err := planRealNetwork(maxRealNodes)
	if err != nil {
		t.Fatal(err)
	}
	kwokPods, services := netip.MustParsePrefix(podCIDR).Masked(), netip.MustParsePrefix(serviceCIDR)
	seen := map[netip.Addr]bool{plan.Gateway.Addr(): true}
	for _, n := range largest.Nodes {
		if !largest.Gateway.Masked().Contains(n.IP.Addr()) || seen[n.IP.Addr()] {
			t.Errorf("%s: address %s outside the bridge subnet or taken twice", n.Name, n.IP)
		}
		seen[n.IP.Addr()] = true
		if !largest.ClusterCIDR.Contains(n.PodCIDR.Addr()) || n.PodCIDR.Overlaps(kwokPods) || n.PodCIDR.Overlaps(services) {
			t.Errorf("%s: pod range %s outside the cluster range or overlapping kwok's or the services'", n.Name, n.PodCIDR)
		}
		if len(n.Veth) > 15 {
			t.Errorf("%s: link name %q is longer than a Linux interface name may be", n.Name, n.Veth)
		}
	}

	for _, n := range []int{0, -1, maxRealNodes + 1} {
		if _, err := planRealNetwork(n); err == nil {
			t.Errorf("planRealNetwork(%d) succeeded, want an error", n)
		}
	}
}

func TestRealNetworkContains(t *testing.T) {
	plan, err := planRealNetwork(2)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"172.31.0.12":  true,  // a node
		"10.244.2.7":   true,  // a pod
		"10.96.0.1":    true,  // a Service
		"127.0.0.1":    false, // the machine's loopback
		"169.254.0.1":  false,
		"172.31.1.1":   false,
		"192.168.0.1":  false,
		"10.0.0.5":     false, // kwok's pods exist nowhere
		"::1":          false,
		"fd00::1":      false,
		"10.245.0.1":   false,
		"172.31.0.255": true,
	} {
		if got := plan.contains(netip.MustParseAddr(addr)); got != want {
			t.Errorf("contains(%s) = %v, want %v", addr, got, want)
		}
	}
}
