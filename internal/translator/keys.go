package translator

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Marks that a translator puts on every object it writes.
const (
	// LabelManagedBy is the well-known label naming the tool that manages an
	// object. Translators set it to ManagedByTranslator; an object without it
	// belongs to a person and is never modified or deleted by a translator.
	LabelManagedBy = "app.kubernetes.io/managed-by"

	// ManagedByTranslator is the LabelManagedBy value of translated objects.
	ManagedByTranslator = "edgeplane-translator"

	// AnnotationTranslatedFrom records the legacy source of a translated
	// object as "<Kind>/<namespace>/<name>", or "<Kind>/<name>" for a
	// cluster-scoped source (see SourceKey). It is an annotation because a
	// label value may contain neither "/" nor more than 63 characters.
	AnnotationTranslatedFrom = "edgeplane.io/translated-from"

	// LabelTranslatedFromKind carries the Kind of the source (for example
	// "Pod"), so translated objects can be selected by source kind:
	// kubectl get edgeplane -l edgeplane.io/translated-from-kind=Pod.
	LabelTranslatedFromKind = "edgeplane.io/translated-from-kind"
)

// SourceKey returns the AnnotationTranslatedFrom value for source:
// "<Kind>/<namespace>/<name>" for a namespaced source and "<Kind>/<name>" for
// a cluster-scoped one. The Kind comes from scheme, because objects read
// through a typed client carry no TypeMeta.
func SourceKey(scheme *runtime.Scheme, source client.Object) (string, error) {
	gvk, err := apiutil.GVKForObject(source, scheme)
	if err != nil {
		return "", fmt.Errorf("finding kind of source %s: %w", client.ObjectKeyFromObject(source), err)
	}
	return sourceKey(gvk.Kind, source.GetNamespace(), source.GetName()), nil
}

func sourceKey(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// ParseSourceKey splits a SourceKey value into the source Kind and its
// namespace and name. Namespace is empty for a cluster-scoped source.
func ParseSourceKey(key string) (kind string, nn types.NamespacedName, err error) {
	parts := strings.Split(key, "/")
	for _, p := range parts {
		if p == "" {
			return "", types.NamespacedName{}, fmt.Errorf("malformed source key %q: empty segment", key)
		}
	}
	switch len(parts) {
	case 2:
		return parts[0], types.NamespacedName{Name: parts[1]}, nil
	case 3:
		return parts[0], types.NamespacedName{Namespace: parts[1], Name: parts[2]}, nil
	default:
		return "", types.NamespacedName{}, fmt.Errorf("malformed source key %q: want <Kind>/<name> or <Kind>/<namespace>/<name>", key)
	}
}

// IsTranslated reports whether obj carries the translator's managed-by label,
// that is whether a translator (rather than a person) owns it.
func IsTranslated(obj client.Object) bool {
	return obj.GetLabels()[LabelManagedBy] == ManagedByTranslator
}

// TranslatedFrom returns the source key recorded on obj and whether obj is a
// translated object that records one.
func TranslatedFrom(obj client.Object) (string, bool) {
	if !IsTranslated(obj) {
		return "", false
	}
	key, ok := obj.GetAnnotations()[AnnotationTranslatedFrom]
	return key, ok && key != ""
}

// MapToSource returns a handler.MapFunc that maps a translated object back to
// the source it was translated from, for sources of the given Kind. Use it to
// watch translated objects that cannot carry an owner reference to their
// source (a cluster-scoped object translated from a namespaced source), so the
// translator sees edits and deletions of its output. Objects that are not
// translated, or were translated from another Kind, map to nothing.
func MapToSource(kind string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		key, ok := TranslatedFrom(obj)
		if !ok {
			return nil
		}
		k, nn, err := ParseSourceKey(key)
		if err != nil || k != kind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: nn}}
	}
}
