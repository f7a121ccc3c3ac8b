//go:build !linux

package localcluster

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"

	"github.com/go-logr/logr"
)

// Real nodes need Linux namespaces, cgroups and netlink.
var errRealNodesNeedLinux = errors.New("real nodes need Linux")

// realNodes has no state where real nodes cannot run.
type realNodes struct{ plan realNetworkPlan }

// RealNodeLabel marks the real nodes (value "true").
const RealNodeLabel = "localcluster.edgeplane.io/real-node"

func (c *Cluster) prepareRealNodes(context.Context) error      { return errRealNodesNeedLinux }
func (c *Cluster) prepareRealPKI() error                       { return errRealNodesNeedLinux }
func (c *Cluster) realAPIServerFlags() []string                { return nil }
func (c *Cluster) startControlPlaneHost(context.Context) error { return errRealNodesNeedLinux }
func (c *Cluster) startRealNodes(context.Context) error        { return errRealNodesNeedLinux }
func (c *Cluster) waitRealNodes(context.Context) error         { return errRealNodesNeedLinux }
func (c *Cluster) stopRealNodes() error                        { return nil }

// RemoveStaleRealNodes has nothing to remove where real nodes cannot run.
func RemoveStaleRealNodes(logr.Logger) error { return nil }

// RealNodes names the cluster's real nodes: none here.
func (c *Cluster) RealNodes() []string { return nil }

// ServiceProxyURL is nil: there are no real nodes.
func (c *Cluster) ServiceProxyURL() *url.URL { return nil }

// DialClusterNetwork fails: there are no real nodes.
func (c *Cluster) DialClusterNetwork(context.Context, string, string) (net.Conn, error) {
	return nil, errRealNodesNeedLinux
}

// LoadImage fails: there are no real nodes.
func (c *Cluster) LoadImage(context.Context, NodeImage) error { return errRealNodesNeedLinux }

// GatewayAddr fails: there are no real nodes.
func (c *Cluster) GatewayAddr() (netip.Addr, error) { return netip.Addr{}, errRealNodesNeedLinux }

// ListenClusterNetwork fails: there are no real nodes.
func (c *Cluster) ListenClusterNetwork(int) (net.Listener, error) { return nil, errRealNodesNeedLinux }

// RealNodePath fails: there are no real nodes.
func (c *Cluster) RealNodePath(string, string) (string, error) { return "", errRealNodesNeedLinux }

// ExposeLoopbackPort fails: there are no real nodes.
func (c *Cluster) ExposeLoopbackPort(int) error { return errRealNodesNeedLinux }
