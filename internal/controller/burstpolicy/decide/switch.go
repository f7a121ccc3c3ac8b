// Package decide holds BurstPolicy's pure decisions: the legacy switch table,
// whether a pod may burst at all (and the stable reason why not), and which
// pending pods of a workload burst now. Nothing here reads or writes objects.
package decide

import (
	"fmt"
	"strconv"
	"strings"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Switch is the outcome of the global/local switch table.
type Switch struct {
	// Burst says whether pending pods may burst at all.
	Burst bool
	// LocalReplicasEffective says whether the local floor (LOCAL_REPLICAS)
	// is honoured. The chart v1.0.0 table ignores it when neither switch is
	// set; edgeplane applies that quirk to translated policies only.
	LocalReplicasEffective bool
}

// DecideSwitch applies one of the legacy switch tables. global is the
// ClusterBurstPolicy's enabled (nil when unset or absent); local is the
// BurstPolicy's enabled or the pod's AUTO_SCALE_EKS (nil when unset).
//
// SwitchTableLocalOptIn, the TKE resilience documentation's table: bursting
// is off only when the global switch is false and the local one is not
// true; a local false does not opt out; the floor holds whenever pods burst.
//
// SwitchTableLocalOverride (and any other value), the chart v1.0.0 README's
// table: the local switch wins when set, otherwise the global one,
// otherwise on; with neither set the floor is not honoured. A BurstPolicy a
// person writes always follows it.
func DecideSwitch(table schedulingv1alpha1.LegacySwitchTable, global, local *bool) Switch {
	if table == schedulingv1alpha1.SwitchTableLocalOptIn {
		burst := (local != nil && *local) || global == nil || *global
		return Switch{Burst: burst, LocalReplicasEffective: burst}
	}
	switch {
	case local != nil:
		return Switch{Burst: *local, LocalReplicasEffective: *local}
	case global != nil:
		return Switch{Burst: *global, LocalReplicasEffective: *global}
	default:
		return Switch{Burst: true, LocalReplicasEffective: false}
	}
}

// ParseSwitch parses a legacy AUTO_SCALE_EKS value ("true"/"false", any
// case, surrounding blanks and one level of quotes allowed, as the chart
// renders "\"true\""). An empty value means unset (nil, nil).
func ParseSwitch(v string) (*bool, error) {
	s := strings.TrimSpace(v)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	if s == "" {
		return nil, nil
	}
	switch strings.ToLower(s) {
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	}
	return nil, fmt.Errorf("AUTO_SCALE_EKS %q is neither true nor false", v)
}

// maxLocalReplicas bounds LOCAL_REPLICAS to what a replica count can hold.
const maxLocalReplicas = 1 << 30

// ParseLocalReplicas parses a legacy LOCAL_REPLICAS value: a non-negative
// decimal integer, surrounding blanks and one level of quotes allowed.
func ParseLocalReplicas(v string) (int32, error) {
	s := strings.TrimSpace(v)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 || n > maxLocalReplicas {
		return 0, fmt.Errorf("LOCAL_REPLICAS %q is not a replica count", v)
	}
	return int32(n), nil
}
