// Command edgeplane-cni-ipam is edgeplane's CNI IPAM plugin: any main CNI
// plugin (bridge, macvlan, ipvlan, a Multus NetworkAttachmentDefinition, ...)
// names it as its "ipam" and gets the float IPs the FloatIPPool scheduler
// extender allocated to the pod. It speaks CNI spec 0.4.0 through 1.1.0
// (ADD, CHECK, DEL, STATUS, GC, VERSION); docs/floatippool.md describes the
// network config.
//
//	edgeplane-cni-ipam install [flags]
//
// is what the chart's DaemonSet runs: it copies this binary into the node's
// CNI bin directory and keeps the plugin's kubeconfig current at
// /etc/cni/net.d/edgeplane-cni-ipam.kubeconfig, the only kubeconfig the
// plugin reads.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/cniipam/install"
)

// version is set at build time (hack/build-image-binaries.sh).
var version = "dev"

// kubeconfigPath is the node path of the plugin's kubeconfig, which the
// installer writes and the plugin alone reads: cniipam.KubeconfigPath in
// every shipped build. Only tests and `make cni-demo`, which must not
// write the machine's /etc, link another with
// -ldflags "-X main.kubeconfigPath=...". No network config can change it.
var kubeconfigPath = cniipam.KubeconfigPath

// The plugin's ServiceAccount may do exactly what one ADD, CHECK or STATUS
// does (docs/operations.md, "What the CNI IPAM plugin may do"); test/rbac
// runs the plugin under this role and proves each grant is needed.
//
// Read the pod CNI_ARGS name, to check its UID and read its annotations.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// List the FloatIPs bound to the pod's UID (a field selector), and get the
// FloatIP of each IP of a migrated pod's galaxy annotation.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatips,verbs=get;list
// Get the pool of each of those FloatIPs by name (subnet, gateway, ranges).
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatippools,verbs=get
// Record on the pod what ADD and CHECK did.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create

func main() {
	if len(os.Args) > 1 && os.Args[1] == "install" {
		if err := runInstall(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "edgeplane-cni-ipam install:", err)
			os.Exit(1)
		}
		return
	}
	p := &cniipam.Plugin{Kubeconfig: kubeconfigPath}
	skel.PluginMainFuncs(p.Funcs(), cniipam.SupportedVersions, "edgeplane-cni-ipam "+version+": float IPs from edgeplane's FloatIPPools")
}

func runInstall(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	o := install.Options{Binary: self, Kubeconfig: kubeconfigPath}
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := o.Complete(os.Getenv); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return install.Run(ctx, o, os.Stdout)
}
