package providerconfig

import (
	"context"
	"fmt"
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/pcusage"
)

// userCount is what the config's usages say.
type userCount struct {
	// count is how many managed resources use the config.
	count int64
	// finishing: some of them are being deleted and still hold their usage
	// (their resource has not let go of its cloud object yet).
	finishing bool
}

// countUsers counts the usages that record this config, and keeps each
// usage's finalizer right:
//   - a usage without a controller reference is stale (e.g. stripped by a
//     backup restore): it is released and deleted; its managed resource
//     recreates it on its next connect;
//   - a usage made before usages were held gets the finalizer;
//   - a usage being deleted still counts while its resource exists; once
//     the resource is gone (or holds nothing but the garbage collector's
//     finalizers) it is released, in case the resource's own release of it
//     failed.
func (r *Reconciler) countUsers(ctx context.Context, obj config, kind string) (userCount, error) {
	labels := client.MatchingLabels{xpv2.LabelKeyProviderName: obj.GetName(), xpv2.LabelKeyProviderKind: kind}
	opts := []client.ListOption{labels}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	var usages []client.Object
	pcus := &cloudv1alpha1.ProviderConfigUsageList{}
	if err := r.client.List(ctx, pcus, opts...); err != nil {
		return userCount{}, fmt.Errorf("listing ProviderConfigUsages: %w", err)
	}
	for i := range pcus.Items {
		usages = append(usages, &pcus.Items[i])
	}
	if kind == cloudv1alpha1.ClusterProviderConfigKind {
		cpcus := &cloudv1alpha1.ClusterProviderConfigUsageList{}
		if err := r.client.List(ctx, cpcus, labels); err != nil {
			return userCount{}, fmt.Errorf("listing ClusterProviderConfigUsages: %w", err)
		}
		for i := range cpcus.Items {
			usages = append(usages, &cpcus.Items[i])
		}
	}
	var u userCount
	for _, usage := range usages {
		key := client.ObjectKeyFromObject(usage)
		switch {
		case metav1.GetControllerOf(usage) == nil:
			if err := client.IgnoreNotFound(pcusage.RemoveFinalizer(ctx, r.client, usage)); err != nil {
				return userCount{}, fmt.Errorf("releasing stale usage %s: %w", key, err)
			}
			if err := r.client.Delete(ctx, usage); client.IgnoreNotFound(err) != nil {
				return userCount{}, fmt.Errorf("deleting stale usage %s: %w", key, err)
			}
		case usage.GetDeletionTimestamp() != nil:
			gone, err := r.ownerLetGo(ctx, usage)
			if err != nil {
				return userCount{}, err
			}
			if !gone {
				u.count++
				u.finishing = true
				continue
			}
			if err := client.IgnoreNotFound(pcusage.RemoveFinalizer(ctx, r.client, usage)); err != nil {
				return userCount{}, fmt.Errorf("releasing usage %s of a resource that is gone: %w", key, err)
			}
		default:
			u.count++
			if !pcusage.Held(usage) {
				if err := client.IgnoreNotFound(pcusage.AddFinalizer(ctx, r.client, usage)); err != nil {
					return userCount{}, fmt.Errorf("holding usage %s: %w", key, err)
				}
			}
		}
	}
	return u, nil
}

// gcFinalizers are the garbage collector's own finalizers: an object that
// holds nothing else has done its own clean-up.
var gcFinalizers = []string{metav1.FinalizerDeleteDependents, metav1.FinalizerOrphanDependents}

// ownerLetGo reports whether a usage's managed resource no longer needs it:
// the resource is gone (or replaced by one of the same name), or is being
// deleted and holds only the garbage collector's finalizers. It reads the
// API server, not the cache: a cache that has not seen the resource yet
// must not release its usage.
func (r *Reconciler) ownerLetGo(ctx context.Context, usage client.Object) (bool, error) {
	ref := metav1.GetControllerOf(usage)
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		// An owner reference no API can serve names nothing that needs the usage.
		return true, nil
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
	err = r.reader.Get(ctx, client.ObjectKey{Namespace: usage.GetNamespace(), Name: ref.Name}, owner)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s, the owner of usage %s: %w", ref.Kind, ref.Name, client.ObjectKeyFromObject(usage), err)
	}
	if owner.UID != ref.UID {
		return true, nil
	}
	return owner.DeletionTimestamp != nil && !slices.ContainsFunc(owner.Finalizers, func(f string) bool { return !slices.Contains(gcFinalizers, f) }), nil
}
