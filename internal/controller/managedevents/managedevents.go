// Package managedevents lets crossplane-runtime's managed reconciler record
// Events through the events.k8s.io recorder every edgeplane controller uses.
package managedevents

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Recorder adapts an events.k8s.io recorder to crossplane's event.Recorder.
type Recorder struct {
	Events events.EventRecorder
	// WarningsOnly drops the managed reconciler's generic Normal events
	// (CreatedExternalResource, UpdatedExternalResource, ...), which a kind
	// whose conditions and own Events say more can spare: each is one more
	// API write per reconcile step.
	WarningsOnly bool
}

// Event records e on obj.
func (r Recorder) Event(obj runtime.Object, e event.Event) {
	if r.WarningsOnly && e.Type == event.TypeNormal {
		return
	}
	r.Events.Eventf(obj, nil, string(e.Type), string(e.Reason), "Reconcile", "%s", e.Message)
}

// WithAnnotations returns r: events.k8s.io Events carry no annotations.
func (r Recorder) WithAnnotations(...string) event.Recorder { return r }
