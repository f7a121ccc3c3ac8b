// Package pcusage records which managed resource uses which provider config
// (crossplane's ProviderConfigUsage contract: a usage named after the
// resource's UID, owned by it, labelled with the config) and holds each
// usage with cloudv1alpha1.UsageFinalizer until its resource has let go of
// its cloud object. Without the finalizer a usage can go first — the
// namespace controller deletes a namespace's objects in no particular
// order, the garbage collector deletes dependents first under foreground
// deletion — and the config, with its credentials, would be released while
// a resource still needs them to delete its cloud object. This is
// crossplane-runtime's usage protection (Protect/Untrack), for the crossplane
// version edgeplane builds with.
//
// The resource's reconciler calls Release once its own finalizer is gone;
// the provider config reconciler releases, as a safety net, a usage whose
// resource is gone or holds nothing but the garbage collector's
// finalizers.
package pcusage

import (
	"context"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

// Tracker records usages of one usage kind (ProviderConfigUsage for
// namespaced resources, ClusterProviderConfigUsage for cluster-scoped ones).
type Tracker struct {
	track  *resource.ProviderConfigUsageTracker
	client client.Client
	reader client.Reader
	newObj func() client.Object
}

// New returns a Tracker writing usages like of through c; reader reads the
// API server directly (a release must see the stored finalizers).
func New(c client.Client, reader client.Reader, of resource.TypedProviderConfigUsage) *Tracker {
	held := of.DeepCopyObject().(resource.TypedProviderConfigUsage) //nolint:forcetypeassert // a deep copy keeps the type
	held.SetFinalizers([]string{cloudv1alpha1.UsageFinalizer})
	return &Tracker{
		// crossplane's tracker copies its template, finalizers included,
		// into every usage it creates.
		track:  resource.NewProviderConfigUsageTracker(c, held),
		client: c,
		reader: reader,
		newObj: func() client.Object { return of.DeepCopyObject().(client.Object) }, //nolint:forcetypeassert // a usage is an object
	}
}

// Track records that mg uses the provider config it names. A usage made
// before the finalizer existed gets it from the provider config
// reconciler.
func (t *Tracker) Track(ctx context.Context, mg resource.ModernManaged) error {
	return t.track.Track(ctx, mg)
}

// Release removes the finalizer from mg's usage: mg no longer needs its
// config. A usage that is gone needs nothing.
func (t *Tracker) Release(ctx context.Context, mg metav1.Object) error {
	key := client.ObjectKey{Namespace: mg.GetNamespace(), Name: string(mg.GetUID())}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := t.newObj()
		if err := t.reader.Get(ctx, key, u); err != nil {
			return err
		}
		return RemoveFinalizer(ctx, t.client, u)
	})
	if err := client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("releasing provider config usage %s: %w", key, err)
	}
	return nil
}

// RemoveFinalizer removes UsageFinalizer from u (as read), with an
// optimistic lock.
func RemoveFinalizer(ctx context.Context, c client.Client, u client.Object) error {
	return patchFinalizers(ctx, c, u, func(o client.Object) bool { return controllerutil.RemoveFinalizer(o, cloudv1alpha1.UsageFinalizer) })
}

// AddFinalizer adds UsageFinalizer to u (as read), with an optimistic lock.
func AddFinalizer(ctx context.Context, c client.Client, u client.Object) error {
	return patchFinalizers(ctx, c, u, func(o client.Object) bool { return controllerutil.AddFinalizer(o, cloudv1alpha1.UsageFinalizer) })
}

// Held reports whether u carries UsageFinalizer.
func Held(u client.Object) bool {
	return slices.Contains(u.GetFinalizers(), cloudv1alpha1.UsageFinalizer)
}

func patchFinalizers(ctx context.Context, c client.Client, u client.Object, change func(client.Object) bool) error {
	before := u.DeepCopyObject().(client.Object) //nolint:forcetypeassert // a deep copy keeps the type
	if !change(u) {
		return nil
	}
	return c.Patch(ctx, u, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
