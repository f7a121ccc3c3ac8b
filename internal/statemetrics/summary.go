// Package statemetrics turns the status of edgeplane's objects into
// Prometheus series at scrape time: how many objects of a kind are not Ready,
// by reason, and since when; how an IngressDaemonSet's rollout is going; and
// whether a BurstPolicy's local floor is short. The alerts in the chart
// (charts/edgeplane/files/prometheus-rules.yaml) and the dashboard read them.
//
// The state is read from the manager's informer cache when Prometheus
// scrapes, so nothing in a reconciler has to remember to update a gauge, a
// deleted object leaves no stale series, and every replica (leader or not)
// reports the same values: alerts aggregate with max by the labels below.
package statemetrics

import (
	"cmp"
	"slices"
	"time"
)

// State is what the metrics need of one object: its kind and name, and its
// Ready condition.
type State struct {
	Kind, Namespace, Name string
	// Ready is the status of the Ready condition: "True", "False",
	// "Unknown", or "" when the object has none yet.
	Ready string
	// Reason is the Ready condition's reason (ReasonNoStatus without one).
	Reason string
	// Since is when Ready last changed, or the object's creation time when
	// it has no Ready condition: the start of the current not-Ready spell.
	Since time.Time
	// Stale is true when the Ready condition is about an older generation
	// than the spec: it is then counted as not Ready (reason
	// ReasonProgressing), as kstatus does.
	Stale bool
}

// Reasons the collector gives to objects whose Ready condition does not say.
// They are the ones `kubectl edgeplane status` shows for the same states.
const (
	ReasonNoStatus    = "NoStatus"
	ReasonProgressing = "Progressing"
)

// NotReady is one (kind, reason) group of objects that are not Ready.
type NotReady struct {
	Kind, Reason string
	// Count is how many objects of the kind are not Ready for the reason.
	Count int
	// Since is the earliest start of their not-Ready spells.
	Since time.Time
}

// Summarize counts the objects per kind (every kind in kinds appears, with
// 0 when it has none) and groups those not Ready by kind and reason. It is
// pure; the result is sorted by kind, then reason.
func Summarize(kinds []string, states []State) (total map[string]int, notReady []NotReady) {
	total = make(map[string]int, len(kinds))
	for _, k := range kinds {
		total[k] = 0
	}
	type key struct{ kind, reason string }
	groups := map[key]*NotReady{}
	for _, s := range states {
		total[s.Kind]++
		if s.Ready == "True" && !s.Stale {
			continue
		}
		reason := s.Reason
		switch {
		case s.Ready == "":
			reason = ReasonNoStatus
		case s.Ready == "True" && s.Stale:
			reason = ReasonProgressing
		case reason == "":
			reason = ReasonNoStatus
		}
		k := key{s.Kind, reason}
		g, ok := groups[k]
		if !ok {
			g = &NotReady{Kind: s.Kind, Reason: reason, Since: s.Since}
			groups[k] = g
		}
		g.Count++
		if s.Since.Before(g.Since) {
			g.Since = s.Since
		}
	}
	for _, g := range groups {
		notReady = append(notReady, *g)
	}
	slices.SortFunc(notReady, func(a, b NotReady) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Reason, b.Reason))
	})
	return total, notReady
}
