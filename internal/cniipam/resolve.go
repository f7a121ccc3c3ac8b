package cniipam

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// Address is one IP handed to an interface.
type Address struct {
	// Prefix is the IP with its pod subnet's length.
	Prefix netip.Prefix
	// Gateway of the pool; invalid when the pool has none.
	Gateway netip.Addr
	// Pool the IP belongs to.
	Pool string
}

// State is what the API server says about a pod's float IPs.
type State struct {
	// Pod is the pod the call is for, its UID already checked.
	Pod *corev1.Pod
	// Bound are the FloatIPs whose status names the pod's UID.
	Bound []networkingv1alpha1.FloatIP
	// Pools are the FloatIPPools of the FloatIPs in Bound and Holders, by
	// name (absent: no such pool).
	Pools map[string]*networkingv1alpha1.FloatIPPool
	// Holders are the FloatIPs of the IPs in the pod's galaxy annotation
	// (absent: no FloatIP for that IP), read only when no FloatIP is
	// BoundTo the pod.
	Holders map[netip.Addr]*networkingv1alpha1.FloatIP
}

// BoundTo is the FloatIPs of fips that the pod holds now: allocated to its
// UID, namespace and name, and not being deleted.
func BoundTo(pod *corev1.Pod, fips []networkingv1alpha1.FloatIP) []*networkingv1alpha1.FloatIP {
	var out []*networkingv1alpha1.FloatIP
	for i := range fips {
		f := &fips[i]
		if f.Status.PodUID == string(pod.UID) && f.Status.PodNamespace == pod.Namespace && f.Status.PodName == pod.Name &&
			f.Status.Phase == networkingv1alpha1.FloatIPAllocated && f.DeletionTimestamp == nil {
			out = append(out, f)
		}
	}
	return out
}

