package reconciler

import "testing"

func TestNext(t *testing.T) {
	// all: every management policy allowed (crossplane's default "*").
	all := func(f Facts) Facts {
		f.Create, f.Update, f.Delete = true, true, true
		return f
	}
	cases := []struct {
		name string
		f    Facts
		want Step
	}{
		{"nothing yet: create", all(Facts{}), Create},
		{"exists and up to date", all(Facts{Exists: true, UpToDate: true}), InSync},
		{"exists, differs: update", all(Facts{Exists: true}), Update},
		{"differs, but Update not allowed", Facts{Exists: true, Create: true, Delete: true}, InSync},
		{"missing, but Create not allowed", Facts{Update: true, Delete: true}, InSync},
		{"observe only, exists", Facts{ObserveOnly: true, Exists: true, UpToDate: true}, InSync},
		{"observe only, differs: never updated", Facts{ObserveOnly: true, Exists: true}, InSync},
		{"observe only, missing", Facts{ObserveOnly: true}, Missing},
		{"observe only, missing while deleting", Facts{ObserveOnly: true, Deleting: true}, Missing},
		{"created moments ago, not visible yet", all(Facts{CreatedRecently: true}), WaitForVisibility},
		{"created moments ago and visible", all(Facts{CreatedRecently: true, Exists: true, UpToDate: true}), InSync},
		{"deleting, exists: delete", all(Facts{Deleting: true, Exists: true, UpToDate: true}), Delete},
		{"deleting, gone: release", all(Facts{Deleting: true}), Release},
		{"deleting, exists, Delete not allowed: release", Facts{Deleting: true, Exists: true, Create: true, Update: true}, Release},
		{"deleting, other finalizers first", all(Facts{Deleting: true, Exists: true, OtherFinalizers: true}), WaitForFinalizers},
		{"deleting, gone, other finalizers first", all(Facts{Deleting: true, OtherFinalizers: true}), WaitForFinalizers},
		{"deleting and not visible after a create", all(Facts{Deleting: true, CreatedRecently: true}), WaitForVisibility},
		{"other finalizers do not matter before deletion", all(Facts{OtherFinalizers: true}), Create},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Next(c.f); got != c.want {
				t.Errorf("Next(%+v) = %s, want %s", c.f, got, c.want)
			}
		})
	}
}

func TestStepNames(t *testing.T) {
	for s := InSync; s <= Missing; s++ {
		if n := s.String(); n == "" || n == "Step(?)" {
			t.Errorf("step %d has no name", s)
		}
	}
	if n := Step(99).String(); n != "Step(?)" {
		t.Errorf("unknown step named %q", n)
	}
}
