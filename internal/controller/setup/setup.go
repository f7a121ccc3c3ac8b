// Package setup holds what every controller's Setup function receives from the
// manager, so controller packages need not import the manager.
package setup

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// Config is the manager-wide configuration a controller may need.
type Config struct {
	// ClusterName identifies this cluster in the tags of every cloud object
	// edgeplane creates, so the orphan sweep knows which objects are its own.
	ClusterName string

	// WatchNamespace restricts namespaced objects to one namespace; empty means all.
	WatchNamespace string

	// Credentials carries the cloud's refusals of provider configs'
	// credentials from the managed resources' controllers to the
	// ProviderConfig controller; nil: not reported.
	Credentials *credstatus.Board
	// Tenancy is what tenants' ProviderConfigs may use beyond the fixed
	// rules (the endpoint allow-list, --tenant-endpoints); the zero value
	// allows no endpoint override.
	Tenancy tenancy.Policy
	// Namespace is the manager's own: where its Services and the Secrets of
	// its self-managed certificates are (--webhook-service-namespace).
	Namespace string
	// Sweeps are the turns the process's periodic orphan sweeps take, one
	// at a time; nil: each sweeps on its own tick.
	Sweeps *orphan.Turns
}

// Func registers one controller with the manager.
type Func func(ctx context.Context, mgr ctrl.Manager, cfg Config) error

// IndexField registers the cache index field of objects like obj, whose
// value for one object is value's answer.
func IndexField[T client.Object](ctx context.Context, idx client.FieldIndexer, obj T, field string, value func(T) string) error {
	if err := idx.IndexField(ctx, obj, field, func(o client.Object) []string { return []string{value(o.(T))} }); err != nil {
		return fmt.Errorf("indexing %T by %s: %w", obj, field, err)
	}
	return nil
}
