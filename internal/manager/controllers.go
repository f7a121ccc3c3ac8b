package manager

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/edgeplane/edgeplane/internal/controller/setup"
)

// Controller is one switchable part of the manager: a reconciler, a translator
// or a sweep, registered by its package.
type Controller struct {
	// Name is what --controllers calls it.
	Name string
	// DisabledByDefault leaves it off unless --controllers names it.
	DisabledByDefault bool
	// Setup registers it with the manager.
	Setup setup.Func
	// ServesWebhooks says Setup registers admission webhooks, so the manager
	// must serve them with a certificate.
	ServesWebhooks bool
	// BindFlags, when set, registers the controller's own flags.
	BindFlags func(*flag.FlagSet)
}

// EnabledControllers resolves a --controllers list the way kube-controller-manager
// does: "*" turns on every controller that is on by default, "name" turns one on,
// "-name" turns one off, and a later entry never overrides an explicit "-name".
// Unknown names are an error, so a typo does not silently disable a controller.
func EnabledControllers(all []Controller, flag []string) ([]Controller, error) {
	known := make(map[string]bool, len(all))
	for _, c := range all {
		known[c.Name] = true
	}
	star := false
	on, off := map[string]bool{}, map[string]bool{}
	for _, raw := range flag {
		item := strings.TrimSpace(raw)
		switch {
		case item == "":
			continue
		case item == "*":
			star = true
		case strings.HasPrefix(item, "-"):
			name := strings.TrimPrefix(item, "-")
			if !known[name] {
				return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", name, knownNames(all))
			}
			off[name] = true
		default:
			if !known[item] {
				return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", item, knownNames(all))
			}
			on[item] = true
		}
	}
	var enabled []Controller
	for _, c := range all {
		switch {
		case off[c.Name]:
		case on[c.Name], star && !c.DisabledByDefault:
			enabled = append(enabled, c)
		}
	}
	return enabled, nil
}

func knownNames(all []Controller) string {
	names := ControllerNames(all)
	slices.Sort(names)
	return strings.Join(names, ", ")
}
