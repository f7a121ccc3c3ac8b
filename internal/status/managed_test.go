package status

import (
	"errors"
	"fmt"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managedThing stands in for a cloud-backed kind: its status embeds
// crossplane's ManagedResourceStatus, and the type forwards to it as the
// generated methods of a managed resource do.
type managedThing struct {
	metav1.ObjectMeta
	Status xpv2.ManagedResourceStatus
}

func (m *managedThing) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return m.Status.GetCondition(ct)
}
func (m *managedThing) SetConditions(c ...xpv2.Condition) { m.Status.SetConditions(c...) }
func (m *managedThing) GetObservedGeneration() int64      { return m.Status.GetObservedGeneration() }
func (m *managedThing) SetObservedGeneration(g int64)     { m.Status.SetObservedGeneration(g) }

var _ Managed = &managedThing{}

func TestObserveManagedGeneration(t *testing.T) {
	mg := &managedThing{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
	if !ObserveManagedGeneration(mg) {
		t.Error("ObserveManagedGeneration() = false on a new generation, want true")
	}
	if mg.Status.ObservedGeneration != 7 {
		t.Errorf("status.observedGeneration = %d, want 7", mg.Status.ObservedGeneration)
	}
	if ObserveManagedGeneration(mg) {
		t.Error("ObserveManagedGeneration() = true when already observed, want false")
	}
}

var (
	errQuota    = errors.New("AddressLimitExceeded")
	errThrottle = errors.New("RequestLimitExceeded")
)

func TestReasonFor(t *testing.T) {
	classifiers := []Classifier{
		{Reason: "QuotaExceeded", Matches: func(err error) bool { return errors.Is(err, errQuota) }},
		{Reason: "Throttled", Matches: func(err error) bool { return errors.Is(err, errThrottle) }},
		{Reason: "Ignored"}, // no Matches: never matches
	}
	cases := map[string]struct {
		err  error
		want string
	}{
		"NoError":        {err: nil, want: "ReconcileError"},
		"Quota":          {err: fmt.Errorf("allocating address: %w", errQuota), want: "QuotaExceeded"},
		"Throttled":      {err: errThrottle, want: "Throttled"},
		"Unclassified":   {err: errors.New("boom"), want: "ReconcileError"},
		"FirstMatchWins": {err: errors.Join(errThrottle, errQuota), want: "QuotaExceeded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ReasonFor(tc.err, "ReconcileError", classifiers...); got != tc.want {
				t.Errorf("ReasonFor(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
