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
// CNI bin directory and keeps the plugin's kubeconfig current.
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

// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatips;floatippools,verbs=get;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create

func main() {
	if len(os.Args) > 1 && os.Args[1] == "install" {
		if err := runInstall(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "edgeplane-cni-ipam install:", err)
			os.Exit(1)
		}
		return
	}
	p := &cniipam.Plugin{}
	skel.PluginMainFuncs(p.Funcs(), cniipam.SupportedVersions, "edgeplane-cni-ipam "+version+": float IPs from edgeplane's FloatIPPools")
}

func runInstall(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	o := install.Options{Binary: self}
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
