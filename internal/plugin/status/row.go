package status

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Row is one object in the table.
type Row struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Ready is the Ready condition's status: True, False or Unknown.
	Ready   string `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Created is the object's creation time (the AGE column of -o wide).
	Created time.Time `json:"created"`

	// order is the kind's position in the table.
	order int
}

// IsReady reports whether the row counts as Ready.
func (r Row) IsReady() bool { return r.Ready == string(metav1.ConditionTrue) }

// Reasons the plugin shows when the object itself gives none.
const (
	// ReasonNoStatus: the object has no Ready condition yet (no controller
	// has reconciled it).
	ReasonNoStatus = "NoStatus"
	// ReasonProgressing: the controller has not yet observed the latest
	// spec, so the Ready condition is about an older generation.
	ReasonProgressing = "Progressing"
)

// RowFor computes an object's row: pure, from the object alone. An
// object whose status is about an older generation is not Ready (as kstatus
// sees it), whatever its Ready condition says.
func RowFor(k Kind, u *unstructured.Unstructured) Row {
	r := Row{Kind: k.Kind, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
	if r.Kind == "" {
		r.Kind = u.GetKind()
	}
	if k.Detail != nil {
		r.Detail = k.Detail(u)
	}
	cond, found := readyCondition(u)
	if !found {
		r.Ready, r.Reason, r.Message = string(metav1.ConditionUnknown), ReasonNoStatus, "no Ready condition: not reconciled yet"
		return r
	}
	r.Ready, r.Reason, r.Message = cond.status, cond.reason, cond.message
	if r.Ready == "" {
		r.Ready = string(metav1.ConditionUnknown)
	}
	// Managed resources (crossplane style) say why they are not Ready in
	// their Synced condition: a failed reconcile's error is there.
	if synced, ok := findCondition(u, "Synced"); ok && !r.IsReady() && r.Message == "" && synced.status == string(metav1.ConditionFalse) {
		r.Reason, r.Message = synced.reason, synced.message
	}
	gen := u.GetGeneration()
	observed := num(u, "status", "observedGeneration")
	if cond.observedGeneration > observed {
		observed = cond.observedGeneration
	}
	if gen > 0 && observed > 0 && observed < gen {
		r.Ready, r.Reason = string(metav1.ConditionUnknown), ReasonProgressing
		r.Message = fmt.Sprintf("generation %d not yet reconciled (status is for generation %d)", gen, observed)
	}
	return r
}

type condition struct {
	status, reason, message string
	observedGeneration      int64
}

func readyCondition(u *unstructured.Unstructured) (condition, bool) { return findCondition(u, "Ready") }

func findCondition(u *unstructured.Unstructured, typ string) (condition, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		var og int64
		switch v := m["observedGeneration"].(type) {
		case int64:
			og = v
		case float64:
			og = int64(v)
		}
		return condition{status: s("status"), reason: s("reason"), message: s("message"), observedGeneration: og}, true
	}
	return condition{}, false
}

// SortRows orders rows by the kinds' table order, then namespace and name.
func SortRows(rows []Row) {
	slices.SortStableFunc(rows, compareRows)
}

func compareRows(a, b Row) int {
	return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// Summary is the closing line: "12 objects, 2 not Ready".
func Summary(rows []Row) string {
	notReady := 0
	for _, r := range rows {
		if !r.IsReady() {
			notReady++
		}
	}
	objects := "objects"
	if len(rows) == 1 {
		objects = "object"
	}
	return fmt.Sprintf("%d %s, %d not Ready", len(rows), objects, notReady)
}

// shorten cuts s to n runes with an ellipsis, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
