package manager

import (
	"github.com/edgeplane/edgeplane/internal/controller/providerconfig"
)

// Controllers lists every controller the manager can run, in start order.
// Each kind's package adds its reconciler, translator and sweep here.
func Controllers() []Controller {
	return []Controller{
		{Name: "providerconfig", Setup: providerconfig.Setup},
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
