package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// thing stands in for an in-cluster edgeplane kind.
type thingSpec struct {
	Size int `json:"size,omitempty"`
}

type thingStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	Allocated          int                `json:"allocated,omitempty"`
}

type thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              thingSpec   `json:"spec,omitempty"`
	Status            thingStatus `json:"status,omitempty"`
}

func (t *thing) DeepCopyObject() runtime.Object { return t.DeepCopy() }

func (t *thing) DeepCopy() *thing {
	out := *t
	t.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = nil
	for _, c := range t.Status.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, *c.DeepCopy())
	}
	return &out
}

func (t *thing) GetConditions() []metav1.Condition  { return t.Status.Conditions }
func (t *thing) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }
func (t *thing) GetObservedGeneration() int64       { return t.Status.ObservedGeneration }
func (t *thing) SetObservedGeneration(g int64)      { t.Status.ObservedGeneration = g }

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC))
)

func thingWith(generation int64, conds ...metav1.Condition) *thing {
	return &thing{
		ObjectMeta: metav1.ObjectMeta{Name: "pool", Generation: generation},
		Status:     thingStatus{Conditions: conds},
	}
}

func TestSet(t *testing.T) {
	cases := map[string]struct {
		obj         *thing
		cond        metav1.Condition
		wantChanged bool
		want        []metav1.Condition
	}{
		"AddsWithObservedGeneration": {
			obj:         thingWith(3),
			cond:        metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t1},
			wantChanged: true,
			want:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t1, ObservedGeneration: 3}},
		},
		"KeepsTransitionTimeWhenStatusStays": {
			obj:         thingWith(3, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: t0, ObservedGeneration: 2}),
			cond:        metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: "no free IPs", LastTransitionTime: t1},
			wantChanged: true,
			want:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: "no free IPs", LastTransitionTime: t0, ObservedGeneration: 3}},
		},
		"MovesTransitionTimeWhenStatusChanges": {
			obj:         thingWith(3, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: t0, ObservedGeneration: 3}),
			cond:        metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t1},
			wantChanged: true,
			want:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t1, ObservedGeneration: 3}},
		},
		"OnlyGenerationMoved": {
			obj:         thingWith(4, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t0, ObservedGeneration: 3}),
			cond:        metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated"},
			wantChanged: true,
			want:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t0, ObservedGeneration: 4}},
		},
		"NothingChanged": {
			obj:  thingWith(3, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t0, ObservedGeneration: 3}),
			cond: metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t1},
			want: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t0, ObservedGeneration: 3}},
		},
		"LeavesOtherTypesAlone": {
			obj:         thingWith(1, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: t0, ObservedGeneration: 1}),
			cond:        metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: t1},
			wantChanged: true,
			want: []metav1.Condition{
				{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: t0, ObservedGeneration: 1},
				{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: t1, ObservedGeneration: 1},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.obj.DeepCopy()
			shared := tc.obj.Status.Conditions

			if got := Set(tc.obj, tc.cond); got != tc.wantChanged {
				t.Errorf("Set() = %v, want %v", got, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, tc.obj.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			// A slice taken before the call (a shallow copy) must not change.
			if diff := cmp.Diff(before.Status.Conditions, shared); diff != "" {
				t.Errorf("Set() modified the previous conditions slice (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSetFillsTransitionTime(t *testing.T) {
	obj := thingWith(1)
	start := time.Now().Add(-time.Second)
	SetReady(obj, metav1.ConditionFalse, "Pending", "waiting for the first allocation")

	got := Get(obj, TypeReady)
	if got == nil {
		t.Fatal("Get(Ready) = nil after SetReady")
	}
	if got.LastTransitionTime.Time.Before(start) {
		t.Errorf("LastTransitionTime = %v, want it set to now", got.LastTransitionTime)
	}
	want := metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: "Pending",
		Message: "waiting for the first allocation", ObservedGeneration: 1, LastTransitionTime: got.LastTransitionTime}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("Ready (-want +got):\n%s", diff)
	}
}

func TestMarkUnknownIfMissing(t *testing.T) {
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: t0, ObservedGeneration: 1}
	cases := map[string]struct {
		obj         *thing
		wantChanged bool
		wantTypes   map[string]metav1.ConditionStatus
	}{
		"FirstVisitAddsAll": {
			obj:         thingWith(1),
			wantChanged: true,
			wantTypes:   map[string]metav1.ConditionStatus{"Ready": metav1.ConditionUnknown, "Synced": metav1.ConditionUnknown},
		},
		"KeepsExisting": {
			obj:         thingWith(2, ready),
			wantChanged: true,
			wantTypes:   map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue, "Synced": metav1.ConditionUnknown},
		},
		"NothingMissing": {
			obj:       thingWith(1, ready, metav1.Condition{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Error", LastTransitionTime: t0, ObservedGeneration: 1}),
			wantTypes: map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue, "Synced": metav1.ConditionFalse},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MarkUnknownIfMissing(tc.obj, "Reconciling", "not reconciled yet", "Ready", "Synced"); got != tc.wantChanged {
				t.Errorf("MarkUnknownIfMissing() = %v, want %v", got, tc.wantChanged)
			}
			gotTypes := map[string]metav1.ConditionStatus{}
			for _, c := range tc.obj.Status.Conditions {
				gotTypes[c.Type] = c.Status
				if c.Status == metav1.ConditionUnknown && (c.Reason != "Reconciling" || c.ObservedGeneration != tc.obj.Generation) {
					t.Errorf("condition %s = %+v, want reason Reconciling at generation %d", c.Type, c, tc.obj.Generation)
				}
			}
			if diff := cmp.Diff(tc.wantTypes, gotTypes); diff != "" {
				t.Errorf("condition statuses (-want +got):\n%s", diff)
			}
			if ready := Get(tc.obj, "Ready"); ready.Status == metav1.ConditionTrue && !ready.LastTransitionTime.Equal(&t0) {
				t.Errorf("existing Ready was rewritten: %+v", ready)
			}
		})
	}
}

