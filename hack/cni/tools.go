//go:build tools

// Package tools pins the reference CNI plugins and cnitool this wrapper
// module builds for the CNI integration test and `make cni-demo`.
package tools

import (
	_ "github.com/containernetworking/cni/cnitool"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/main/macvlan"
)
