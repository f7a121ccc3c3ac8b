// Package credstatus carries, inside one manager, what the managed
// resources' controllers learned about a provider config's credentials
// (the cloud rejected them) to the ProviderConfig controller, which shows
// it as the config's Ready condition. The resource controllers see the
// cloud's answers; the config controller never calls the cloud itself.
package credstatus

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
)

// Ref names a provider config; Namespace is empty for a
// ClusterProviderConfig.
type Ref struct {
	Kind, Namespace, Name string
}

// Rejection is what is known about a config whose credentials were refused.
type Rejection struct {
	// Message is the cloud's answer.
	Message string
	// RetryAt is when the account's next call may go out.
	RetryAt time.Time
}

// eventBuffer bounds the notifications waiting for the config controller;
// a notification that does not fit is dropped (the controller's periodic
// re-check catches up).
const eventBuffer = 1024

// Board is the shared record. The zero value is not usable; use New. A nil
// *Board ignores reports.
type Board struct {
	mu       sync.Mutex
	rejected map[Ref]Rejection
	events   map[string]chan event.GenericEvent // by config kind
}

// New returns an empty board.
func New() *Board {
	return &Board{rejected: map[Ref]Rejection{}, events: map[string]chan event.GenericEvent{
		cloudv1alpha1.ProviderConfigKind:        make(chan event.GenericEvent, eventBuffer),
		cloudv1alpha1.ClusterProviderConfigKind: make(chan event.GenericEvent, eventBuffer),
	}}
}

// Report records the outcome of the account's calls for ref: rejected is
// the cloud's refusal (nil: the credentials are not known to be refused).
// The config controller is notified when the state changes.
func (b *Board) Report(ref Ref, rejected *cloud.CredentialsRejectedError) {
	if b == nil {
		return
	}
	b.mu.Lock()
	prev, was := b.rejected[ref]
	changed := false
	switch {
	case rejected == nil && was:
		delete(b.rejected, ref)
		changed = true
	case rejected != nil:
		next := Rejection{Message: rejected.Err.Error(), RetryAt: rejected.RetryAt}
		changed = !was || prev.Message != next.Message
		b.rejected[ref] = next
	}
	ch := b.events[ref.Kind]
	b.mu.Unlock()
	if !changed || ch == nil {
		return
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
	select {
	case ch <- event.GenericEvent{Object: obj}:
	default:
	}
}

// Rejected returns what is known about ref.
func (b *Board) Rejected(ref Ref) (Rejection, bool) {
	if b == nil {
		return Rejection{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.rejected[ref]
	return r, ok
}

// Events are the notifications for configs of one kind, for a channel
// source; nil for an unknown kind or a nil board.
func (b *Board) Events(kind string) <-chan event.GenericEvent {
	if b == nil {
		return nil
	}
	return b.events[kind]
}
