package orphan

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Mode says what a sweep does with the orphans it finds.
type Mode string

const (
	// ModeOff disables the sweep: nothing is listed.
	ModeOff Mode = "off"
	// ModeReport logs, counts and returns orphans but never deletes them.
	ModeReport Mode = "report"
	// ModeDelete deletes orphans that are provably ours (see Decision).
	ModeDelete Mode = "delete"
)

// ParseMode parses a --orphan-mode style flag value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeOff, ModeReport, ModeDelete:
		return m, nil
	default:
		return "", fmt.Errorf("unknown orphan sweep mode %q: want %q, %q or %q", s, ModeOff, ModeReport, ModeDelete)
	}
}

// String implements flag.Value (and pflag.Value).
func (m *Mode) String() string { return string(*m) }

// Set implements flag.Value (and pflag.Value).
func (m *Mode) Set(s string) error {
	parsed, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = parsed
	return nil
}

// Type implements pflag.Value.
func (m *Mode) Type() string { return "mode" }

// CloudObject is one object found in the cloud by a Sweeper's ListCloud.
type CloudObject struct {
	// ID is the cloud's identifier (an allocation ID, an address ID).
	ID string
	// CreatedAt is when the cloud object was created. Zero means the cloud
	// does not say (AWS Elastic IPs, for one); the sweep then measures the
	// grace period from when it first saw the object orphaned.
	CreatedAt time.Time
	// OwnerUID is the UID of the owning CR, from the object's ownership tag;
	// empty when the tag is missing.
	OwnerUID types.UID
	// HasClusterIdentity is true when the object carries this cluster's
	// identity tag. Objects without it (another cluster's, a legacy
	// controller's, a person's) are never deleted.
	HasClusterIdentity bool
	// ReportOnly, when not empty, forbids deleting this object and says why
	// (for example "still associated with instance i-0abc"). The kind's
	// lister sets it for objects that are unsafe to delete blindly.
	ReportOnly string
	// Description is free-form detail for logs and reports (address, region).
	Description string
}

// Action is what a sweep does with one cloud object.
type Action string

const (
	// ActionKeep leaves the object alone: it is owned, or too young to judge.
	ActionKeep Action = "Keep"
	// ActionReport reports the object as an orphan without deleting it.
	ActionReport Action = "Report"
	// ActionDelete deletes the orphaned object.
	ActionDelete Action = "Delete"
)

// Decision is the verdict on one cloud object, with a human-readable reason.
type Decision struct {
	Action Action
	Reason string
}

// decide is the sweep's pure decision for one cloud object. bornAt is when
// the object's age starts (its CreatedAt, or when the sweep first saw it
// orphaned); now is when the cloud was listed.
//
// Deleting requires all of: delete mode, no live CR with the object's owner
// UID, an age of at least grace, this cluster's identity tag, an owner UID
// tag, and no ReportOnly reason. Anything short of that is downgraded to a
// report, because a wrongly deleted cloud object (a public IP) cannot be
// brought back.
func decide(obj CloudObject, owners sets.Set[types.UID], bornAt, now time.Time, grace time.Duration, mode Mode) Decision {
	if mode == ModeOff {
		return Decision{ActionKeep, "orphan sweep is off"}
	}
	if obj.OwnerUID != "" && owners.Has(obj.OwnerUID) {
		return Decision{ActionKeep, "owned by a live object"}
	}
	if age := now.Sub(bornAt); age < grace {
		return Decision{ActionKeep, fmt.Sprintf("unowned for %s, within the %s grace period", age.Round(time.Second), grace)}
	}
	switch {
	case !obj.HasClusterIdentity:
		return Decision{ActionReport, "orphaned, but lacks this cluster's identity tag, so it is never deleted"}
	case obj.OwnerUID == "":
		return Decision{ActionReport, "orphaned, but lacks an owner UID tag, so it is never deleted"}
	case obj.ReportOnly != "":
		return Decision{ActionReport, "orphaned, but not deletable: " + obj.ReportOnly}
	case mode != ModeDelete:
		return Decision{ActionReport, fmt.Sprintf("orphaned: no object with UID %s exists (mode %s)", obj.OwnerUID, mode)}
	default:
		return Decision{ActionDelete, fmt.Sprintf("orphaned: no object with UID %s exists", obj.OwnerUID)}
	}
}
