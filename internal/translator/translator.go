// Package translator writes the edgeplane custom resources that stand in for
// legacy inputs (a Pod's annotations, a Node's label, a Deployment's pod
// template, a ConfigMap), so that reconcilers only ever read CRs.
//
// A translator calls Ensure while its legacy input is present and Delete once
// it is gone. Both follow the same ownership rules:
//
//   - Every object written is marked with LabelManagedBy=ManagedByTranslator,
//     LabelTranslatedFromKind and AnnotationTranslatedFrom.
//   - An object without those marks, or marked as translated from another
//     source, belongs to someone else. It is never modified or deleted; the
//     conflict is reported as a Warning Event (ReasonTranslationConflict) on
//     the source and the call returns ResultConflict with a nil error, so the
//     caller does not requeue and simply waits for the next event.
//   - Writes happen only when the desired object differs from the stored one.
//
// Owner references: the source becomes the controller owner of the translated
// object whenever Kubernetes allows it, that is when the source is
// cluster-scoped (a Node may own anything) or lives in the object's namespace.
// A namespaced source cannot own a cluster-scoped object and an owner
// reference across namespaces is invalid, so in those cases no owner reference
// is set: the garbage collector will not remove the object and deletion is
// driven by the translator alone (Delete when the input goes away, and a
// watch on the translated kind mapped back with MapToSource). BlockOwnerDeletion
// is left false so that deleting a source never waits on a CR's finalizer and
// the manager needs no update permission on the sources' finalizers.
package translator

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// Event reasons emitted on the source object.
const (
	// ReasonTranslated means a translated object was created or updated.
	ReasonTranslated = "Translated"
	// ReasonTranslationDeleted means a translated object was deleted because
	// its legacy input went away.
	ReasonTranslationDeleted = "TranslationDeleted"
	// ReasonTranslationConflict means an object with the translated object's
	// name exists and belongs to someone else, so it was left untouched.
	ReasonTranslationConflict = "TranslationConflict"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionTranslate = "Translate"
	actionDelete    = "DeleteTranslation"
)

// Result says what Ensure or Delete did.
type Result string

const (
	// ResultUnchanged means nothing was written: the stored object already
	// matched, or (for Delete) there was nothing of ours to delete.
	ResultUnchanged Result = "Unchanged"
	// ResultCreated means the translated object was created.
	ResultCreated Result = "Created"
	// ResultUpdated means the translated object was patched.
	ResultUpdated Result = "Updated"
	// ResultDeleted means the translated object was deleted.
	ResultDeleted Result = "Deleted"
	// ResultConflict means the object belongs to someone else and was left
	// untouched; a Warning Event was emitted on the source. The error
	// returned with it is nil: retrying cannot help until a person acts, and
	// their edit triggers the next reconcile.
	ResultConflict Result = "Conflict"
	// ResultTerminating means the translated object is ours but is being
	// deleted (its finalizer is still releasing the cloud side), so it was
	// left alone. Call Ensure again once it is gone: a caller that watches
	// the translated kind is triggered by the deletion, others should requeue
	// after a delay.
	ResultTerminating Result = "Terminating"
	// ResultNotCached means an object of that name exists although the
	// client's cache had none: the cache has not caught up yet, most often
	// with this translator's own creation of a moment ago. Nothing was
	// written. The object's arrival in the cache brings a caller that
	// watches the translated kind back only if the object is ours, so call
	// Ensure again after NotCachedRetry (Requeue does it): by then the
	// cache shows whose it is.
	ResultNotCached Result = "NotCached"
)

// NotCachedRetry is how long after ResultNotCached to look again: an
// informer normally delivers a creation within milliseconds, so one second
// is ample and still no hot loop when it does not.
const NotCachedRetry = time.Second

// creations remembers the objects this process's translators created, by
// kind and key, until the cache shows them: a pass the cache serves before
// a creation reached it (the source changed again at once) then returns
// ResultNotCached instead of sending a creation the API server refuses as
// AlreadyExists. Under a burst that was one creation in six. Bounded, and
// short-lived: an object someone else deletes before this process's cache
// ever showed it is created again at most creationsTTL later.
var creations = newCreations()

const (
	creationsTTL  = 5 * time.Second
	creationsSize = 4096
)

type creationKey struct {
	kind schema.GroupKind
	key  client.ObjectKey
}

func newCreations() *expect.Writes[creationKey, types.UID] {
	return expect.New[creationKey, types.UID](creationsTTL, creationsSize, nil)
}

func creationKeyOf(scheme *runtime.Scheme, obj client.Object) (creationKey, bool) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return creationKey{}, false
	}
	return creationKey{kind: gvk.GroupKind(), key: client.ObjectKeyFromObject(obj)}, true
}

