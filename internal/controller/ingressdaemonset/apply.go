package ingressdaemonset

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// FieldManager is the server-side apply field manager of every object the
// controller generates. It owns exactly the fields the builders set: a hand
// edit to one of them is reverted by the next pass, a field another manager
// set (an extra label, say) is left alone, and a field the controller stops
// setting is removed.
const FieldManager = Name

// covers reports whether live already has every field of want at want's
// value: maps by key, lists element by element, an empty map or list
// asserting nothing. Fields only live has (defaults, other managers') do not
// count, so an object the server defaulted is not applied again.
func covers(live, want client.Object) bool {
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false
	}
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return false
	}
	delete(w, "status")
	return coversValue(l, w)
}

func coversValue(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		if len(w) == 0 {
			return true
		}
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !coversValue(l[k], wv) {
				return false
			}
		}
		return true
	case []any:
		if len(w) == 0 {
			return true
		}
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !coversValue(l[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	default:
		return reflect.DeepEqual(live, want)
	}
}

// applyConfiguration turns obj, a generated object holding only the fields
// the controller owns, into the typed apply configuration of its kind.
func applyConfiguration(obj client.Object, scheme *runtime.Scheme) (appliable, error) {
	var ac appliable
	switch obj.(type) {
	case *appsv1.Deployment:
		ac = &appsv1ac.DeploymentApplyConfiguration{}
	case *appsv1.DaemonSet:
		ac = &appsv1ac.DaemonSetApplyConfiguration{}
	default:
		return nil, fmt.Errorf("no apply configuration for %T", obj)
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T %s: %w", obj, obj.GetName(), err)
	}
	delete(u, "status")
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encoding %T %s: %w", obj, obj.GetName(), err)
	}
	if err := json.Unmarshal(b, ac); err != nil {
		return nil, fmt.Errorf("decoding %T %s: %w", obj, obj.GetName(), err)
	}
	return ac, nil
}

// applyObject server-side applies obj (only the fields the controller owns)
// as FieldManager, taking the fields back from whoever changed them, and
// leaves the stored object the API server returned in obj. existing is the
// cache's copy of the object, nil when it is created.
func (r *Reconciler) applyObject(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet, obj, existing client.Object) error {
	if existing != nil {
		if err := r.adoptEarlierWrites(ctx, ids, obj, existing.GetUID()); err != nil {
			return err
		}
	}
	ac, err := applyConfiguration(obj, r.Client.Scheme())
	if err != nil {
		return err
	}
	answer := &answered{appliable: ac}
	if err := r.Client.Apply(ctx, answer, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %T %s: %w", obj, obj.GetName(), err)
	}
	if err := json.Unmarshal(answer.stored, obj); err != nil {
		return fmt.Errorf("decoding the applied %T %s: %w", obj, obj.GetName(), err)
	}
	if existing == nil && len(earlierManagers(ids, obj)) == 0 {
		// Created by this apply (or nothing of an earlier version's on it):
		// its first update needs no uncached read either.
		r.adopted.Store(obj.GetUID(), true)
	}
	return nil
}

// appliable is a typed apply configuration, as the client needs it.
type appliable interface {
	runtime.ApplyConfiguration
	GetName() *string
	GetNamespace() *string
	GetKind() *string
	GetAPIVersion() *string
}

// answered is an apply configuration that keeps, instead of decoding into
// itself, the object the API server answered with: the whole stored
// object, managedFields included (an apply configuration has none).
type answered struct {
	appliable
	stored []byte
}

func (a *answered) MarshalJSON() ([]byte, error) { return json.Marshal(a.appliable) }

func (a *answered) UnmarshalJSON(b []byte) error {
	a.stored = slices.Clone(b)
	return nil
}

// earlierManagers are the managers other than FieldManager that wrote, by
// Update, the controller reference to ids on obj: earlier versions of the
// controller.
func earlierManagers(ids *appsv1alpha1.IngressDaemonSet, obj client.Object) sets.Set[string] {
	ownerRef := fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "ownerReferences", fieldpath.KeyByFields("uid", string(ids.UID))))
	managers := sets.New[string]()
	for _, m := range csaupgrade.FindFieldsOwners(obj.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, ownerRef) {
		if m.Manager != FieldManager {
			managers.Insert(m.Manager)
		}
	}
	return managers
}

// adoptEarlierWrites hands to FieldManager, once per object and process,
// the fields that earlier versions of the controller wrote with Create and
// Update (recognised by owning the controller reference to ids). Left with
// their old manager, such fields would outlive the controller no longer
// applying them: an env var removed from the template, a rollout phase label.
// cachedUID is the UID of the cache's copy: an object already handed over
// costs no uncached read (a round trip added to every write of a rollout).
func (r *Reconciler) adoptEarlierWrites(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet, obj client.Object, cachedUID types.UID) error {
	if _, done := r.adopted.Load(cachedUID); done && cachedUID != "" {
		return nil
	}
	live, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("reading %T %s: %w", obj, obj.GetName(), err))
	}
	if _, done := r.adopted.Load(live.GetUID()); done {
		return nil
	}
	if managers := earlierManagers(ids, live); managers.Len() > 0 {
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, managers, FieldManager)
		if err != nil {
			return fmt.Errorf("handing the fields of %v on %T %s to %s: %w", sets.List(managers), obj, obj.GetName(), FieldManager, err)
		}
		if patch != nil {
			if err := r.Client.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch)); err != nil {
				return fmt.Errorf("handing the fields of %v on %T %s to %s: %w", sets.List(managers), obj, obj.GetName(), FieldManager, err)
			}
		}
	}
	r.adopted.Store(live.GetUID(), true)
	return nil
}

// ownedDeployment is what the controller applies for a node's Deployment d
// (d as the rollout wants it): the fields it owns, at d's values. Labels and
// annotations are only edgeplane's: the template's and the node's labels,
// the rollout phase, and the node, revision and detach annotations.
func ownedDeployment(ids *appsv1alpha1.IngressDaemonSet, d *appsv1.Deployment) *appsv1.Deployment {
	node := d.Annotations[appsv1alpha1.AnnotationNode]
	labelKeys := []string{appsv1alpha1.LabelPhase, appsv1alpha1.LabelDetachStartedAt}
	for k := range ids.Spec.Template.Metadata.Labels {
		labelKeys = append(labelKeys, k)
	}
	for k := range nodeLabels(ids, node) {
		labelKeys = append(labelKeys, k)
	}
	annotationKeys := []string{appsv1alpha1.AnnotationNode, appsv1alpha1.AnnotationRevision,
		appsv1alpha1.AnnotationDeploymentDetachKey, appsv1alpha1.AnnotationNodeDetachKeys}
	if k := d.Annotations[appsv1alpha1.AnnotationDeploymentDetachKey]; k != "" {
		annotationKeys = append(annotationKeys, k)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{ownerRef(ids)},
			Labels:          pick(d.Labels, labelKeys),
			Annotations:     pick(d.Annotations, annotationKeys),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: d.Spec.Replicas,
			Selector: d.Spec.Selector,
			Strategy: d.Spec.Strategy,
			Template: d.Spec.Template,
		},
	}
}

// pick returns the entries of m under keys (nil if none).
func pick(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
