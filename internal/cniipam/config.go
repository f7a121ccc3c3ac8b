// Package cniipam is edgeplane's CNI IPAM plugin: it hands a pod's interface
// the float IPs the scheduler extender already allocated (the FloatIPs bound
// to the pod's UID, or the IPs of a migrated pod's galaxy
// k8s.v1.cni.galaxy.io/args annotation whose FloatIPs name it). It never
// allocates and never releases: DEL is a no-op that can be repeated, and the
// floatip controller releases IPs when pods go. It trusts neither the
// network config nor the pod: it reads only its installer's kubeconfig
// (KubeconfigPath), and an IP only counts when its FloatIP names the pod.
package cniipam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/utils"
	"github.com/containernetworking/cni/pkg/version"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults and bounds of the network config's ipam section.
const (
	DefaultWaitTimeout      = 20 * time.Second
	MaxWaitTimeout          = 2 * time.Minute
	DefaultPrimaryInterface = "eth0"
	maxPools                = 64
	maxRoutes               = 64
)

// SupportedVersions are the CNI spec versions the plugin speaks: 0.4.0 (the
// first with CHECK) through the newest the library implements.
var SupportedVersions = version.VersionsStartingFrom("0.4.0")

// Config is a parsed network config.
type Config struct {
	CNIVersion string
	Name       string
	// WaitTimeout bounds how long ADD waits for an allocation not yet written.
	WaitTimeout time.Duration
	// PrimaryInterface receives the IPs recorded without an interface (every
	// galaxy pod's, and request_ip_range's).
	PrimaryInterface string
	// Pools, when set, are the only pools this network hands IPs from.
	Pools []string
	// Routes replace the default (a default route via the pool's gateway on
	// the primary interface, none on others) when RoutesSet.
	Routes    []*types.Route
	RoutesSet bool
	DNS       types.DNS
	// PrevResult is the chain's result so far (CHECK), if any.
	PrevResult types.Result
}

// ipamSection is the "ipam" object of the network config.
type ipamSection struct {
	Type             string          `json:"type"`
	Kubeconfig       string          `json:"kubeconfig,omitempty"`
	WaitTimeout      string          `json:"waitTimeout,omitempty"`
	PrimaryInterface string          `json:"primaryInterface,omitempty"`
	Pools            []string        `json:"pools,omitempty"`
	Routes           *[]*types.Route `json:"routes,omitempty"`
	DNS              types.DNS       `json:"dns,omitzero"`
}

// ParseConfig reads and validates a network config; the error says which
// field is wrong and why. Unknown fields of the ipam section are refused, so
// a typo is not silently ignored. kubeconfig is the plugin's own kubeconfig
// (KubeconfigPath): ipam.kubeconfig, which configs written before the path
// was fixed carry, may only repeat it, so a config naming another file is
// refused before any kubeconfig is read.
func ParseConfig(stdin []byte, kubeconfig string) (Config, error) {
	var conf struct {
		CNIVersion    string          `json:"cniVersion"`
		Name          string          `json:"name"`
		IPAM          json.RawMessage `json:"ipam"`
		RawPrevResult map[string]any  `json:"prevResult,omitempty"`
	}
	if err := json.Unmarshal(stdin, &conf); err != nil {
		return Config{}, fmt.Errorf("network config is not valid JSON: %w", err)
	}
	if conf.Name == "" {
		return Config{}, errors.New("network config has no name")
	}
	if !slices.Contains(SupportedVersions.SupportedVersions(), conf.CNIVersion) {
		return Config{}, fmt.Errorf("cniVersion %q is not one of %s", conf.CNIVersion, strings.Join(SupportedVersions.SupportedVersions(), ", "))
	}
	if len(bytes.TrimSpace(conf.IPAM)) == 0 || string(bytes.TrimSpace(conf.IPAM)) == "null" {
		return Config{}, errors.New("network config has no ipam section")
	}
	var sec ipamSection
	dec := json.NewDecoder(bytes.NewReader(conf.IPAM))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sec); err != nil {
		return Config{}, fmt.Errorf("ipam section: %w", err)
	}
	if sec.Kubeconfig != "" && sec.Kubeconfig != kubeconfig {
		return Config{}, fmt.Errorf("ipam.kubeconfig %q is refused: the plugin reads only its installer's kubeconfig, %s; remove the field", sec.Kubeconfig, kubeconfig)
	}
	c := Config{CNIVersion: conf.CNIVersion, Name: conf.Name, Pools: sec.Pools, DNS: sec.DNS,
		WaitTimeout: DefaultWaitTimeout, PrimaryInterface: DefaultPrimaryInterface}
	if sec.WaitTimeout != "" {
		d, err := time.ParseDuration(sec.WaitTimeout)
		if err != nil || d < 0 || d > MaxWaitTimeout {
			return Config{}, fmt.Errorf("ipam.waitTimeout %q: want a duration from 0s to %s", sec.WaitTimeout, MaxWaitTimeout)
		}
		c.WaitTimeout = d
	}
	if sec.PrimaryInterface != "" {
		if err := utils.ValidateInterfaceName(sec.PrimaryInterface); err != nil {
			return Config{}, fmt.Errorf("ipam.primaryInterface %q: %s", sec.PrimaryInterface, err.Msg)
		}
		c.PrimaryInterface = sec.PrimaryInterface
	}
	if len(c.Pools) > maxPools {
		return Config{}, fmt.Errorf("ipam.pools lists %d pools, at most %d are allowed", len(c.Pools), maxPools)
	}
	for _, p := range c.Pools {
		if msgs := validation.IsDNS1123Subdomain(p); len(msgs) > 0 || len(p) > 63 {
			return Config{}, fmt.Errorf("ipam.pools: %q is not a FloatIPPool name", p)
		}
	}
	if sec.Routes != nil {
		c.Routes, c.RoutesSet = *sec.Routes, true
		if len(c.Routes) > maxRoutes {
			return Config{}, fmt.Errorf("ipam.routes lists %d routes, at most %d are allowed", len(c.Routes), maxRoutes)
		}
		for i, r := range c.Routes {
			if r == nil || r.Dst.IP == nil {
				return Config{}, fmt.Errorf("ipam.routes[%d] has no dst", i)
			}
		}
	}
	if conf.RawPrevResult != nil {
		prev := types.NetConf{CNIVersion: conf.CNIVersion, RawPrevResult: conf.RawPrevResult}
		if err := version.ParsePrevResult(&prev); err != nil {
			return Config{}, fmt.Errorf("prevResult: %w", err)
		}
		c.PrevResult = prev.PrevResult
	}
	return c, nil
}