func TestObserveGeneration(t *testing.T) {
	obj := thingWith(5)
	if !ObserveGeneration(obj) {
		t.Error("ObserveGeneration() = false on a new generation, want true")
	}
	if obj.Status.ObservedGeneration != 5 {
		t.Errorf("observedGeneration = %d, want 5", obj.Status.ObservedGeneration)
	}
	if ObserveGeneration(obj) {
		t.Error("ObserveGeneration() = true when already observed, want false")
	}
}

func TestIsReady(t *testing.T) {
	cases := map[string]struct {
		obj  *thing
		want bool
	}{
		"ReadyForCurrentGeneration": {
			obj:  thingWith(2, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 2}),
			want: true,
		},
		"ReadyForOldGeneration": {
			obj: thingWith(3, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 2}),
		},
		"NotReady": {
			obj: thingWith(2, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 2}),
		},
		"NoCondition": {
			obj: thingWith(2),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsReady(tc.obj); got != tc.want {
				t.Errorf("IsReady() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSetReadyAndSetStalledKeepKstatusConditionsInStep(t *testing.T) {
	type want map[string]metav1.ConditionStatus // condition type -> status; absent = not there
	steps := []struct {
		name string
		do   func(*thing) bool
		want want
	}{
		{"waiting", func(o *thing) bool { return SetReady(o, metav1.ConditionFalse, "Waiting", "w") },
			want{TypeReady: metav1.ConditionFalse, TypeReconciling: metav1.ConditionTrue}},
		{"unknown also reconciles", func(o *thing) bool { return SetReady(o, metav1.ConditionUnknown, "Starting", "s") },
			want{TypeReady: metav1.ConditionUnknown, TypeReconciling: metav1.ConditionTrue}},
		{"stalled", func(o *thing) bool { return SetStalled(o, "InvalidSpec", "bad") },
			want{TypeReady: metav1.ConditionFalse, TypeStalled: metav1.ConditionTrue}},
		{"stalled again changes nothing", func(o *thing) bool { return SetStalled(o, "InvalidSpec", "bad") },
			want{TypeReady: metav1.ConditionFalse, TypeStalled: metav1.ConditionTrue}},
		{"ready clears both", func(o *thing) bool { return SetReady(o, metav1.ConditionTrue, "Ok", "ok") },
			want{TypeReady: metav1.ConditionTrue}},
	}
	o := thingWith(1)
	for i, s := range steps {
		changed := s.do(o)
		if wantChanged := s.name != "stalled again changes nothing"; changed != wantChanged {
			t.Errorf("step %d %s: changed = %v, want %v", i, s.name, changed, wantChanged)
		}
		got := want{}
		for _, c := range o.Status.Conditions {
			got[c.Type] = c.Status
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d %s: conditions (-want +got):\n%s", i, s.name, diff)
		}
		for _, c := range o.Status.Conditions {
			if c.Type != TypeReady && c.Reason != Get(o, TypeReady).Reason {
				t.Errorf("step %d %s: %s has reason %q, want Ready's", i, s.name, c.Type, c.Reason)
			}
		}
	}
}
