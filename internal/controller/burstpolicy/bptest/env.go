// Package bptest holds what the BurstPolicy end-to-end tests share: the
// paths of the scheduling.edgeplane.io CRDs, which they install into the local
// cluster (the envtest integration tests use internal/testenv, which installs
// every CRD).
package bptest

import (
	"fmt"
	"path/filepath"

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
