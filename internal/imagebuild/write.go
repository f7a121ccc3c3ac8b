package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefNameAnnotation names an image in an OCI layout's index.json.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout whose index.json lists
// one entry, idx, named ref: what `crane push dir <reference>` (or
// layout.ImageIndexFromPath and remote.WriteIndex) sends to a registry. It
// is written next to dir and renamed, so dir is never half-written and no
// blob of an earlier build lingers in it.
func WriteLayout(dir, ref string, idx v1.ImageIndex) error {
	if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
		return fmt.Errorf("image reference: %w", err)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("creating the layout %s: %w", tmp, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref})); err != nil {
		return fmt.Errorf("writing %s into the layout %s: %w", ref, tmp, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// WriteTarball writes img to path as a docker-archive tarball tagged ref
// (manifest.json, the config and gzip-compressed layers), the format
// `ctr -n k8s.io images import`, `docker load` and `podman load` accept. It
// is written next to path and renamed, so a reader never sees half of it.
func WriteTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image reference: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s to %s: %w", ref, tmp, err)
	}
	return os.Rename(tmp, path)
}
