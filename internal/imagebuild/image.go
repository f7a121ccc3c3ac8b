package imagebuild

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Config is what an image runs and says about itself.
type Config struct {
	Entrypoint []string
	// User is "uid:gid", numeric, so the kubelet can check runAsNonRoot
	// without reading the image's /etc/passwd.
	User   string
	Env    []string
	Labels map[string]string
}

// LayerSpec is a layer and the note its history entry carries.
type LayerSpec struct {
	Layer     v1.Layer
	CreatedBy string
}

// Image returns the OCI image for platform: cfg on an empty base with
// layers (base first), created at created, which also dates every history
// entry, so nothing in it depends on when it was built.
func Image(platform v1.Platform, created time.Time, cfg Config, layers ...LayerSpec) (v1.Image, error) {
	stamp := v1.Time{Time: created.UTC().Truncate(time.Second)}
	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: platform.Architecture,
		OS:           platform.OS,
		Variant:      platform.Variant,
		Created:      stamp,
		Config: v1.Config{
			Entrypoint: cfg.Entrypoint,
			User:       cfg.User,
			Env:        cfg.Env,
			Labels:     cfg.Labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	adds := make([]mutate.Addendum, 0, len(layers))
	for _, l := range layers {
		adds = append(adds, mutate.Addendum{
			Layer:   l.Layer,
			History: v1.History{Created: stamp, CreatedBy: l.CreatedBy},
		})
	}
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// Index returns the OCI image index of images, each listed with the
// platform its config names, in the order given, and annotations on the
// index (what a registry shows for the multi-platform image).
func Index(annotations map[string]string, images ...v1.Image) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(images))
	for _, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("reading an image's config: %w", err)
		}
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	if len(annotations) > 0 {
		idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)
	}
	return idx, nil
}
