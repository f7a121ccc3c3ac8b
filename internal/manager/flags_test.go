package manager

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// oldFlagNames are the kind flags' names before they were named after the
// kinds' controllers: each must still work, for one release, and warn.
var oldFlagNames = []string{
	"aia-node-selector", "aia-translate-nodes", "aia-node-webhook", "aia-provider-config", "aia-address-type",
	"aia-anycast-zone", "aia-bandwidth", "aia-internet-charge-type", "aia-tags", "aia-poll-interval",
	"aia-task-poll-interval", "aia-credentials-backoff", "aia-credentials-max-backoff", "aia-describe-batch-window",
	"aia-max-concurrent-reconciles", "aia-orphan-mode", "aia-orphan-grace-period", "aia-orphan-interval",
	"burst-eks-config-namespace", "burst-floor-handoff", "burst-max-concurrent-reconciles", "burst-disable-translators",
	"burst-disable-pod-gate", "burst-gate-timeout", "burst-rewrite-tke-scheduler", "burst-legacy-switch-table",
	"floatip-extender-address", "floatip-api-address", "floatip-sweep-interval", "floatip-migrate-galaxy",
	"floatip-migrate-interval",
	"podelasticip-sweep-interval",
}

func controllerFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	BindControllerFlags(fs, Controllers())
	return fs
}

// TestKindFlagsNamedAfterTheirKind: every controller's flag is
// --<controller>-<option>, and the manager-wide flags carry no kind's name.
func TestKindFlagsNamedAfterTheirKind(t *testing.T) {
	all := Controllers()
	for _, c := range all {
		if c.BindFlags == nil {
			continue
		}
		fs := pflag.NewFlagSet(c.Name, pflag.ContinueOnError)
		BindControllerFlags(fs, []Controller{c})
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Deprecated == "" && !strings.HasPrefix(f.Name, c.Name+"-") {
				t.Errorf("controller %s has flag --%s, want --%s-...", c.Name, f.Name, c.Name)
			}
		})
	}
	opts := DefaultOptions()
	zapOpts := zap.Options{}
	FlagSet("manager", &opts, all, &zapOpts).VisitAll(func(f *pflag.Flag) {
		if f.Deprecated != "" {
			return
		}
		for _, c := range all {
			if strings.HasPrefix(f.Name, c.Name+"-") {
				return
			}
		}
		for old := range legacyFlagPrefixes {
			if strings.HasPrefix(f.Name, legacyFlagPrefixes[old]) {
				t.Errorf("manager flag --%s carries the old prefix of %s", f.Name, old)
			}
		}
	})
}

// TestOldFlagNamesStillWork: each old name sets what its new name sets, and
// prints a deprecation warning naming the new one; no other flag is deprecated.
func TestOldFlagNamesStillWork(t *testing.T) {
	var deprecated []string
	controllerFlags().VisitAll(func(f *pflag.Flag) {
		if f.Deprecated != "" {
			deprecated = append(deprecated, f.Name)
		}
	})
	slices.Sort(deprecated)
	want := slices.Sorted(slices.Values(oldFlagNames))
	if !slices.Equal(deprecated, want) {
		t.Errorf("deprecated flags %q, want the old names %q", deprecated, want)
	}
	for _, old := range oldFlagNames {
		t.Run(old, func(t *testing.T) {
			prefix, option, _ := strings.Cut(old, "-")
			var controller string
			for c, p := range legacyFlagPrefixes {
				if p == prefix+"-" {
					controller = c
				}
			}
			newName := controller + "-" + option
			if renamed, ok := renamedFlags[old]; ok {
				newName = renamed
			}
			value := nonDefaultValue(t, newName)

			fs := controllerFlags()
			var out bytes.Buffer
			fs.SetOutput(&out)
			if err := fs.Parse([]string{"--" + old + "=" + value}); err != nil {
				t.Fatalf("--%s=%s: %v", old, value, err)
			}
			if got := fs.Lookup(newName).Value.String(); got != normalized(t, newName, value) {
				t.Errorf("--%s=%s left --%s at %q, want %q", old, value, newName, got, normalized(t, newName, value))
			}
			if wantWarning := "Flag --" + old + " has been deprecated, use --" + newName + " instead"; !strings.Contains(out.String(), wantWarning) {
				t.Errorf("--%s printed %q, want a warning %q", old, out.String(), wantWarning)
			}
		})
	}
}

// nonDefaultValue returns a value the flag accepts that differs from its default.
func nonDefaultValue(t *testing.T, name string) string {
	t.Helper()
	for _, v := range []string{"7s", "7", "report", "LocalOverride", "LocalOptIn", "true", "false", "app=x"} {
		fs := controllerFlags()
		fs.SetOutput(&bytes.Buffer{})
		f := fs.Lookup(name)
		if f == nil {
			t.Fatalf("no flag --%s", name)
		}
		def := f.Value.String()
		if fs.Parse([]string{"--" + name + "=" + v}) == nil && f.Value.String() != def {
			return v
		}
	}
	t.Fatalf("found no value for --%s that differs from its default", name)
	return ""
}

// normalized is how the flag shows value once set under its new name.
func normalized(t *testing.T, name, value string) string {
	t.Helper()
	fs := controllerFlags()
	if err := fs.Parse([]string{"--" + name + "=" + value}); err != nil {
		t.Fatal(err)
	}
	return fs.Lookup(name).Value.String()
}
