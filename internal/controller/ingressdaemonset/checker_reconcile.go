package ingressdaemonset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
)

// newCheckerCache returns a cache, added to mgr, of the health-checker
// DaemonSets in namespace alone: the manager may read DaemonSets nowhere
// else but to find an earlier version's (uncached).
func newCheckerCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	ours, err := labels.NewRequirement(appsv1alpha1.LabelIngressDaemonSetNamespace, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("selecting health checkers: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.DaemonSet{}: {Label: labels.NewSelector().Add(*ours)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the health checkers' cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the health checkers' cache: %w", err)
	}
	return c, nil
}

// checkerRequests maps a health-checker DaemonSet to its IngressDaemonSet.
func checkerRequests(_ context.Context, ds *appsv1.DaemonSet) []reconcile.Request {
	ns, name, ok := strings.Cut(checkerOwner(ds), "/")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func (r *Reconciler) daemonSets() client.Reader {
	if r.DaemonSets != nil {
		return r.DaemonSets
	}
	return r.Client
}

// reconcileHealthCheck ensures one platform health checker per port and
// deletes the rest of ids's (removed ports, an earlier object's of the same
// name, an earlier version's in ids's namespace). What of the spec it does
// not take is a problem of the pass (Degraded) and, when new, a Warning
// Event; before is ids as the pass found it.
func (r *Reconciler) reconcileHealthCheck(ctx context.Context, s *scope, before *appsv1alpha1.IngressDaemonSet) error {
	ids := s.ids
	hc := r.HealthChecker.withDefaults()
	if fields := ignoredFields(ids.Spec.HealthChecker); len(fields) > 0 {
		r.warn(s, before, appsv1alpha1.ReasonHealthCheckerFieldsIgnored, fmt.Sprintf(
			"spec.healthChecker.%s ignored: the health checker's image, pull policy, ServiceAccount and resources are the platform's",
			strings.Join(fields, ", spec.healthChecker.")))
	}
	var errs []error
	var dropped []corev1.Toleration
	want := map[string]bool{}
	for _, port := range ids.Spec.HealthCheckNodePorts {
		ds, d := healthDaemonSet(ids, port, hc)
		dropped = d
		want[ds.Name] = true
		errs = append(errs, r.applyChecker(ctx, ids, ds))
	}
	if len(dropped) > 0 {
		names := make([]string, 0, len(dropped))
		for _, t := range dropped {
			names = append(names, describeToleration(t))
		}
		r.warn(s, before, appsv1alpha1.ReasonHealthCheckerTolerationsNotAllowed, fmt.Sprintf(
			"the health checker does not tolerate %s: the platform does not allow it (--ingressdaemonset-healthcheck-allowed-tolerations), so it does not run on nodes tainted so",
			strings.Join(names, ", ")))
	}
	errs = append(errs,
		r.deleteCheckers(ctx, ids.Namespace, ids.Name, func(ds *appsv1.DaemonSet) bool { return isCheckerOf(ds, ids) && want[ds.Name] }),
		r.removeLegacyCheckers(ctx, ids))
	return errors.Join(errs...)
}

// warn records a problem of the pass and, unless the Degraded condition ids
// had before the pass says it already, a Warning Event.
func (r *Reconciler) warn(s *scope, before *appsv1alpha1.IngressDaemonSet, reason, msg string) {
	s.problem(reason, msg)
	if c := meta.FindStatusCondition(before.Status.Conditions, appsv1alpha1.TypeDegraded); c != nil && strings.Contains(c.Message, msg) {
		return
	}
	r.event(s.ids, nil, corev1.EventTypeWarning, reason, "Apply", msg)
}

// describeToleration writes t as a taint would be: key[=value][:effect],
// "*" for every key.
func describeToleration(t corev1.Toleration) string {
	s := t.Key
	if s == "" {
		s = "*"
	}
	if t.Operator != corev1.TolerationOpExists {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

// applyChecker server-side applies ds, ids's health checker, unless the
// cluster's already has every field of it. A DaemonSet of that name that an
// earlier IngressDaemonSet of the same name left is replaced; any other is
// refused.
func (r *Reconciler) applyChecker(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet, ds *appsv1.DaemonSet) error {
	existing := &appsv1.DaemonSet{}
	err := r.daemonSets().Get(ctx, client.ObjectKeyFromObject(ds), existing)
	switch {
	case apierrors.IsNotFound(err):
		return r.applyObject(ctx, ids, ds, nil)
	case err != nil:
		return fmt.Errorf("getting DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
	case checkerOwner(existing) != ownerKey(ids):
		return fmt.Errorf("DaemonSet %s/%s exists and is not this IngressDaemonSet's health checker", ds.Namespace, ds.Name)
	case !isCheckerOf(existing, ids):
		if err := r.deleteChecker(ctx, existing); err != nil {
			return err
		}
		return r.applyObject(ctx, ids, ds, nil)
	case covers(existing, ds):
		return nil
	}
	return r.applyObject(ctx, ids, ds, existing)
}

// deleteCheckers deletes the health-checker DaemonSets of the
// IngressDaemonSet namespace/name but those keep reports (nil: all).
func (r *Reconciler) deleteCheckers(ctx context.Context, namespace, name string, keep func(*appsv1.DaemonSet) bool) error {
	var list appsv1.DaemonSetList
	hc := r.HealthChecker.withDefaults()
	if err := r.daemonSets().List(ctx, &list, client.InNamespace(hc.Namespace), client.MatchingLabelsSelector{Selector: checkersOf(namespace, name)}); err != nil {
		return fmt.Errorf("listing health checkers: %w", err)
	}
	var errs []error
	for i := range list.Items {
		ds := &list.Items[i]
		// The name label may be shortened: the annotation says whose it is.
		if checkerOwner(ds) != namespace+"/"+name || (keep != nil && keep(ds)) {
			continue
		}
		errs = append(errs, r.deleteChecker(ctx, ds))
	}
	return errors.Join(errs...)
}

func (r *Reconciler) deleteChecker(ctx context.Context, ds *appsv1.DaemonSet) error {
	if err := r.Client.Delete(ctx, ds, client.Preconditions{UID: &ds.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting health checker %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}

// removeLegacyCheckers deletes the health-checker DaemonSets an earlier
// version created in ids's namespace (controlled by ids, with a port label),
// once per IngressDaemonSet and process: no version creates them there now.
// Their pods hold the host ports the platform's health checkers need; the
// ServiceAccount and RoleBinding that version made there go with ids
// (owner references).
func (r *Reconciler) removeLegacyCheckers(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) error {
	if _, done := r.legacyChecked.Load(ids.UID); done {
		return nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	var list appsv1.DaemonSetList
	if err := reader.List(ctx, &list, client.InNamespace(ids.Namespace),
		client.MatchingLabels{appsv1alpha1.LabelIngressDaemonSet: naming.LabelValue(ids.Name)},
		client.HasLabels{appsv1alpha1.LabelHealthCheckPort}); err != nil {
		return fmt.Errorf("listing an earlier version's health checkers: %w", err)
	}
	var errs []error
	for i := range list.Items {
		ds := &list.Items[i]
		if !isControlledBy(ds, ids) {
			continue
		}
		if err := r.deleteChecker(ctx, ds); err != nil {
			errs = append(errs, err)
			continue
		}
		r.event(ids, ds, corev1.EventTypeNormal, appsv1alpha1.EventLegacyHealthCheckerRemoved, "Delete", fmt.Sprintf(
			"Deleted DaemonSet %s, the health checker an earlier version ran in this namespace; the platform's runs in %s",
			ds.Name, r.HealthChecker.withDefaults().Namespace))
	}
	if len(errs) == 0 {
		r.legacyChecked.Store(ids.UID, true)
	}
	return errors.Join(errs...)
}