// Requeue is the reconcile result a caller returns for r: a retry after
// NotCachedRetry for ResultNotCached, nothing otherwise.
func Requeue(r Result) reconcile.Result {
	if r == ResultNotCached {
		return reconcile.Result{RequeueAfter: NotCachedRetry}
	}
	return reconcile.Result{}
}

// Ensure creates or patches obj from source. obj must carry only the name
// (and, for a namespaced kind, the namespace) of the translated object; on
// return it holds the stored object. mutate sets the desired state (spec and
// any extra labels or annotations) on the object, which is either the stored
// one or a fresh one; it must not touch the name, the namespace or the
// translator's marks, which Ensure sets after it. mutate is not called when
// the object belongs to someone else.
//
// source must be the object as read from the API server (it needs a UID for
// the owner reference). rec may be nil, in which case no events are emitted;
// a manager's GetEventRecorder satisfies events.EventRecorder.
func Ensure[T client.Object](ctx context.Context, c client.Client, rec events.EventRecorder, source client.Object, obj T, mutate func(T) error) (Result, error) {
	src, err := newSourceRef(c.Scheme(), source)
	if err != nil {
		return ResultUnchanged, err
	}
	target := describe(c.Scheme(), obj)
	logger := log.FromContext(ctx).WithValues("source", src.key, "translated", target)

	own := canOwn(source, obj)
	if own && source.GetUID() == "" {
		return ResultUnchanged, fmt.Errorf("translating %s into %s: source has no UID, pass the object read from the API server", src.key, target)
	}

	var conflict *conflictError
	var terminating bool
	created, remember := creationKeyOf(c.Scheme(), obj)
	op, err := controllerutil.CreateOrPatch(ctx, c, obj, func() error {
		// A stored object has a resourceVersion; a fresh one does not.
		if obj.GetResourceVersion() == "" && remember {
			if _, ok := creations.Get(created); ok {
				return errNotCached
			}
		}
		if obj.GetResourceVersion() != "" {
			if remember {
				creations.Forget(created) // the cache shows it
			}
			if reason := src.foreignReason(obj); reason != "" {
				conflict = &conflictError{reason: reason}
				return conflict
			}
			if obj.GetDeletionTimestamp() != nil {
				terminating = true
				return errTerminating
			}
		}
		if mutate != nil {
			if err := mutate(obj); err != nil {
				return fmt.Errorf("computing desired state: %w", err)
			}
		}
		src.mark(obj)
		if own {
			if err := controllerutil.SetControllerReference(source, obj, c.Scheme(), controllerutil.WithBlockOwnerDeletion(false)); err != nil {
				return fmt.Errorf("setting owner reference: %w", err)
			}
		}
		return nil
	})
	switch {
	case conflict != nil:
		logger.Info("Left translated object untouched: it belongs to someone else", "reason", conflict.reason)
		emit(rec, source, obj, corev1.EventTypeWarning, ReasonTranslationConflict, actionTranslate,
			"Did not translate into %s: %s", target, conflict.reason)
		return ResultConflict, nil
	case terminating:
		logger.V(1).Info("Waiting for translated object to finish deleting")
		return ResultTerminating, nil
	case errors.Is(err, errNotCached):
		logger.V(1).Info("Created translated object a moment ago; the cache does not show it yet")
		return ResultNotCached, nil
	case apierrors.IsAlreadyExists(err):
		// CreateOrPatch creates only after its cached read found nothing.
		logger.V(1).Info("Translated object exists but is not in the cache yet; looking again shortly")
		return ResultNotCached, nil
	case err != nil:
		return ResultUnchanged, fmt.Errorf("translating %s into %s: %w", src.key, target, err)
	}

	switch op {
	case controllerutil.OperationResultCreated:
		if remember {
			creations.Record(created, obj.GetUID(), obj.GetResourceVersion())
		}
		logger.Info("Created translated object")
		emit(rec, source, obj, corev1.EventTypeNormal, ReasonTranslated, actionTranslate, "Created %s", target)
		return ResultCreated, nil
	case controllerutil.OperationResultNone:
		return ResultUnchanged, nil
	default:
		logger.Info("Updated translated object")
		emit(rec, source, obj, corev1.EventTypeNormal, ReasonTranslated, actionTranslate, "Updated %s", target)
		return ResultUpdated, nil
	}
}