// Resolve decides the addresses of the pod's interface ifname: the FloatIPs
// bound to the pod's UID that are for ifname, else (a pod galaxy-ipam bound
// before migration) the IPs of its k8s.v1.cni.galaxy.io/args annotation,
// each only if its FloatIP names the pod (CheckHolder): the annotation is
// the pod's own to write, so it never grants an IP by itself. IPs recorded
// without an interface are the primary interface's. A refusal with
// ReasonAllocationPending means the extender has not written the pod's
// allocation yet: ask again.
func Resolve(cfg Config, ifname string, st State) ([]Address, *Refusal) {
	pod := st.Pod
	name := pod.Namespace + "/" + pod.Name
	pools := st.Pools
	ifaceOf := func(recorded string) string {
		if recorded == "" {
			return cfg.PrimaryInterface
		}
		return recorded
	}
	bound := BoundTo(pod, st.Bound)
	infos := annotationInfos(pod)
	if len(bound) > 0 {
		var out []Address
		var others []string
		for _, f := range bound {
			if ifaceOf(f.Status.Interface) != ifname {
				others = append(others, ifaceOf(f.Status.Interface))
				continue
			}
			ip, err := netip.ParseAddr(f.Spec.IP)
			if err != nil {
				return nil, refuse(ReasonIPOutsidePool, "pod %s: FloatIP %s holds no valid IP", name, f.Name)
			}
			a, r := addressInPool(cfg, name, ip.Unmap(), pools[f.Spec.Pool], f.Spec.Pool)
			if r != nil {
				return nil, r
			}
			out = append(out, a)
		}
		if len(out) == 0 {
			return nil, refuse(ReasonNoFloatIPForInterface, "pod %s has float IPs for interface(s) %s, none for %s",
				name, strings.Join(slices.Compact(slices.Sorted(slices.Values(others))), ", "), ifname)
		}
		// The annotation's order (the request's) first, so the first IP of
		// a multi-IP interface stays first.
		slices.SortFunc(out, func(a, b Address) int {
			return cmp.Or(cmp.Compare(infoIndex(infos, a.Prefix.Addr()), infoIndex(infos, b.Prefix.Addr())), a.Prefix.Addr().Compare(b.Prefix.Addr()))
		})
		return out, nil
	}
	if len(infos) == 0 {
		if !ipam.WantsFloatIP(pod) {
			return nil, refuse(ReasonNoFloatIP, "pod %s requests no %s, so it has no float IP; this network (edgeplane IPAM) serves only float-IP pods", name, networkingv1alpha1.ResourceENIIP)
		}
		return nil, refuse(ReasonAllocationPending, "pod %s has no float IP allocated yet (no FloatIP bound to UID %s, no %s)", name, pod.UID, networkingv1alpha1.AnnotationCNIArgs)
	}
	// A pod galaxy-ipam bound: the annotation in slot order, one entry per
	// requested interface when the pod asked for interfaces. Every IP is
	// checked against its FloatIP, also those of other interfaces: an
	// annotation naming a foreign IP is refused whichever interface asks.
	ifs, _ := ipam.ParseInterfaces(pod.Annotations, pod.Namespace)
	var out []Address
	var others []string
	for i, info := range infos {
		prefix, err := netip.ParsePrefix(info.IP)
		if err != nil {
			return nil, refuse(ReasonIPOutsidePool, "pod %s: %s ipinfos[%d].ip %q is not an IP with a prefix length", name, networkingv1alpha1.AnnotationCNIArgs, i, info.IP)
		}
		ip := prefix.Addr().Unmap()
		f := st.Holders[ip]
		if r := CheckHolder(pod, ip, f); r != nil {
			return nil, r
		}
		iface := cfg.PrimaryInterface
		if i < len(ifs) {
			iface = ifs[i].Interface
		}
		if iface != ifname {
			others = append(others, iface)
			continue
		}
		a, r := addressInPool(cfg, name, ip, pools[f.Spec.Pool], f.Spec.Pool)
		if r != nil {
			return nil, r
		}
		// galaxy's own prefix length and gateway, as its CNI would use them.
		a.Prefix = netip.PrefixFrom(ip, prefix.Bits())
		if gw, err := netip.ParseAddr(info.Gateway); err == nil {
			a.Gateway = gw.Unmap()
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, refuse(ReasonNoFloatIPForInterface, "pod %s has float IPs for interface(s) %s, none for %s",
			name, strings.Join(slices.Compact(slices.Sorted(slices.Values(others))), ", "), ifname)
	}
	return out, nil
}

// CheckHolder refuses ip, an IP of the pod's galaxy annotation, unless f
// (its FloatIP, nil when there is none) names the pod: by UID (the extender
// records it when it allocates), or, for a galaxy allocation migrated
// without a UID, by the galaxy key of the pod's namespace, name, owner and
// sharing pool. Anything else (no FloatIP, a reservation, another pod's
// IP, an IP being released) is refused with the IP and why, so that an IP
// is never on two pods.
func CheckHolder(pod *corev1.Pod, ip netip.Addr, f *networkingv1alpha1.FloatIP) *Refusal {
	name := pod.Namespace + "/" + pod.Name
	where := fmt.Sprintf("pod %s: IP %s of its %s annotation", name, ip, networkingv1alpha1.AnnotationCNIArgs)
	switch {
	case f == nil:
		return refuse(ReasonIPNotAllocatedToPod, "%s has no FloatIP: it is allocated to no pod, and writing the annotation does not allocate it", where)
	case !sameIP(f.Spec.IP, ip):
		return refuse(ReasonIPNotAllocatedToPod, "%s: FloatIP %s is for IP %q", where, f.Name, f.Spec.IP)
	case f.DeletionTimestamp != nil || f.Status.Phase == networkingv1alpha1.FloatIPReleasing:
		return refuse(ReasonIPNotAllocatedToPod, "%s is being released (FloatIP %s)", where, f.Name)
	case f.Status.PodUID == string(pod.UID):
		return nil
	case f.Status.PodUID != "":
		return refuse(ReasonIPHeldByOtherPod, "%s is held by pod %s/%s (UID %s)", where, f.Status.PodNamespace, f.Status.PodName, f.Status.PodUID)
	}
	key, err := ipam.ParseKey(f.Spec.Key)
	switch {
	case f.Spec.Key == "":
		return refuse(ReasonIPNotAllocatedToPod, "%s is reserved by an admin (FloatIP %s has no key)", where, f.Name)
	case err != nil || key.IsReservation():
		return refuse(ReasonIPNotAllocatedToPod, "%s is reserved for %s, not allocated to a pod (FloatIP %s)", where, f.Spec.Key, f.Name)
	case key == ipam.KeyFor(pod.Namespace, pod.Name, ipam.PodOwner(pod), pod.Annotations[networkingv1alpha1.AnnotationENIIPPool]):
		return nil
	case key.Namespace == pod.Namespace && key.PodName == pod.Name:
		return refuse(ReasonIPHeldByOtherPod, "%s is recorded for key %s (FloatIP %s), which is not this pod's owner or pool", where, f.Spec.Key, f.Name)
	}
	return refuse(ReasonIPHeldByOtherPod, "%s is recorded for pod %s/%s (FloatIP %s, key %s)", where, key.Namespace, key.PodName, f.Name, f.Spec.Key)
}

func sameIP(s string, ip netip.Addr) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Unmap() == ip
}

