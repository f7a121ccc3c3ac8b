package ipam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/containernetworking/cni/pkg/utils"
	"k8s.io/apimachinery/pkg/util/validation"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// MaxInterfaces bounds the float-IP interfaces of one pod.
const MaxInterfaces = 8

// InterfaceRequest asks for one float IP on a pod interface from a pool.
type InterfaceRequest struct {
	// Interface is the name inside the pod (CNI_IFNAME).
	Interface string
	// Pool is the FloatIPPool (with ranges) the IP comes from.
	Pool string
}

// interfaceEntry is one element of the JSON form of AnnotationFloatIPInterfaces.
type interfaceEntry struct {
	Interface string `json:"interface,omitempty"`
	Network   string `json:"network,omitempty"`
	Pool      string `json:"pool"`
}

// ParseInterfaces reads AnnotationFloatIPInterfaces of a pod in namespace;
// no annotation means no interface request (nil). A network entry is
// resolved against the pod's Multus k8s.v1.cni.cncf.io/networks annotation
// to the interface Multus names it. Every error names the annotation and the
// entry.
func ParseInterfaces(annotations map[string]string, namespace string) ([]InterfaceRequest, error) {
	raw, ok := annotations[networkingv1alpha1.AnnotationFloatIPInterfaces]
	if !ok {
		return nil, nil
	}
	fail := func(format string, args ...any) ([]InterfaceRequest, error) {
		return nil, fmt.Errorf("annotation %s: %s", networkingv1alpha1.AnnotationFloatIPInterfaces, fmt.Sprintf(format, args...))
	}
	entries, err := decodeInterfaceEntries(raw)
	if err != nil {
		return fail("%v", err)
	}
	if len(entries) == 0 {
		return fail("lists no interface")
	}
	if len(entries) > MaxInterfaces {
		return fail("lists %d interfaces, at most %d are allowed", len(entries), MaxInterfaces)
	}
	var networks []MultusNetwork
	if s, ok := annotations[networkingv1alpha1.AnnotationMultusNetworks]; ok {
		if networks, err = ParseMultusNetworks(s, namespace); err != nil {
			return fail("%v", err)
		}
	}
	out := make([]InterfaceRequest, 0, len(entries))
	seen := map[string]int{}
	for i, e := range entries {
		if msgs := validation.IsDNS1123Subdomain(e.Pool); len(msgs) > 0 || len(e.Pool) > 63 {
			return fail("entry %d: pool %q is not a FloatIPPool name (1 to 63 lower-case letters, digits, '-' and '.')", i, e.Pool)
		}
		ifname := e.Interface
		switch {
		case e.Interface != "" && e.Network != "":
			return fail("entry %d: give interface or network, not both", i)
		case e.Network != "":
			if networks == nil {
				return fail("entry %d: network %q needs the pod's %s annotation", i, e.Network, networkingv1alpha1.AnnotationMultusNetworks)
			}
			ns, name := splitNetworkRef(e.Network, namespace)
			ifname = ""
			for _, n := range networks {
				if n.Namespace == ns && n.Name == name {
					ifname = n.Interface
					break
				}
			}
			if ifname == "" {
				return fail("entry %d: network %s/%s is not in the pod's %s annotation", i, ns, name, networkingv1alpha1.AnnotationMultusNetworks)
			}
		case e.Interface == "":
			return fail("entry %d: names neither an interface nor a network", i)
		}
		if err := utils.ValidateInterfaceName(ifname); err != nil {
			return fail("entry %d: interface %q: %s", i, ifname, err.Msg)
		}
		if j, dup := seen[ifname]; dup {
			return fail("entries %d and %d both ask for interface %s", j, i, ifname)
		}
		seen[ifname] = i
		out = append(out, InterfaceRequest{Interface: ifname, Pool: e.Pool})
	}
	return out, nil
}

// decodeInterfaceEntries reads the JSON list form or the short form
// "eth0=public,net1=storage".
func decodeInterfaceEntries(raw string) ([]interfaceEntry, error) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, "[") {
		var entries []interfaceEntry
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&entries); err != nil {
			return nil, fmt.Errorf("not a JSON list of {interface|network, pool}: %w", err)
		}
		if dec.More() {
			return nil, errors.New("trailing data after the JSON list")
		}
		return entries, nil
	}
	if s == "" {
		return nil, nil
	}
	var entries []interfaceEntry
	for _, item := range strings.Split(s, ",") {
		ifname, pool, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want <interface>=<pool>", item)
		}
		entries = append(entries, interfaceEntry{Interface: strings.TrimSpace(ifname), Pool: strings.TrimSpace(pool)})
	}
	return entries, nil
}

// MultusNetwork is one network of a pod's k8s.v1.cni.cncf.io/networks
// annotation and the interface Multus attaches it as.
type MultusNetwork struct {
	Namespace, Name, Interface string
}

// multusElement is the part of Multus' NetworkSelectionElement that names
// a network and its interface; Multus' other fields are not ours to check.
type multusElement struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Interface string `json:"interface,omitempty"`
}

// ParseMultusNetworks reads Multus' network selection annotation, the JSON
// list form or the short form "[<namespace>/]<name>[@<interface>],...", and
// names each network's interface the way Multus does: the requested one,
// else net<N> for the N-th network (counting from 1; the cluster network is
// eth0).
func ParseMultusNetworks(raw, namespace string) ([]MultusNetwork, error) {
	s := strings.TrimSpace(raw)
	var elems []multusElement
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &elems); err != nil {
			return nil, fmt.Errorf("%s is not a JSON list of networks: %w", networkingv1alpha1.AnnotationMultusNetworks, err)
		}
	} else if s != "" {
		for _, item := range strings.Split(s, ",") {
			item = strings.TrimSpace(item)
			ref, ifname, _ := strings.Cut(item, "@")
			ns, name := splitNetworkRef(ref, "")
			elems = append(elems, multusElement{Namespace: ns, Name: name, Interface: ifname})
		}
	}
	out := make([]MultusNetwork, 0, len(elems))
	for i, e := range elems {
		if e.Name == "" {
			return nil, fmt.Errorf("%s: network %d has no name", networkingv1alpha1.AnnotationMultusNetworks, i)
		}
		n := MultusNetwork{Namespace: e.Namespace, Name: e.Name, Interface: e.Interface}
		if n.Namespace == "" {
			n.Namespace = namespace
		}
		if n.Interface == "" {
			n.Interface = fmt.Sprintf("net%d", i+1)
		}
		out = append(out, n)
	}
	return out, nil
}

// splitNetworkRef splits "[<namespace>/]<name>", defaulting the namespace.
func splitNetworkRef(ref, namespace string) (string, string) {
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		return ns, name
	}
	return namespace, ref
}
