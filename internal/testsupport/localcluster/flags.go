package localcluster

import "strings"

// mergeFlags returns defaults followed by extra, dropping every default whose
// flag name also appears in extra. Overriding by name (rather than relying on
// "last one wins") matters for list-valued flags such as --controllers, which
// append on repetition.
func mergeFlags(defaults, extra []string) []string {
	overridden := make(map[string]bool, len(extra))
	for _, f := range extra {
		overridden[flagName(f)] = true
	}
	out := make([]string, 0, len(defaults)+len(extra))
	for _, f := range defaults {
		if !overridden[flagName(f)] {
			out = append(out, f)
		}
	}
	return append(out, extra...)
}

// flagName returns "name" for "--name=value", "-name=value", "--name" or "-c".
func flagName(flag string) string {
	name := strings.TrimLeft(flag, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	return name
}
