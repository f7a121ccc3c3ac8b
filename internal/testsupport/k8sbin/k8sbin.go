// Package k8sbin locates the local control-plane binaries (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kubectl, kwok) that `make k8s-bin`
// builds from their Go modules into bin/k8s/<version>/.
package k8sbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Version is the Kubernetes version the local control plane is built at.
const Version = "v1.37.0"

// EnvDir overrides where the binaries are looked for.
const EnvDir = "EDGEPLANE_K8S_BIN_DIR"

// Dir returns the folder holding the control-plane binaries. It fails, naming
// the make target that builds them, when kube-apiserver or etcd is missing.
func Dir() (string, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s", Version)
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("control-plane binary %s not found in %s (run `make k8s-bin`): %w", name, dir, err)
		}
	}
	return dir, nil
}

// Path returns the path of one binary in Dir, failing if it is not there.
func Path(name string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("control-plane binary %s not found in %s (run `make k8s-bin`): %w", name, dir, err)
	}
	return p, nil
}

// RepoRoot returns the repository root: the nearest folder above this source
// file that holds go.mod. Tests run from many package folders, so a relative
// path would not do.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot determine the source location of package k8sbin")
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if parent := filepath.Dir(dir); parent == dir {
			return "", fmt.Errorf("no go.mod above %s", file)
		}
	}
}
