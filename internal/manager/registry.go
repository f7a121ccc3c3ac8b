package manager

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
)

// Controllers lists every controller the manager can run, in start order.
// Each kind's package adds its reconciler, translator and sweep here. Options
// are pointers, so that flags parsed after this call reach Setup.
func Controllers() []Controller {
	burst := burstpolicy.DefaultOptions()
	ids := ingressdaemonset.DefaultOptions()
	floatIP := floatippool.DefaultOptions()
	aia := anycastipbinding.DefaultOptions()
	peip := podelasticip.DefaultOptions()
	neip := nodeelasticip.DefaultOptions()
	return []Controller{
		{Name: "providerconfig", Setup: providerconfig.Setup},
		{Name: "burstpolicy", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			return burst.Setup(ctx, mgr, cfg)
		}, BindFlags: burst.BindFlags, ServesWebhooks: true},
		{Name: "ingressdaemonset", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			return ids.Setup()(ctx, mgr, cfg)
		}, BindFlags: ids.BindFlags},
		{Name: "floatippool", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			if err := floatippool.SetupWebhook(mgr); err != nil {
				return err
			}
			return floatIP.Setup()(ctx, mgr, cfg)
		}, BindFlags: floatIP.BindFlags, ServesWebhooks: true},
		{Name: "anycastipbinding", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			return aia.Setup()(ctx, mgr, cfg)
		}, BindFlags: aia.BindFlags, ServesWebhooks: true},
		{Name: "podelasticip", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			return peip.Setup()(ctx, mgr, cfg)
		}, BindFlags: peip.BindFlags},
		{Name: "nodeelasticip", Setup: func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
			return neip.Setup()(ctx, mgr, cfg)
		}, BindFlags: neip.BindFlags, ServesWebhooks: true},
	}
}

// ControllerNames lists the names --controllers accepts.
func ControllerNames(all []Controller) []string {
	names := make([]string, 0, len(all))
	for _, c := range all {
		names = append(names, c.Name)
	}
	return names
}
