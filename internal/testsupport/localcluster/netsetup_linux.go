//go:build linux

package localcluster

import (
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// setUpControlPlaneNetwork gives the control-plane host the bridge the
// nodes attach to, with the gateway address on it, and lets it forward
// between the nodes.
func setUpControlPlaneNetwork(h *nsHost, plan realNetworkPlan) error {
	nl, err := netlinkAt(h)
	if err != nil {
		return err
	}
	defer nl.Close()
	if err := linkUp(nl, "lo"); err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: realNodeBridge}}
	if err := nl.LinkAdd(bridge); err != nil {
		return fmt.Errorf("%s: creating bridge %s: %w", h.name, realNodeBridge, err)
	}
	if err := nl.AddrAdd(bridge, addr(plan.Gateway)); err != nil {
		return fmt.Errorf("%s: adding %s to %s: %w", h.name, plan.Gateway, realNodeBridge, err)
	}
	if err := nl.LinkSetUp(bridge); err != nil {
		return fmt.Errorf("%s: bringing %s up: %w", h.name, realNodeBridge, err)
	}
	// A connection to a ClusterIP needs a route before kube-proxy's DNAT
	// rewrites its destination, and this host has no default route: the
	// service range goes to the bridge (the nodes have a default route).
	services := netip.MustParsePrefix(serviceCIDR)
	if err := nl.RouteAdd(&netlink.Route{Dst: ipNet(services), LinkIndex: bridge.Attrs().Index, Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("%s: routing the service range %s: %w", h.name, services, err)
	}
	return enableForwarding(h)
}

// attachNode links the node's eth0 to the bridge and routes: the node
// reaches the other nodes' pods through them and everything else through
// the control-plane host, which routes each node's pods to it.
func attachNode(cp, node *nsHost, me realNodeAddrs, plan realNetworkPlan) error {
	cpl, err := netlinkAt(cp)
	if err != nil {
		return err
	}
	defer cpl.Close()
	nodel, err := netlinkAt(node)
	if err != nil {
		return err
	}
	defer nodel.Close()

	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: me.Veth},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(int(node.netns.Fd())),
	}
	if err := cpl.LinkAdd(veth); err != nil {
		return fmt.Errorf("creating %s's link %s: %w", me.Name, me.Veth, err)
	}
	bridge, err := cpl.LinkByName(realNodeBridge)
	if err != nil {
		return fmt.Errorf("finding bridge %s: %w", realNodeBridge, err)
	}
	hostSide, err := cpl.LinkByName(me.Veth)
	if err != nil {
		return fmt.Errorf("finding %s: %w", me.Veth, err)
	}
	if err := cpl.LinkSetMaster(hostSide, bridge); err != nil {
		return fmt.Errorf("attaching %s to %s: %w", me.Veth, realNodeBridge, err)
	}
	if err := cpl.LinkSetUp(hostSide); err != nil {
		return fmt.Errorf("bringing %s up: %w", me.Veth, err)
	}
	if err := cpl.RouteAdd(&netlink.Route{Dst: ipNet(me.PodCIDR), Gw: me.IP.Addr().AsSlice(), LinkIndex: bridge.Attrs().Index}); err != nil {
		return fmt.Errorf("routing %s's pods %s: %w", me.Name, me.PodCIDR, err)
	}

	if err := linkUp(nodel, "lo"); err != nil {
		return fmt.Errorf("%s: %w", me.Name, err)
	}
	eth0, err := nodel.LinkByName("eth0")
	if err != nil {
		return fmt.Errorf("%s: finding eth0: %w", me.Name, err)
	}
	if err := nodel.AddrAdd(eth0, addr(me.IP)); err != nil {
		return fmt.Errorf("%s: adding %s to eth0: %w", me.Name, me.IP, err)
	}
	if err := nodel.LinkSetUp(eth0); err != nil {
		return fmt.Errorf("%s: bringing eth0 up: %w", me.Name, err)
	}
	if err := nodel.RouteAdd(&netlink.Route{Gw: plan.Gateway.Addr().AsSlice(), LinkIndex: eth0.Attrs().Index}); err != nil {
		return fmt.Errorf("%s: adding the default route: %w", me.Name, err)
	}
	for _, other := range plan.Nodes {
		if other.Name == me.Name {
			continue
		}
		route := &netlink.Route{Dst: ipNet(other.PodCIDR), Gw: other.IP.Addr().AsSlice(), LinkIndex: eth0.Attrs().Index}
		if err := nodel.RouteAdd(route); err != nil {
			return fmt.Errorf("%s: routing %s's pods %s: %w", me.Name, other.Name, other.PodCIDR, err)
		}
	}
	return enableForwarding(node)
}

// netlinkAt opens a netlink handle in the host's network namespace.
func netlinkAt(h *nsHost) (*netlink.Handle, error) {
	nl, err := netlink.NewHandleAt(netns.NsHandle(int(h.netns.Fd())))
	if err != nil {
		return nil, fmt.Errorf("opening netlink in %s: %w", h.name, err)
	}
	return nl, nil
}

func linkUp(nl *netlink.Handle, name string) error {
	l, err := nl.LinkByName(name)
	if err != nil {
		return fmt.Errorf("finding %s: %w", name, err)
	}
	if err := nl.LinkSetUp(l); err != nil {
		return fmt.Errorf("bringing %s up: %w", name, err)
	}
	return nil
}

// enableForwarding turns on IPv4 forwarding in the host's namespace: a
// network namespace starts with it off, and both the control-plane host
// (between nodes) and each node (for its pods) route. /proc/sys/net shows
// the namespace of the thread that opens it.
func enableForwarding(h *nsHost) error {
	return h.netns.Do(func(ns.NetNS) error {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
			return fmt.Errorf("%s: enabling IPv4 forwarding: %w", h.name, err)
		}
		return nil
	})
}

func addr(p netip.Prefix) *netlink.Addr { return &netlink.Addr{IPNet: ipNet(p)} }

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
