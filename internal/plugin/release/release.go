// Package release lets go of a managed resource whose cloud side can no
// longer be reached (its account is closed, its credentials revoked): the
// resource is already being deleted, its finalizer waits for a cloud call
// that will never succeed, and a person decides to leave the cloud object
// as it is.
//
// It uses crossplane's own mechanism rather than removing the finalizer by
// hand: management policies without Delete (the Orphan deletion policy).
// For a resource being deleted with such policies, the cloud reconciler
// (internal/runtime/reconciler, as crossplane's) removes its finalizer without connecting to the cloud at all, so nothing
// races with a reconcile in flight. The decision is recorded in an
// annotation (who asked, when, why, and what cloud object was left).
package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// AnnotationKeptCloud records a release: the time, the reason and the cloud
// object left behind. Its presence tells a reader (and the orphan report)
// that the cloud side was left on purpose.
const AnnotationKeptCloud = "edgeplane.io/released-keeping-cloud"

// KeepCloudPolicies are management policies without Delete: crossplane's
// supported policy set for "orphan the external resource".
var KeepCloudPolicies = xpv2.ManagementPolicies{
	xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize,
}

// Kind is a managed kind that can be released.
type Kind struct {
	Name       string
	Resource   schema.GroupVersionResource
	Namespaced bool
	// CloudFields are the status fields naming the cloud object, recorded
	// in the annotation and printed.
	CloudFields []string
}

var networking = schema.GroupVersion{Group: "networking.edgeplane.io", Version: "v1alpha1"}

// Kinds are the kinds with cloud objects and a finalizer.
var Kinds = []Kind{
	{Name: "podelasticip", Resource: networking.WithResource("podelasticips"), Namespaced: true, CloudFields: []string{"allocationID", "publicIP"}},
	{Name: "anycastipbinding", Resource: networking.WithResource("anycastipbindings"), CloudFields: []string{"addressID", "publicIP"}},
	{Name: "nodeelasticip", Resource: networking.WithResource("nodeelasticips"), CloudFields: []string{"allocationID", "publicIP"}},
}

// FindKind resolves a kind name as kubectl would accept it (singular,
// plural, any case).
func FindKind(name string) (Kind, bool) {
	n := strings.TrimSuffix(strings.ToLower(name), "s")
	for _, k := range Kinds {
		if k.Name == n || strings.TrimSuffix(k.Resource.Resource, "s") == n {
			return k, true
		}
	}
	return Kind{}, false
}

// ErrNotDeleting refuses to release a resource nobody asked to delete:
// release only unblocks a deletion, it never starts one.
var ErrNotDeleting = errors.New("the resource is not being deleted")

// Request is one release.
type Request struct {
	Kind      Kind
	Namespace string
	Name      string
	// Reason is recorded in the annotation.
	Reason string
	Now    time.Time
}

// Result says what was left in the cloud.
type Result struct {
	// Cloud is the recorded cloud object ("allocationId=eipalloc-…
	// publicIp=…"), empty when the status names none.
	Cloud string
	// AlreadyReleased is true when an earlier release was recorded.
	AlreadyReleased bool
}

// Release records the decision and switches the resource to management
// policies without Delete. The manager then removes the finalizer.
func Release(ctx context.Context, dyn dynamic.Interface, req Request) (Result, error) {
	ri := dyn.Resource(req.Kind.Resource).Namespace(req.Namespace)
	if !req.Kind.Namespaced {
		ri = dyn.Resource(req.Kind.Resource)
	}
	obj, err := ri.Get(ctx, req.Name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return Result{}, fmt.Errorf("%s %s not found: %w", req.Kind.Name, req.Name, err)
		}
		return Result{}, fmt.Errorf("getting %s %s: %w", req.Kind.Name, req.Name, err)
	}
	if obj.GetDeletionTimestamp() == nil {
		return Result{}, fmt.Errorf("%s %s: %w; delete it first (kubectl delete %s %s), then release it if the deletion cannot finish",
			req.Kind.Name, req.Name, ErrNotDeleting, req.Kind.Name, req.Name)
	}
	res := Result{Cloud: cloudObject(obj, req.Kind.CloudFields)}
	_, res.AlreadyReleased = obj.GetAnnotations()[AnnotationKeptCloud]
	record := Record(req.Now, req.Reason, res.Cloud)
	patch := map[string]any{
		"metadata": map[string]any{
			"annotations":     map[string]any{AnnotationKeptCloud: record},
			"resourceVersion": obj.GetResourceVersion(),
		},
		"spec": map[string]any{"managementPolicies": KeepCloudPolicies},
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return Result{}, fmt.Errorf("encoding the patch: %w", err)
	}
	if _, err := ri.Patch(ctx, req.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-edgeplane"}); err != nil {
		return Result{}, fmt.Errorf("releasing %s %s: %w", req.Kind.Name, req.Name, err)
	}
	return res, nil
}

// Record is the annotation's value.
func Record(now time.Time, reason, cloud string) string {
	s := "released at " + now.UTC().Format(time.RFC3339) + ", cloud side kept"
	if cloud != "" {
		s += " (" + cloud + ")"
	}
	if reason != "" {
		s += ": " + reason
	}
	return s
}

// cloudObject names the cloud object from the status fields.
func cloudObject(obj *unstructured.Unstructured, fields []string) string {
	var parts []string
	for _, f := range fields {
		if v, ok, _ := unstructured.NestedString(obj.Object, "status", f); ok && v != "" {
			parts = append(parts, f+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
