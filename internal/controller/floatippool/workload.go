package floatippool

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// AnnotationWorkload records on a FloatIP the apiVersion and kind of the
// custom workload that owns its pod ("apps.example.com/v1/TApp"), so that
// the release decision can read the workload's replicas through its CRD's
// scale subresource, as galaxy does for custom workloads.
const AnnotationWorkload = "networking.edgeplane.io/workload"

// Read-only: a custom workload's CRD tells where its scale subresource keeps replicas.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// workloadOf formats an owner for AnnotationWorkload ("" for built-in kinds).
func workloadOf(o ipam.Owner) string {
	switch o.Kind {
	case "", "Deployment", "StatefulSet":
		return ""
	}
	return o.APIVersion + "/" + o.Kind
}

// customWorkload reads a custom workload through its CRD: whether it
// exists, its replicas from the scale subresource's specReplicasPath, and
// whether the CRD has one. Reading the workload needs get permission on its
// kind, which the operator grants per kind (see docs/floatippool.md).
func customWorkload(ctx context.Context, c client.Reader, mapper meta.RESTMapper, workload, namespace, name string) (ipam.Workload, error) {
	i := strings.LastIndex(workload, "/")
	if i <= 0 {
		return ipam.Workload{}, fmt.Errorf("workload %q is not <apiVersion>/<Kind>", workload)
	}
	gv, err := schema.ParseGroupVersion(workload[:i])
	if err != nil {
		return ipam.Workload{}, fmt.Errorf("workload %q: %w", workload, err)
	}
	gvk := gv.WithKind(workload[i+1:])
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return ipam.Workload{}, fmt.Errorf("finding the resource of %s: %w", gvk, err)
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: mapping.Resource.Resource + "." + gvk.Group}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return ipam.Workload{}, nil // not a CRD: no scale subresource galaxy can read
		}
		return ipam.Workload{}, fmt.Errorf("getting the CRD of %s: %w", gvk, err)
	}
	path := specReplicasPath(crd, gvk.Version)
	if path == "" {
		return ipam.Workload{}, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ipam.Workload{HasScale: true}, nil
		}
		return ipam.Workload{}, fmt.Errorf("getting %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	replicas, found, err := unstructured.NestedInt64(obj.Object, strings.Split(strings.TrimPrefix(path, "."), ".")...)
	if err != nil || !found {
		replicas = 1 // galaxy treats a missing count as the API default
	}
	return ipam.Workload{Exists: true, Replicas: replicas, HasScale: true}, nil
}

// specReplicasPath returns the scale subresource's specReplicasPath of a
// CRD version, or "".
func specReplicasPath(crd *unstructured.Unstructured, version string) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok || m["name"] != version {
			continue
		}
		p, _, _ := unstructured.NestedString(m, "subresources", "scale", "specReplicasPath")
		return p
	}
	return ""
}
