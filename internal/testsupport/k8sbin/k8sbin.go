// Package k8sbin locates the local cluster's binaries: the control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl,
// kwok) that `make k8s-bin` builds from their Go modules into
// bin/k8s/<version>/, the real nodes' kubelet and kube-proxy that `make
// k8s-node-bin` builds there too, and the reference CNI plugins of `make
// cni-plugins`.
package k8sbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// EnvCNIDir overrides where the reference CNI plugins are looked for.
const EnvCNIDir = "EDGEPLANE_CNI_BIN_DIR"

// CNIDir returns the folder of the reference CNI plugins `make
// cni-plugins` builds from the version hack/cni/go.mod pins
// (bin/cni/<version>), failing, with the make target to run, when one of
// plugins is missing.
func CNIDir(plugins ...string) (string, error) {
	dir := os.Getenv(EnvCNIDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		mod, err := os.ReadFile(filepath.Join(root, "hack", "cni", "go.mod"))
		if err != nil {
			return "", fmt.Errorf("reading the CNI plugins' version: %w", err)
		}
		m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/containernetworking/plugins (v\S+)`).FindSubmatch(mod)
		if m == nil {
			return "", errors.New("hack/cni/go.mod pins no github.com/containernetworking/plugins version")
		}
		dir = filepath.Join(root, "bin", "cni", string(m[1]))
	}
	for _, name := range plugins {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("CNI plugin %s not found in %s (run `make cni-plugins`): %w", name, dir, err)
		}
	}
	return dir, nil
}
