package cniipam

import (
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// BuildResult is the IPAM result for ifname's addresses: the addresses and
// gateways, the configured routes, or by default a default route per
// address family via the pool's gateway on the primary interface only (a
// second default route on a secondary interface would fight the first).
func BuildResult(cfg Config, ifname string, addrs []Address) *types100.Result {
	res := &types100.Result{CNIVersion: types100.ImplementedSpecVersion, DNS: cfg.DNS}
	gateways := map[bool]net.IP{} // by is-IPv4
	for _, a := range addrs {
		ipc := &types100.IPConfig{Address: net.IPNet{IP: net.IP(a.Prefix.Addr().AsSlice()), Mask: net.CIDRMask(a.Prefix.Bits(), a.Prefix.Addr().BitLen())}}
		if a.Gateway.IsValid() {
			ipc.Gateway = net.IP(a.Gateway.AsSlice())
			if _, ok := gateways[a.Gateway.Is4()]; !ok {
				gateways[a.Gateway.Is4()] = ipc.Gateway
			}
		}
		res.IPs = append(res.IPs, ipc)
	}
	switch {
	case cfg.RoutesSet:
		for _, r := range cfg.Routes {
			c := *r
			res.Routes = append(res.Routes, &c)
		}
	case ifname == cfg.PrimaryInterface:
		for _, v4 := range []bool{true, false} {
			gw, ok := gateways[v4]
			if !ok {
				continue
			}
			dst := netip.PrefixFrom(netip.IPv6Unspecified(), 0)
			if v4 {
				dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
			}
			res.Routes = append(res.Routes, &types.Route{
				Dst: net.IPNet{IP: net.IP(dst.Addr().AsSlice()), Mask: net.CIDRMask(0, dst.Addr().BitLen())},
				GW:  gw,
			})
		}
	}
	return res
}
