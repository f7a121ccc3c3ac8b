package localcluster

import (
	"fmt"
	"net/netip"
)

// The real nodes' network. Each real node is a network namespace of its own
// whose eth0 sits on one bridge; the bridge lives in the control plane's
// network namespace (the "control-plane host"), whose address on it, the
// gateway, is where the nodes reach the API server. None of these addresses
// exists outside those namespaces, so they cannot collide with the
// machine's networks, nor with another local cluster's (each has its own
// namespaces), and they stay clear of the kwok pod range (podCIDR) and the
// service range.
const (
	realNodeSubnet  = "172.31.0.0/24"
	realClusterCIDR = "10.244.0.0/16"
	// realNodeBridge is the bridge in the control-plane host; each node's
	// veth peer there is named realNodeVethPrefix<index>.
	realNodeBridge     = "lcbr0"
	realNodeVethPrefix = "lcveth"
	// maxRealNodes keeps every node address and pod range inside the
	// subnets above.
	maxRealNodes = 200
)

// realNetworkPlan is where everything of the real nodes' network goes.
type realNetworkPlan struct {
	// Gateway is the control-plane host's address on the bridge, with the
	// bridge subnet's length.
	Gateway     netip.Prefix
	ClusterCIDR netip.Prefix
	Nodes       []realNodeAddrs
}

// realNodeAddrs is one node's share of the network.
type realNodeAddrs struct {
	Name string
	// Veth is the name of the node's link on the bridge, in the
	// control-plane host.
	Veth string
	// IP is the node's eth0 address (its InternalIP), with the bridge
	// subnet's length.
	IP netip.Prefix
	// PodCIDR is the node's pod range: the bridge CNI plugin's gateway is
	// its first address and host-local hands out the rest.
	PodCIDR netip.Prefix
}

// realNodeName names the i-th (1-based) real node.
func realNodeName(i int) string { return fmt.Sprintf("real-%d", i) }

// planRealNetwork lays out the network of n real nodes: node i (1-based)
// gets 172.31.0.(10+i) and the pod range 10.244.i.0/24.
func planRealNetwork(n int) (realNetworkPlan, error) {
	if n < 1 || n > maxRealNodes {
		return realNetworkPlan{}, fmt.Errorf("real nodes: %d requested, between 1 and %d supported", n, maxRealNodes)
	}
	subnet := netip.MustParsePrefix(realNodeSubnet)
	cluster := netip.MustParsePrefix(realClusterCIDR)
	plan := realNetworkPlan{
		Gateway:     netip.PrefixFrom(subnet.Addr().Next(), subnet.Bits()),
		ClusterCIDR: cluster,
	}
	for i := 1; i <= n; i++ {
		ip := subnet.Addr().As4()
		ip[3] = byte(10 + i)
		pods := cluster.Addr().As4()
		pods[2] = byte(i)
		plan.Nodes = append(plan.Nodes, realNodeAddrs{
			Name:    realNodeName(i),
			Veth:    fmt.Sprintf("%s%d", realNodeVethPrefix, i),
			IP:      netip.PrefixFrom(netip.AddrFrom4(ip), subnet.Bits()),
			PodCIDR: netip.PrefixFrom(netip.AddrFrom4(pods), 24),
		})
	}
	return plan, nil
}

// contains reports whether addr is inside the real nodes' network: the
// bridge subnet, the pods' range or the service range. The egress proxy
// refuses everything else.
func (p realNetworkPlan) contains(addr netip.Addr) bool {
	return p.Gateway.Masked().Contains(addr) || p.ClusterCIDR.Contains(addr) ||
		netip.MustParsePrefix(serviceCIDR).Contains(addr)
}

// The float-IP network of the real nodes. A pod naming FloatIPRuntimeClass
// (runtimeClassName) gets its eth0 from the node's float-IP network
// (floatIPConfig: the bridge with edgeplane-cni-ipam as its IPAM, the
// plugin the chart's DaemonSet installs), every other pod from host-local:
// containerd reads a CNI configuration directory per runtime handler, so
// one node runs both, as a cluster whose float-IP pods share nodes with
// others must (galaxy's daemon or Multus choose per pod elsewhere).
const (
	FloatIPRuntimeClass   = "floatip"
	FloatIPRuntimeHandler = "floatip"
)

// FloatIPRange is the range of a real node's pod addresses that host-local
// leaves to its float-IP network: the upper half of the node's pod range
// (the lower half is host-local's), for a FloatIPPool whose nodeSubnets
// name that node. The bridge's address, the first of the pod range, is
// the pool's gateway.
func FloatIPRange(podCIDR netip.Prefix) (first, last netip.Addr, err error) {
	_, f, err := splitPodRange(podCIDR)
	return f.first, f.last, err
}
