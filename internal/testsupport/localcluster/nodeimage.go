package localcluster

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// NodeImage is a container image the real nodes load without a registry:
// an archive `ctr images import` reads (a docker-archive or OCI tarball)
// and the reference it holds, which pods name with imagePullPolicy Never
// or IfNotPresent.
type NodeImage struct {
	Archive string
	Ref     string
}

// NodetestRef is the reference of the image BuildNodetestImage writes.
const NodetestRef = "localcluster.local/nodetest:v1"

// BuildNodetestImage builds test/images/nodetest (a static binary) for
// this machine's architecture into dir and writes an image holding only
// /nodetest: its default command, `nodetest pause`, makes it the pod
// sandbox image, and pods run its other commands (serve, get, addrs).
func BuildNodetestImage(ctx context.Context, dir string) (NodeImage, error) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		return NodeImage{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return NodeImage{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	bin := filepath.Join(dir, "nodetest")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./test/images/nodetest")
	build.Dir = root
	// Static, for an image with no libc; the caller's GOFLAGS (a test
	// run's build tags) are not this program's.
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		return NodeImage{}, fmt.Errorf("building test/images/nodetest: %w: %s", err, out)
	}
	img := NodeImage{Archive: filepath.Join(dir, "nodetest.tar"), Ref: NodetestRef}
	if err := writeSingleBinaryImage(img, bin, "/nodetest", []string{"pause"}); err != nil {
		return NodeImage{}, err
	}
	return img, nil
}

// writeSingleBinaryImage writes img.Archive: a docker-archive of one layer
// holding bin at path, run as the entrypoint with cmd as its arguments.
func writeSingleBinaryImage(img NodeImage, bin, path string, cmd []string) error {
	content, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading %s: %w", bin, err)
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	// A fixed time keeps the layer's digest a function of the binary only.
	hdr := &tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(content)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the layer of %s: %w", img.Ref, err)
	}
	if _, err := tw.Write(content); err != nil {
		return fmt.Errorf("writing the layer of %s: %w", img.Ref, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("writing the layer of %s: %w", img.Ref, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return fmt.Errorf("building the layer of %s: %w", img.Ref, err)
	}
	image, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("building %s: %w", img.Ref, err)
	}
	cfg, err := image.ConfigFile()
	if err != nil {
		return fmt.Errorf("building %s: %w", img.Ref, err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = v1.Config{Entrypoint: []string{path}, Cmd: cmd}
	image, err = mutate.ConfigFile(image, cfg)
	if err != nil {
		return fmt.Errorf("building %s: %w", img.Ref, err)
	}
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", img.Ref, err)
	}
	if err := tarball.WriteToFile(img.Archive, tag, image); err != nil {
		return fmt.Errorf("writing %s: %w", img.Archive, err)
	}
	return nil
}