// Delete deletes the translated object named by obj (name and namespace set)
// because source's legacy input went away. It deletes only an object that is
// ours and was translated from source, and only the exact version it checked
// (UID and resourceVersion preconditions), so an object a person takes over
// in the meantime survives. A missing object is ResultUnchanged; somebody
// else's object is ResultConflict. source may be a stub carrying only the
// name and namespace (the source itself was deleted); events are emitted only
// when it has a UID, that is when it still exists.
func Delete(ctx context.Context, c client.Client, rec events.EventRecorder, source, obj client.Object) (Result, error) {
	src, err := newSourceRef(c.Scheme(), source)
	if err != nil {
		return ResultUnchanged, err
	}
	target := describe(c.Scheme(), obj)
	logger := log.FromContext(ctx).WithValues("source", src.key, "translated", target)
	if source.GetUID() == "" {
		rec = nil
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ResultUnchanged, nil
		}
		return ResultUnchanged, fmt.Errorf("getting %s: %w", target, err)
	}
	if reason := src.foreignReason(obj); reason != "" {
		logger.Info("Left object untouched: it belongs to someone else", "reason", reason)
		emit(rec, source, obj, corev1.EventTypeWarning, ReasonTranslationConflict, actionDelete,
			"Did not delete %s: %s", target, reason)
		return ResultConflict, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		return ResultUnchanged, nil
	}

	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
		if apierrors.IsNotFound(err) {
			return ResultUnchanged, nil
		}
		// A precondition conflict means the object changed since we checked
		// it; the error requeues and the next pass re-checks ownership.
		return ResultUnchanged, fmt.Errorf("deleting %s: %w", target, err)
	}
	if key, ok := creationKeyOf(c.Scheme(), obj); ok {
		creations.Forget(key)
	}
	logger.Info("Deleted translated object")
	emit(rec, source, obj, corev1.EventTypeNormal, ReasonTranslationDeleted, actionDelete, "Deleted %s", target)
	return ResultDeleted, nil
}

// errTerminating aborts CreateOrPatch for an object that is being deleted.
var errTerminating = errors.New("translated object is being deleted")

// errNotCached stops CreateOrPatch before a creation this process made
// already (see creations).
var errNotCached = errors.New("translated object created a moment ago, not in the cache yet")

// conflictError aborts CreateOrPatch for an object that is not ours.
type conflictError struct{ reason string }

func (e *conflictError) Error() string {
	return "translated object belongs to someone else: " + e.reason
}

// sourceRef is what the translator needs to know about a source.
type sourceRef struct {
	gvk schema.GroupVersionKind
	// name is the source's name, compared with controller owner references.
	name string
	// key is the AnnotationTranslatedFrom value.
	key string
}

func newSourceRef(scheme *runtime.Scheme, source client.Object) (sourceRef, error) {
	gvk, err := apiutil.GVKForObject(source, scheme)
	if err != nil {
		return sourceRef{}, fmt.Errorf("finding kind of source %s: %w", client.ObjectKeyFromObject(source), err)
	}
	return sourceRef{
		gvk:  gvk,
		name: source.GetName(),
		key:  sourceKey(gvk.Kind, source.GetNamespace(), source.GetName()),
	}, nil
}

// foreignReason says why obj must not be written on behalf of s, or returns
// "" when obj is ours.
func (s sourceRef) foreignReason(obj client.Object) string {
	if !IsTranslated(obj) {
		return fmt.Sprintf("it has no %s=%s label, so a person owns it", LabelManagedBy, ManagedByTranslator)
	}
	from, ok := TranslatedFrom(obj)
	if !ok {
		return fmt.Sprintf("it records no %s annotation", AnnotationTranslatedFrom)
	}
	if from != s.key {
		return fmt.Sprintf("it was translated from %s", from)
	}
	if ref := metav1.GetControllerOf(obj); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != s.gvk.Group || ref.Kind != s.gvk.Kind || ref.Name != s.name {
			return fmt.Sprintf("it is controlled by %s %s", ref.Kind, ref.Name)
		}
	}
	return ""
}

// mark sets the translator's labels and annotation on obj.
func (s sourceRef) mark(obj client.Object) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelManagedBy] = ManagedByTranslator
	labels[LabelTranslatedFromKind] = s.gvk.Kind
	obj.SetLabels(labels)

	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationTranslatedFrom] = s.key
	obj.SetAnnotations(annotations)
}

// canOwn reports whether Kubernetes accepts source as an owner of obj: a
// cluster-scoped owner may own anything, a namespaced one only objects in its
// own namespace.
func canOwn(source, obj client.Object) bool {
	return source.GetNamespace() == "" || source.GetNamespace() == obj.GetNamespace()
}

// describe names obj as "Kind namespace/name" for logs and events.
func describe(scheme *runtime.Scheme, obj client.Object) string {
	kind := fmt.Sprintf("%T", obj)
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		kind = gvk.Kind
	}
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

func emit(rec events.EventRecorder, regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	if rec == nil {
		return
	}
	rec.Eventf(regarding, related, eventType, reason, action, note, args...)
}
