// Package apis registers every edgeplane API group, so a Go program can build
// one scheme that knows all of edgeplane's kinds.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// AddToSchemes lists the AddToScheme functions of every API group.
var AddToSchemes = runtime.SchemeBuilder{
	appsv1alpha1.AddToScheme,
	cloudv1alpha1.AddToScheme,
	networkingv1alpha1.AddToScheme,
	schedulingv1alpha1.AddToScheme,
}

// AddToScheme adds every edgeplane kind to s.
func AddToScheme(s *runtime.Scheme) error {
	return AddToSchemes.AddToScheme(s)
}
