package reconciler

// Facts are what a pass knows once the cloud object has been observed: the
// object's lifecycle, what its management policies allow, and what Observe
// reported. They are all Next looks at.
type Facts struct {
	// Deleting: the object has a deletion timestamp.
	Deleting bool
	// OtherFinalizers: the object carries more than one finalizer, so
	// others besides the reconciler's own (deletion of the cloud object
	// waits for them, as crossplane's managed reconciler does).
	OtherFinalizers bool

	// What the management policies allow.
	Create, Update, Delete, ObserveOnly bool

	// What Observe reported.
	Exists, UpToDate bool
	// CreatedRecently: a create succeeded within the creation grace period,
	// so a cloud object not seen yet may just not be visible yet.
	CreatedRecently bool
}

// Step is what a pass does after Observe.
type Step int

const (
	// InSync: the cloud object exists and is as wanted (or the policies
	// forbid changing it): poll again later.
	InSync Step = iota
	// Create the cloud object.
	Create
	// Update the cloud object.
	Update
	// Delete the cloud object (the object is being deleted).
	Delete
	// Release: the object is being deleted and its cloud object is gone
	// (or was never made): remove the finalizer.
	Release
	// WaitForFinalizers: the object is being deleted, but other finalizers
	// must go before the cloud object does.
	WaitForFinalizers
	// WaitForVisibility: a cloud object created moments ago is not visible
	// yet; look again soon instead of creating a second one.
	WaitForVisibility
	// Missing: the policies only observe, and there is nothing to observe.
	Missing
)

var stepNames = [...]string{"InSync", "Create", "Update", "Delete", "Release", "WaitForFinalizers", "WaitForVisibility", "Missing"}

func (s Step) String() string {
	if int(s) < len(stepNames) {
		return stepNames[s]
	}
	return "Step(?)"
}

// Next decides a pass's step from its facts. It is crossplane's managed
// reconciler's order of questions, as a pure function: observe-only first,
// then creation grace, deletion, creation, update.
func Next(f Facts) Step {
	switch {
	case !f.Exists && f.ObserveOnly:
		return Missing
	case !f.Exists && f.CreatedRecently:
		return WaitForVisibility
	case f.Deleting && f.OtherFinalizers:
		return WaitForFinalizers
	case f.Deleting && f.Exists && f.Delete:
		return Delete
	case f.Deleting:
		return Release
	case !f.Exists && f.Create:
		return Create
	case !f.Exists:
		return InSync
	case !f.UpToDate && f.Update:
		return Update
	default:
		return InSync
	}
}
