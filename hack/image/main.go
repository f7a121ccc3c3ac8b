// Command image builds edgeplane's container images without a container
// daemon (internal/images): edgeplane's own (every command under cmd/) and
// the pause and podreport test images.
//
//	go run ./hack/image -layout bin/image/oci     # make image: multi-platform OCI layouts
//	go run ./hack/image -tarballs bin/image       # make image-load: host-platform tarballs
//
// -layout writes <dir>/<name>/, an OCI image layout holding the image index
// (linux/amd64 and linux/arm64 by default) that `crane push <dir>/<name>
// <reference>` sends to a registry. -tarballs writes <dir>/<name>.tar for
// this machine's platform, tagged with the image's reference (edgeplane's is
// the chart's default), which `ctr -n k8s.io images import` loads; with
// -import <containerd socket> it imports them too. Each image's reference
// and digests are printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/edgeplane/edgeplane/internal/imagebuild"
	"github.com/edgeplane/edgeplane/internal/images"
)

func main() {
	layoutDir := flag.String("layout", "", "write each image's multi-platform index as an OCI layout <dir>/<name>/")
	tarballDir := flag.String("tarballs", "", "write each image for this machine's platform as <dir>/<name>.tar, loadable with `ctr images import`")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "platforms of the -layout index, comma-separated")
	only := flag.String("images", "", "build only these images, comma-separated (default all: edgeplane, pause, podreport)")
	workDir := flag.String("work", "bin/image/build", "where the binaries are compiled, kept between runs so go build relinks only what changed")
	importTo := flag.String("import", "", "with -tarballs: also import each tarball into the k8s.io namespace of the containerd at this socket (with ctr)")
	flag.Parse()
	if *importTo != "" && *tarballDir == "" {
		fmt.Fprintln(os.Stderr, "image: -import needs -tarballs")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, *layoutDir, *tarballDir, *platforms, *only, *workDir, *importTo); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, layoutDir, tarballDir, platformList, only, workDir, importTo string) error {
	if layoutDir == "" && tarballDir == "" {
		return errors.New("nothing to do: give -layout, -tarballs or both")
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	specs, err := selectSpecs(root, only)
	if err != nil {
		return err
	}
	platforms, err := parsePlatforms(platformList)
	if err != nil {
		return err
	}
	rev, err := images.RevisionOf(ctx, root)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(root, workDir)
	}
	b := images.Builder{Root: root, WorkDir: workDir, Revision: rev}
	_, _ = fmt.Fprintf(out, "version %s, commit %s, created %s\n", rev.Version, rev.Commit, rev.Created.Format(time.RFC3339))
	for _, spec := range specs {
		start := time.Now()
		if layoutDir != "" {
			if err := writeLayout(ctx, out, b, spec, platforms, filepath.Join(layoutDir, spec.Name)); err != nil {
				return err
			}
		}
		if tarballDir != "" {
			compiled := layoutDir != "" && slices.ContainsFunc(platforms, images.HostPlatform().Equals)
			path := filepath.Join(tarballDir, spec.Name+".tar")
			if err := writeTarball(ctx, out, b, spec, compiled, path); err != nil {
				return err
			}
			if importTo != "" {
				if err := ctrImport(ctx, out, importTo, path); err != nil {
					return err
				}
			}
		}
		_, _ = fmt.Fprintf(out, "  (%s in %s)\n", spec.Name, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

func writeLayout(ctx context.Context, out io.Writer, b images.Builder, spec images.Spec, platforms []v1.Platform, dir string) error {
	idx, err := b.Index(ctx, spec, platforms...)
	if err != nil {
		return err
	}
	if err := imagebuild.WriteLayout(dir, spec.Ref, idx); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "%s: %s (index %s) -> %s\n", spec.Name, spec.Ref, digest, dir)
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		_, _ = fmt.Fprintf(out, "  %s: %s\n", d.Platform, d.Digest)
	}
	return nil
}

// writeTarball writes the host platform's image, compiling it unless the
// layout's build already did.
func writeTarball(ctx context.Context, out io.Writer, b images.Builder, spec images.Spec, compiled bool, path string) error {
	host := images.HostPlatform()
	if !compiled {
		if err := b.Compile(ctx, spec, host); err != nil {
			return err
		}
	}
	img, err := b.Image(spec, host)
	if err != nil {
		return err
	}
	if err := imagebuild.WriteTarball(path, spec.Ref, img); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "%s: %s (%s, %s) -> %s\n", spec.Name, spec.Ref, host, digest, path)
	return nil
}

// ctrImport loads a tarball into the namespace the kubelet's CRI uses.
func ctrImport(ctx context.Context, out io.Writer, address, path string) error {
	cmd := exec.CommandContext(ctx, "ctr", "--address", address, "--namespace", "k8s.io", "images", "import", path)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ctr images import %s into %s: %w", path, address, err)
	}
	return nil
}

func selectSpecs(root, only string) ([]images.Spec, error) {
	all, err := images.All(root)
	if err != nil {
		return nil, err
	}
	if only == "" {
		return all, nil
	}
	var picked []images.Spec
	for name := range strings.SplitSeq(only, ",") {
		i := slices.IndexFunc(all, func(s images.Spec) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown image %q: want edgeplane, pause or podreport", name)
		}
		picked = append(picked, all[i])
	}
	return picked, nil
}

func parsePlatforms(list string) ([]v1.Platform, error) {
	var out []v1.Platform
	for s := range strings.SplitSeq(list, ",") {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, err
		}
		if p.OS != "linux" || p.Variant != "" || p.OSVersion != "" {
			return nil, fmt.Errorf("platform %q: want linux/<arch>", s)
		}
		out = append(out, *p)
	}
	return out, nil
}
