package localcluster

import corev1 "k8s.io/api/core/v1"

// Object returns the Node that AddNode would create for spec, for callers
// that create many nodes at once with their own (faster) client.
func (spec NodeSpec) Object() *corev1.Node { return spec.node() }
