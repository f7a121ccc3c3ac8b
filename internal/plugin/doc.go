// Package plugin implements kubectl-edgeplane, the kubectl plugin.
package plugin

import (
	// The plugin's kubeconfig flags and printers (kubectl conventions).
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
)
