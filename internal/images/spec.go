// Package images builds the container images edgeplane ships and tests
// with, from this repository's sources and without a container daemon:
// edgeplane's own image (every command under cmd/), and the pause and
// podreport images the real-node tests run. It compiles static binaries
// with hack/build-image-binaries.sh and assembles them with
// internal/imagebuild, so `make image`, `make image-load` and tests get the
// same bytes from the same tree.
package images

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/imagebuild"
)

// Source is the repository the images' org.opencontainers.image.source
// label names.
const Source = "https://github.com/edgeplane/edgeplane"

// The references the test images' tarballs carry. They name no image
// anyone publishes: the nodes load them from tarballs, and pods name them
// with imagePullPolicy IfNotPresent or Never.
const (
	PauseRef     = "ghcr.io/edgeplane/test/pause:v1"
	PodReportRef = "ghcr.io/edgeplane/test/podreport:v1"
)

// Spec is one image: the Go packages compiled into it (each binary at
// /<its name>), how it runs, and the reference its tarball carries.
type Spec struct {
	// Name is the image's short name: bin/image/oci/<Name>/ and
	// bin/image/<Name>.tar.
	Name        string
	Ref         string
	Description string
	// Packages are compiled with hack/build-image-binaries.sh: Go package
	// patterns relative to the repository root.
	Packages   []string
	Entrypoint []string
	// User is numeric "uid:gid", so runAsNonRoot can be checked without the
	// image's /etc/passwd.
	User string
	// NonrootBase adds imagebuild.NonrootBase's layer (users, CA
	// certificates, /tmp) under the binaries.
	NonrootBase bool
}

var nonroot = fmt.Sprintf("%d:%d", imagebuild.NonrootUID, imagebuild.NonrootGID)

// Edgeplane is edgeplane's image: every command under cmd/, the manager as
// the entrypoint, on the nonroot base (the manager reaches the clouds'
// APIs over TLS). Its reference is the chart's default, so a chart
// installed with its default values runs the image a node loaded.
func Edgeplane(root string) (Spec, error) {
	ref, err := ChartDefaultImage(filepath.Join(root, "charts", "edgeplane"))
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Name:        "edgeplane",
		Ref:         ref,
		Description: "edgeplane-manager (the entrypoint), edgeplane-healthcheck, edgeplane-cni-ipam, edgeplane-cloudsim and kubectl-edgeplane",
		Packages:    []string{"./cmd/..."},
		Entrypoint:  []string{"/edgeplane-manager"},
		User:        nonroot,
		NonrootBase: true,
	}, nil
}

// Pause is the pod sandbox image for the real nodes (test/images/pause).
// Like Kubernetes' own it has no base and runs as 65535, a user that owns
// nothing.
func Pause() Spec {
	return Spec{
		Name:        "pause",
		Ref:         PauseRef,
		Description: "pod sandbox: sleeps until SIGTERM or SIGINT and reaps orphaned processes as PID 1",
		Packages:    []string{"./test/images/pause"},
		Entrypoint:  []string{"/pause"},
		User:        "65535:65535",
	}
}

// PodReport is the test workload (test/images/podreport): an HTTP server
// on :8080 that reports its pod and can be told to fail readiness.
func PodReport() Spec {
	return Spec{
		Name:        "podreport",
		Ref:         PodReportRef,
		Description: "test workload: reports its pod and interfaces over HTTP; readiness can be failed with `podreport fail-readiness`",
		Packages:    []string{"./test/images/podreport"},
		Entrypoint:  []string{"/podreport"},
		User:        nonroot,
		NonrootBase: true,
	}
}

// All is every image `make image` builds, edgeplane's first.
func All(root string) ([]Spec, error) {
	ep, err := Edgeplane(root)
	if err != nil {
		return nil, err
	}
	return []Spec{ep, Pause(), PodReport()}, nil
}

// ChartDefaultImage is the image reference the chart in chartDir renders
// with its default values: image.repository, and image.tag or, when that
// is empty, the chart's appVersion (the templates' own rule).
func ChartDefaultImage(chartDir string) (string, error) {
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"image"`
	}
	if err := readYAML(filepath.Join(chartDir, "Chart.yaml"), &chart); err != nil {
		return "", err
	}
	if err := readYAML(filepath.Join(chartDir, "values.yaml"), &values); err != nil {
		return "", err
	}
	tag := values.Image.Tag
	if tag == "" {
		tag = chart.AppVersion
	}
	if values.Image.Repository == "" || tag == "" {
		return "", fmt.Errorf("chart %s: no default image (image.repository %q, tag %q)", chartDir, values.Image.Repository, tag)
	}
	return values.Image.Repository + ":" + tag, nil
}

func readYAML(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	return nil
}