// AnnotationIPs are the IPs of the pod's galaxy annotation, whose FloatIPs
// Resolve needs as State.Holders.
func AnnotationIPs(pod *corev1.Pod) []netip.Addr {
	var out []netip.Addr
	for _, info := range annotationInfos(pod) {
		if p, err := netip.ParsePrefix(info.IP); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// annotationInfos are the ipinfos of the pod's galaxy annotation; a
// malformed annotation counts as none (the extender reports it).
func annotationInfos(pod *corev1.Pod) []ipam.IPInfo {
	args, err := ipam.ParseCNIArgs(pod.Annotations[networkingv1alpha1.AnnotationCNIArgs])
	if err != nil {
		return nil
	}
	return args.Common.IPInfos
}

func infoIndex(infos []ipam.IPInfo, ip netip.Addr) int {
	for i, info := range infos {
		if p, err := netip.ParsePrefix(info.IP); err == nil && p.Addr().Unmap() == ip {
			return i
		}
	}
	return len(infos)
}

// addressInPool checks that ip is one the pool hands out, on a network that
// serves the pool, and returns its address.
func addressInPool(cfg Config, pod string, ip netip.Addr, pool *networkingv1alpha1.FloatIPPool, poolName string) (Address, *Refusal) {
	if pool == nil {
		if poolName == "" {
			return Address{}, refuse(ReasonIPOutsidePool, "pod %s: IP %s is in no FloatIPPool's ranges", pod, ip)
		}
		return Address{}, refuse(ReasonIPOutsidePool, "pod %s: IP %s is of FloatIPPool %s, which does not exist", pod, ip, poolName)
	}
	if len(cfg.Pools) > 0 && !slices.Contains(cfg.Pools, pool.Name) {
		return Address{}, refuse(ReasonIPOutsidePool, "pod %s: IP %s is of FloatIPPool %s; network %s serves only pool(s) %s",
			pod, ip, pool.Name, cfg.Name, strings.Join(cfg.Pools, ", "))
	}
	subnet, ok := poolSubnet(pool)
	if !ok || !poolHands(pool, ip) {
		return Address{}, refuse(ReasonIPOutsidePool, "pod %s: IP %s is outside the ranges of its FloatIPPool %s", pod, ip, pool.Name)
	}
	a := Address{Prefix: netip.PrefixFrom(ip, subnet.Bits()), Pool: pool.Name}
	if gw, err := netip.ParseAddr(pool.Spec.Gateway); err == nil {
		a.Gateway = gw.Unmap()
	}
	return a, nil
}

// poolSubnet is the pool's subnet, which must hold its IPs.
func poolSubnet(pool *networkingv1alpha1.FloatIPPool) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(pool.Spec.Subnet)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// poolHands reports whether ip is in the pool's ranges and subnet.
func poolHands(pool *networkingv1alpha1.FloatIPPool, ip netip.Addr) bool {
	subnet, ok := poolSubnet(pool)
	if !ok || !subnet.Contains(ip) || len(pool.Spec.Ranges) == 0 {
		return false
	}
	set, err := ipam.ParseSet(pool.Spec.Ranges, nil)
	return err == nil && set.Contains(ip)
}

// describe lists addresses for messages and Events.
func describe(addrs []Address) string {
	parts := make([]string, 0, len(addrs))
	for _, a := range addrs {
		s := a.Prefix.String()
		if a.Gateway.IsValid() {
			s += fmt.Sprintf(" via %s", a.Gateway)
		}
		parts = append(parts, s+" (pool "+a.Pool+")")
	}
	return strings.Join(parts, ", ")
}
