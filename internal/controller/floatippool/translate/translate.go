// Package translate turns galaxy-ipam's objects into FloatIPPools and
// FloatIPs, so a cluster migrates without any pod changing IP: the
// kube-system/floatingip-config ConfigMap (key floatingips), galaxy Pool
// objects (pools.galaxy.k8s.io: size, preAllocateIP) and galaxy FloatingIP
// objects (floatingips.galaxy.k8s.io, named after the IP). The functions
// here are pure; the controller that applies them uses internal/translator.
package translate

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// Galaxy's ConfigMap.
const (
	ConfigMapNamespace = "kube-system"
	ConfigMapName      = "floatingip-config"
	ConfigMapKey       = "floatingips"
)

// galaxyPool is one entry of the floatingips JSON array.
type galaxyPool struct {
	NodeSubnets    []string `json:"nodeSubnets"`
	RoutableSubnet string   `json:"routableSubnet"`
	IPs            []string `json:"ips"`
	Subnet         string   `json:"subnet"`
	Gateway        string   `json:"gateway"`
	Vlan           int32    `json:"vlan"`
}

// Pool is a translated FloatIPPool: its name and spec.
type Pool struct {
	Name string
	Spec networkingv1alpha1.FloatIPPoolSpec
}

// PoolsFromConfig translates the floatingips JSON into FloatIPPools, one per
// entry, named galaxy-<subnet>-<first IP> so the name is stable across
// edits that only reorder entries.
func PoolsFromConfig(data string) ([]Pool, error) {
	var entries []galaxyPool
	if err := json.Unmarshal([]byte(data), &entries); err != nil {
		return nil, fmt.Errorf("parsing %s/%s key %s: %w", ConfigMapNamespace, ConfigMapName, ConfigMapKey, err)
	}
	var out []Pool
	seen := map[string]bool{}
	for i, e := range entries {
		nodeSubnets := e.NodeSubnets
		if len(nodeSubnets) == 0 && e.RoutableSubnet != "" {
			nodeSubnets = []string{e.RoutableSubnet}
		}
		if len(nodeSubnets) == 0 || len(e.IPs) == 0 || e.Subnet == "" {
			return nil, fmt.Errorf("floatingips[%d]: nodeSubnets (or routableSubnet), ips and subnet are required", i)
		}
		set, err := ipam.ParseSet(e.IPs, nil)
		if err != nil {
			return nil, fmt.Errorf("floatingips[%d]: %w", i, err)
		}
		if len(set) == 0 {
			return nil, fmt.Errorf("floatingips[%d]: no IPs", i)
		}
		subnet, err := netip.ParsePrefix(e.Subnet)
		if err != nil {
			return nil, fmt.Errorf("floatingips[%d]: subnet: %w", i, err)
		}
		name := fmt.Sprintf("galaxy-%s-%d-%s", dashed(subnet.Masked().Addr().String()), subnet.Bits(), dashed(set[0].First.String()))
		if len(name) > 63 || seen[name] {
			name = fmt.Sprintf("galaxy-%d", i)
		}
		seen[name] = true
		out = append(out, Pool{Name: name, Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges:        e.IPs,
			Subnet:        e.Subnet,
			Gateway:       e.Gateway,
			Vlan:          e.Vlan,
			NodeSubnets:   nodeSubnets,
			ReleasePolicy: networkingv1alpha1.ReleasePolicyDefault,
		}})
	}
	return out, nil
}

func dashed(s string) string { return strings.NewReplacer(".", "-", ":", "-").Replace(s) }

// PoolFromGalaxyPool translates a galaxy Pool (kube-system/<name>) into a
// sharing-group FloatIPPool of the same name.
func PoolFromGalaxyPool(name string, size int32, preAllocateIP bool) Pool {
	s := size
	return Pool{Name: name, Spec: networkingv1alpha1.FloatIPPoolSpec{Size: &s, PreAllocate: preAllocateIP}}
}

// GalaxyFloatingIP is what is read from a floatingips.galaxy.k8s.io object.
type GalaxyFloatingIP struct {
	// Name is the object name: the IP.
	Name       string
	Key        string
	Attribute  string // {"NodeName":"…","Uid":"…"}
	Policy     int
	UpdateTime time.Time
	// Reserved: the object carries galaxy's reserved label.
	Reserved bool
}

// FloatIPFromGalaxy translates a galaxy FloatingIP into a FloatIP (spec and
// status) in the pool among pools whose ranges hold the IP.
func FloatIPFromGalaxy(g GalaxyFloatingIP, pools []Pool) (*networkingv1alpha1.FloatIP, error) {
	ip, err := netip.ParseAddr(g.Name)
	if err != nil {
		return nil, fmt.Errorf("galaxy FloatingIP %q is not named after an IP: %w", g.Name, err)
	}
	ip = ip.Unmap()
	pool := ""
	for _, p := range pools {
		set, err := ipam.ParseSet(p.Spec.Ranges, p.Spec.ExcludeIPs)
		if err == nil && set.Contains(ip) {
			pool = p.Name
			break
		}
	}
	if pool == "" {
		return nil, fmt.Errorf("IP %s of galaxy FloatingIP is in no pool of the config", ip)
	}
	f := &networkingv1alpha1.FloatIP{
		ObjectMeta: metav1.ObjectMeta{
			Name:   ipam.NameForIP(ip),
			Labels: map[string]string{networkingv1alpha1.LabelFloatIPPool: pool},
		},
		Spec: networkingv1alpha1.FloatIPSpec{IP: ip.String(), Pool: pool, Key: g.Key, ReleasePolicy: ipam.PolicyFromLegacy(g.Policy)},
	}
	if g.Reserved {
		f.Labels[networkingv1alpha1.LabelFloatIPReserved] = "true"
	}
	var attr struct {
		NodeName string `json:"NodeName"`
		UID      string `json:"Uid"`
	}
	if g.Attribute != "" {
		_ = json.Unmarshal([]byte(g.Attribute), &attr) // a bad attribute only loses the holder's UID
	}
	t := metav1.NewTime(g.UpdateTime)
	f.Status.UpdateTime = &t
	f.Status.PodUID, f.Status.NodeName = attr.UID, attr.NodeName
	k, err := ipam.ParseKey(g.Key)
	switch {
	case err == nil && !k.IsReservation() && attr.UID != "":
		f.Status.Phase = networkingv1alpha1.FloatIPAllocated
		f.Status.PodNamespace, f.Status.PodName = k.Namespace, k.PodName
	default:
		f.Status.Phase = networkingv1alpha1.FloatIPReserved
	}
	return f, nil
}

// Orphans lists the IPs in use (FloatIPs of the translated pools) that are
// no longer in any translated pool: unlike galaxy, which deletes them, they
// are reported and kept.
func Orphans(fips []networkingv1alpha1.FloatIP, pools []Pool) []string {
	var out []string
	for _, f := range fips {
		ip, err := netip.ParseAddr(f.Spec.IP)
		if err != nil {
			continue
		}
		in := false
		for _, p := range pools {
			set, err := ipam.ParseSet(p.Spec.Ranges, p.Spec.ExcludeIPs)
			if err == nil && set.Contains(ip.Unmap()) {
				in = true
				break
			}
		}
		if !in {
			out = append(out, f.Spec.IP)
		}
	}
	return out
}
