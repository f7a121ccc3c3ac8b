// Command edgeplane-manager runs edgeplane's controllers, translators and
// admission webhooks.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/manager"
)

// version is set at link time (hack/build-image-binaries.sh).
var version = "dev"

func main() {
	all := manager.Controllers()
	opts := manager.DefaultOptions()
	zapOpts := zap.Options{}
	fs := manager.FlagSet(os.Args[0], &opts, all, &zapOpts)
	fs.AddGoFlagSet(flag.CommandLine) // --kubeconfig
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("edgeplane-manager")

	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig() // --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config
	if err != nil {
		fail(log.Error, fmt.Errorf("loading the kubeconfig: %w", err))
	}
	mgr, err := manager.New(ctx, cfg, opts, all)
	if err != nil {
		fail(log.Error, err)
	}
	log.Info("Starting manager", "version", version)
	if err := mgr.Start(ctx); err != nil {
		fail(log.Error, fmt.Errorf("running the manager: %w", err))
	}
}

func fail(logError func(error, string, ...any), err error) {
	logError(err, "Manager failed")
	os.Exit(1)
}
