package ipam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// CNIArgs is the value of the k8s.v1.cni.galaxy.io/args annotation, field
// for field as galaxy marshals it, so galaxy's CNI plugins read it
// unchanged.
type CNIArgs struct {
	// RequestIPRange asks for one IP per inner list, from any of its ranges.
	RequestIPRange [][]string `json:"request_ip_range,omitempty"`
	// Common carries the allocated IPs.
	Common CommonCNIArgs `json:"common"`
}

// CommonCNIArgs holds the IPs handed to the CNI plugins.
type CommonCNIArgs struct {
	IPInfos []IPInfo `json:"ipinfos,omitempty"`
}

// IPInfo is one allocated IP: "ip" is the address with the pod subnet's
// prefix length ("10.0.0.5/24").
type IPInfo struct {
	IP      string `json:"ip"`
	Vlan    uint16 `json:"vlan"`
	Gateway string `json:"gateway"`
}

// ParseCNIArgs parses the annotation value; empty means no args. Every range
// of request_ip_range must parse.
func ParseCNIArgs(s string) (CNIArgs, error) {
	var a CNIArgs
	if strings.TrimSpace(s) == "" {
		return a, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&a); err != nil {
		return CNIArgs{}, fmt.Errorf("annotation %s is not valid JSON args: %w", networkingv1alpha1.AnnotationCNIArgs, err)
	}
	for i, inner := range a.RequestIPRange {
		if len(inner) == 0 {
			return CNIArgs{}, fmt.Errorf("annotation %s: request_ip_range[%d] is empty", networkingv1alpha1.AnnotationCNIArgs, i)
		}
		for _, r := range inner {
			if _, err := ParseRange(r); err != nil {
				return CNIArgs{}, fmt.Errorf("annotation %s: request_ip_range[%d]: %w", networkingv1alpha1.AnnotationCNIArgs, i, err)
			}
		}
	}
	return a, nil
}

// Format marshals a as galaxy does.
func (a CNIArgs) Format() (string, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("marshalling %s: %w", networkingv1alpha1.AnnotationCNIArgs, err)
	}
	return string(b), nil
}

// IPs returns the allocated addresses of a (those that parse).
func (a CNIArgs) IPs() []netip.Addr {
	var out []netip.Addr
	for _, info := range a.Common.IPInfos {
		p, err := netip.ParsePrefix(info.IP)
		if err != nil {
			continue
		}
		out = append(out, p.Addr().Unmap())
	}
	return out
}

// NewIPInfo builds the IP info for ip in a pool with the given subnet,
// gateway and VLAN.
func NewIPInfo(ip netip.Addr, subnet netip.Prefix, gateway string, vlan int32) IPInfo {
	return IPInfo{IP: netip.PrefixFrom(ip, subnet.Bits()).String(), Vlan: uint16(vlan), Gateway: gateway} //nolint:gosec // vlan is validated to 0..4094 by the CRD
}

// Request is what a pod asks for, read from galaxy's resource and
// annotations.
type Request struct {
	// Wants: the pod requests tke.cloud.tencent.com/eni-ip.
	Wants bool
	// Policy from k8s.v1.cni.galaxy.io/release-policy; "" if not set, so
	// the pool's default applies. Never when a pool is named.
	Policy networkingv1alpha1.ReleasePolicy
	// Pool from tke.cloud.tencent.com/eni-ip-pool.
	Pool string
	// Ranges: one IP per entry, from any of its ranges. Empty: one IP from
	// anywhere.
	Ranges [][]Range
	// Args is the parsed k8s.v1.cni.galaxy.io/args annotation.
	Args CNIArgs
	// Interfaces: one IP per entry, for that pod interface from that pool
	// (networking.edgeplane.io/float-ip-interfaces). Exclusive with Ranges
	// and Pool.
	Interfaces []InterfaceRequest
}

// ErrNotRequested: the pod does not request tke.cloud.tencent.com/eni-ip.
var ErrNotRequested = errors.New("pod does not request " + networkingv1alpha1.ResourceENIIP)

// ParsePolicy maps galaxy's annotation value to a policy. Unlike galaxy,
// which treats any unknown value as the default, an unknown value is an
// error, so a typo does not silently lose an IP.
func ParsePolicy(s string) (networkingv1alpha1.ReleasePolicy, error) {
	switch s {
	case "":
		return "", nil
	case "immutable":
		return networkingv1alpha1.ReleasePolicyImmutable, nil
	case "never":
		return networkingv1alpha1.ReleasePolicyNever, nil
	}
	return "", fmt.Errorf("annotation %s=%q: want \"\", \"immutable\" or \"never\"", networkingv1alpha1.AnnotationReleasePolicy, s)
}

// LegacyPolicy maps a policy to galaxy's stored integer (0, 1, 2).
func LegacyPolicy(p networkingv1alpha1.ReleasePolicy) int {
	switch p {
	case networkingv1alpha1.ReleasePolicyImmutable:
		return 1
	case networkingv1alpha1.ReleasePolicyNever:
		return 2
	}
	return 0
}

