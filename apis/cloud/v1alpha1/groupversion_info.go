package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group is the API group of this package.
const Group = "cloud.edgeplane.io"

var (
	// GroupVersion is the group and version of this package's kinds.
	GroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

	// SchemeGroupVersion is GroupVersion under the name code-generator's clients use.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder registers this package's kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource, as generated listers expect.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
