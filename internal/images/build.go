package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/edgeplane/edgeplane/internal/imagebuild"
)

// Revision is the tree an image is built from: what its labels say and the
// one timestamp in it.
type Revision struct {
	// Version is stamped into the binaries (main.version) and the
	// org.opencontainers.image.version label.
	Version string
	// Commit is the org.opencontainers.image.revision label; may be empty.
	Commit string
	// Created dates the image, its history and every file in its layers.
	Created time.Time
}

// RevisionOf reads root's git state: VERSION, or `git describe --tags
// --always --dirty`; the commit HEAD names; and SOURCE_DATE_EPOCH, or
// HEAD's commit time (the reproducible-builds convention: the same commit
// gives the same timestamps, however often it is built).
func RevisionOf(ctx context.Context, root string) (Revision, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), root, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var r Revision
	var err error
	if r.Version = os.Getenv("VERSION"); r.Version == "" {
		if r.Version, err = git("describe", "--tags", "--always", "--dirty"); err != nil {
			return Revision{}, err
		}
	}
	if r.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return Revision{}, err
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct"); err != nil {
			return Revision{}, err
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return Revision{}, fmt.Errorf("the build's timestamp %q: %w", epoch, err)
	}
	r.Created = time.Unix(secs, 0).UTC()
	return r, nil
}

// Builder compiles and assembles images of the repository at Root.
type Builder struct {
	Root string
	// WorkDir holds the compiled binaries, WorkDir/<image>/<os>_<arch>/.
	// The images read them when written, so it must outlive the writes.
	WorkDir  string
	Revision Revision
}

// Compile builds spec's binaries for every platform with one run of
// hack/build-image-binaries.sh.
func (b Builder) Compile(ctx context.Context, spec Spec, platforms ...v1.Platform) error {
	args := []string{filepath.Join(b.Root, "hack", "build-image-binaries.sh")}
	for _, p := range platforms {
		args = append(args, p.OS+"/"+p.Architecture)
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	// go build's compilers and linkers are the script's grandchildren: a
	// group of their own lets a cancelled build stop all of them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = b.Root
	cmd.Env = append(os.Environ(),
		"IMAGE_BIN_DIR="+filepath.Join(b.WorkDir, spec.Name),
		"IMAGE_PACKAGES="+strings.Join(spec.Packages, " "),
		"VERSION="+b.Revision.Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling the %s image's binaries for %v: %w\n%s", spec.Name, platforms, err, out)
	}
	return nil
}

func (b Builder) binDir(spec Spec, p v1.Platform) string {
	return filepath.Join(b.WorkDir, spec.Name, p.OS+"_"+p.Architecture)
}

// Image assembles spec's image for platform from the binaries Compile
// built: the nonroot base's layer if spec has one, then one layer with
// every binary at /<name> (root's, 0755).
func (b Builder) Image(spec Spec, platform v1.Platform) (v1.Image, error) {
	dir := b.binDir(spec, platform)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the %s image's binaries (run Compile first): %w", spec.Name, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no binaries in %s", dir)
	}
	var bins []imagebuild.File
	for _, e := range entries {
		bins = append(bins, imagebuild.File{Path: "/" + e.Name(), Mode: 0o755, Source: filepath.Join(dir, e.Name())})
	}
	created := b.Revision.Created
	var layers []imagebuild.LayerSpec
	if spec.NonrootBase {
		base, err := imagebuild.Layer(imagebuild.NonrootBase(), created)
		if err != nil {
			return nil, err
		}
		layers = append(layers, imagebuild.LayerSpec{Layer: base, CreatedBy: "imagebuild.NonrootBase: users root, nobody and nonroot; CA certificates; /tmp"})
	}
	binLayer, err := imagebuild.Layer(bins, created)
	if err != nil {
		return nil, fmt.Errorf("the %s image's binaries: %w", spec.Name, err)
	}
	layers = append(layers, imagebuild.LayerSpec{Layer: binLayer, CreatedBy: "hack/build-image-binaries.sh " + strings.Join(spec.Packages, " ")})
	return imagebuild.Image(platform, created, imagebuild.Config{
		Entrypoint: spec.Entrypoint,
		User:       spec.User,
		// The binaries are the only programs and they live in /, so
		// `kubectl exec <pod> -- podreport recover` finds them.
		Env:    []string{"PATH=/"},
		Labels: b.annotations(spec),
	}, layers...)
}

// annotations are the OCI annotations both the images' labels and the
// index carry.
func (b Builder) annotations(spec Spec) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       spec.Name,
		"org.opencontainers.image.description": spec.Description,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.version":     b.Revision.Version,
		"org.opencontainers.image.created":     b.Revision.Created.UTC().Format(time.RFC3339),
	}
	if b.Revision.Commit != "" {
		a["org.opencontainers.image.revision"] = b.Revision.Commit
	}
	return a
}

// Index compiles spec for platforms and returns the image index a
// registry receives: one image per platform, in the order given.
func (b Builder) Index(ctx context.Context, spec Spec, platforms ...v1.Platform) (v1.ImageIndex, error) {
	if err := b.Compile(ctx, spec, platforms...); err != nil {
		return nil, err
	}
	imgs := make([]v1.Image, 0, len(platforms))
	for _, p := range platforms {
		img, err := b.Image(spec, p)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	return imagebuild.Index(b.annotations(spec), imgs...)
}

// Platforms are the platforms `make image` builds for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// HostPlatform is the platform of the machine the tests' nodes run on.
func HostPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// HostTarball compiles spec for this machine's architecture and writes
// the tarball `ctr -n k8s.io images import` loads to path, tagged spec.Ref.
// The binaries are compiled in a temporary directory removed on return.
func HostTarball(ctx context.Context, root, path string, spec Spec) error {
	rev, err := RevisionOf(ctx, root)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "edgeplane-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	b := Builder{Root: root, WorkDir: work, Revision: rev}
	if err := b.Compile(ctx, spec, HostPlatform()); err != nil {
		return err
	}
	img, err := b.Image(spec, HostPlatform())
	if err != nil {
		return err
	}
	return imagebuild.WriteTarball(path, spec.Ref, img)
}