// PolicyFromLegacy maps galaxy's stored integer to a policy.
func PolicyFromLegacy(n int) networkingv1alpha1.ReleasePolicy {
	switch n {
	case 1:
		return networkingv1alpha1.ReleasePolicyImmutable
	case 2:
		return networkingv1alpha1.ReleasePolicyNever
	}
	return networkingv1alpha1.ReleasePolicyDefault
}

// WantsFloatIP reports whether any container requests (or limits, which
// implies the request) tke.cloud.tencent.com/eni-ip.
func WantsFloatIP(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if q, ok := c.Resources.Requests[networkingv1alpha1.ResourceENIIP]; ok && !q.IsZero() {
				return true
			}
			if q, ok := c.Resources.Limits[networkingv1alpha1.ResourceENIIP]; ok && !q.IsZero() {
				return true
			}
		}
	}
	return false
}

// ParseRequest reads a pod's float-IP request. A pod that does not request
// the resource returns ErrNotRequested; malformed annotations return an
// error that says which annotation and why.
func ParseRequest(pod *corev1.Pod) (Request, error) {
	if !WantsFloatIP(pod) {
		return Request{}, ErrNotRequested
	}
	r, err := ParseAnnotations(pod.Annotations)
	if err != nil {
		return Request{}, err
	}
	ifs, err := ParseInterfaces(pod.Annotations, pod.Namespace)
	if err != nil {
		return Request{}, err
	}
	return r.WithInterfaces(ifs)
}

// WithInterfaces adds an interface request to r. It cannot be combined with
// galaxy's request_ip_range or sharing pool, whose IPs name no interface.
func (r Request) WithInterfaces(ifs []InterfaceRequest) (Request, error) {
	if len(ifs) == 0 {
		return r, nil
	}
	if len(r.Ranges) > 0 || r.Pool != "" {
		return Request{}, fmt.Errorf("annotation %s cannot be combined with %s request_ip_range or %s",
			networkingv1alpha1.AnnotationFloatIPInterfaces, networkingv1alpha1.AnnotationCNIArgs, networkingv1alpha1.AnnotationENIIPPool)
	}
	r.Interfaces = ifs
	return r, nil
}

// ParseAnnotations reads the galaxy annotations of a pod that wants float IPs.
func ParseAnnotations(annotations map[string]string) (Request, error) {
	r := Request{Wants: true}
	p, err := ParsePolicy(annotations[networkingv1alpha1.AnnotationReleasePolicy])
	if err != nil {
		return Request{}, err
	}
	r.Policy = p
	if pool, ok := annotations[networkingv1alpha1.AnnotationENIIPPool]; ok {
		if pool == "" || strings.Contains(pool, "_") || len(pool) > 63 {
			return Request{}, fmt.Errorf("annotation %s=%q: want a pool name of 1 to 63 characters without \"_\"", networkingv1alpha1.AnnotationENIIPPool, pool)
		}
		r.Pool = pool
		r.Policy = networkingv1alpha1.ReleasePolicyNever
	}
	args, err := ParseCNIArgs(annotations[networkingv1alpha1.AnnotationCNIArgs])
	if err != nil {
		return Request{}, err
	}
	r.Args = args
	for _, inner := range args.RequestIPRange {
		var rs []Range
		for _, s := range inner {
			pr, err := ParseRange(s)
			if err != nil {
				return Request{}, err
			}
			rs = append(rs, pr)
		}
		r.Ranges = append(r.Ranges, rs)
	}
	return r, nil
}

// Slots returns the number of IPs the request needs (at least one).
func (r Request) Slots() int {
	switch {
	case len(r.Interfaces) > 0:
		return len(r.Interfaces)
	case len(r.Ranges) > 0:
		return len(r.Ranges)
	}
	return 1
}

// SlotPool is the pool slot i must come from; "" means any pool.
func (r Request) SlotPool(i int) string {
	if i < len(r.Interfaces) {
		return r.Interfaces[i].Pool
	}
	return ""
}

// SlotAcceptsPool reports whether slot i may take an IP of the named pool.
func (r Request) SlotAcceptsPool(i int, pool string) bool {
	want := r.SlotPool(i)
	return want == "" || want == pool
}

// SlotInterface is the pod interface of slot i; "" is the primary one.
func (r Request) SlotInterface(i int) string {
	if i < len(r.Interfaces) {
		return r.Interfaces[i].Interface
	}
	return ""
}

// SlotAllows reports whether ip satisfies slot i of the request.
func (r Request) SlotAllows(i int, ip netip.Addr) bool {
	if len(r.Ranges) == 0 {
		return true
	}
	for _, rg := range r.Ranges[i] {
		if rg.Contains(ip) {
			return true
		}
	}
	return false
}
