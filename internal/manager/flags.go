package manager

import (
	"flag"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// legacyFlagPrefixes are the prefixes a kind's flags had before every kind's
// flags were named after its controller (--anycastipbinding-*,
// --burstpolicy-*, --floatippool-*, ...). Each old name stays, for one
// release, a deprecated alias of the new one that sets the same option and
// prints a warning. Remove an entry when its release has passed.
var legacyFlagPrefixes = map[string]string{
	"anycastipbinding": "aia-",
	"burstpolicy":      "burst-",
	"floatippool":      "floatip-",
}

// flagsSinceRename are kind flags added after the legacy prefixes were
// retired: they never had an old name, so they get no deprecated alias.
var flagsSinceRename = map[string]bool{
	"burstpolicy-pod-pass-interval": true,
	// The orphan sweep's cap on deletions per pass.
	"anycastipbinding-orphan-max-deletions": true,
	// The float-IP servers' TLS.
	"floatippool-cert-dir": true, "floatippool-certs": true, "floatippool-service-name": true,
	"floatippool-cert-secret-name": true, "floatippool-scheduler-client-secret-name": true,
}

// renamedFlags are single flags renamed to read like the other kinds'
// (old name: new name). Each old name stays, for one release, a deprecated
// alias of the new one. Remove an entry when its release has passed.
var renamedFlags = map[string]string{
	"podelasticip-sweep-interval": "podelasticip-orphan-interval",
}

// kindFlagNames returns the name a controller's flag goes by on the command
// line (the controller's name, a dash, the option) and its deprecated alias
// ("" if none). A flag its package still spells with the legacy prefix gets
// the new name too, so every kind's flags read alike whichever way its
// package spells them.
func kindFlagNames(controller, name string) (canonical, alias string) {
	legacy, hasLegacy := legacyFlagPrefixes[controller]
	option, ok := strings.CutPrefix(name, controller+"-")
	if !ok && hasLegacy {
		option, ok = strings.CutPrefix(name, legacy)
	}
	if !ok {
		// Not named after its kind; TestKindFlagsNamedAfterTheirKind fails.
		return name, ""
	}
	canonical = controller + "-" + option
	if hasLegacy {
		alias = legacy + option
	}
	return canonical, alias
}

// BindControllerFlags registers every controller's own flags on fs, named
// after the controller, with the deprecated aliases of legacyFlagPrefixes.
func BindControllerFlags(fs *pflag.FlagSet, all []Controller) {
	for _, c := range all {
		if c.BindFlags == nil {
			continue
		}
		own := flag.NewFlagSet(c.Name, flag.ContinueOnError)
		c.BindFlags(own)
		own.VisitAll(func(f *flag.Flag) {
			canonical, alias := kindFlagNames(c.Name, f.Name)
			pf := pflag.PFlagFromGoFlag(f)
			pf.Name = canonical
			fs.AddFlag(pf)
			if alias != "" && !flagsSinceRename[canonical] {
				addAlias(fs, pf, alias)
			}
		})
	}
	for old, name := range renamedFlags {
		if pf := fs.Lookup(name); pf != nil {
			addAlias(fs, pf, old)
		}
	}
}

// addAlias registers alias as a deprecated second name of pf: it sets the
// same option and prints a warning.
func addAlias(fs *pflag.FlagSet, pf *pflag.Flag, alias string) {
	fs.AddFlag(&pflag.Flag{Name: alias, Usage: pf.Usage, Value: pf.Value, DefValue: pf.DefValue, NoOptDefVal: pf.NoOptDefVal})
	// Only fails for a name that is not registered.
	_ = fs.MarkDeprecated(alias, "use --"+pf.Name+" instead")
}

// FlagSet is the manager's command line: the manager-wide options (unprefixed),
// every controller's flags and the logger's, on one set.
func FlagSet(name string, o *Options, all []Controller, zapOpts *zap.Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	own := flag.NewFlagSet(name, flag.ContinueOnError)
	o.BindFlags(own, ControllerNames(all))
	zapOpts.BindFlags(own) // --zap-log-level, --zap-encoder, --zap-devel, ...
	fs.AddGoFlagSet(own)
	BindControllerFlags(fs, all)
	return fs
}
