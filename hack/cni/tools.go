//go:build tools

// Package tools pins the reference CNI plugins and cnitool this wrapper
// module builds for the CNI integration test, `make cni-demo` and the local
// cluster's real nodes (bridge, host-local, portmap, loopback).
package tools

import (
	_ "github.com/containernetworking/cni/cnitool"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/main/macvlan"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
