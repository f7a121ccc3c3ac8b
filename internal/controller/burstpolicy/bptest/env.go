// Package bptest holds what the BurstPolicy tests share: the paths of the
// scheduling.edgeplane.io CRDs, which the end-to-end tests install into the
// local cluster (the envtest integration tests use internal/testenv, which
// installs every CRD), and a third-party kind with a scale subresource.
package bptest

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/k8sbin"
)

// CRDPaths returns the files of the scheduling.edgeplane.io CRDs.
func CRDPaths() ([]string, error) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "scheduling.edgeplane.io_*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("finding the scheduling CRDs: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no scheduling.edgeplane.io CRDs in %s", filepath.Join(root, "config", "crd", "bases"))
	}
	return paths, nil
}

// WidgetGVK is the kind of WidgetCRD.
var WidgetGVK = schema.GroupVersionKind{Group: "burst.example.com", Version: "v1", Kind: "Widget"}

// WidgetCRD is a namespaced kind with a scale subresource (replicas at
// spec.replicas, the pods' selector at status.selector) and a pod template
// at spec.template, as a third-party workload controller defines one: the
// tests' stand-in for "any kind with a scale subresource".
func WidgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.burst.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: WidgetGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: WidgetGVK.Kind, ListKind: WidgetGVK.Kind + "List"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: WidgetGVK.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{
						SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.selector"),
					},
				},
			}},
		},
	}
}

// InstallWidgetCRD creates WidgetCRD (if missing, once an earlier copy has
// finished terminating) and waits until it is established. It returns a function that deletes it.
func InstallWidgetCRD(ctx context.Context, cfg *rest.Config) (uninstall func(context.Context) error, err error) {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building a scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	// A CRD a previous run deleted may still be terminating: wait it out,
	// then create it, then wait until it is established.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		switch err := c.Get(ctx, client.ObjectKeyFromObject(WidgetCRD()), crd); {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, WidgetCRD()); err != nil && !apierrors.IsAlreadyExists(err) {
				return false, fmt.Errorf("creating the Widget CRD: %w", err)
			}
			return false, nil
		case err != nil || crd.DeletionTimestamp != nil:
			return false, nil
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the Widget CRD to be established: %w", err)
	}
	return func(ctx context.Context) error { return client.IgnoreNotFound(c.Delete(ctx, WidgetCRD())) }, nil
}

// NewWidget returns a Widget of replicas whose pod template carries
// annotations.
func NewWidget(namespace, name string, replicas int64, annotations map[string]string) (*unstructured.Unstructured, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(WidgetGVK)
	w.SetNamespace(namespace)
	w.SetName(name)
	if err := unstructured.SetNestedField(w.Object, replicas, "spec", "replicas"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedStringMap(w.Object, annotations, "spec", "template", "metadata", "annotations"); err != nil {
		return nil, err
	}
	return w, nil
}
