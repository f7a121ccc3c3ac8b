package imagebuild

import (
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

func testImage(t *testing.T, p v1.Platform, binary string) v1.Image {
	t.Helper()
	base, err := Layer(NonrootBase(), testTime)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Layer([]File{{Path: "/app", Mode: 0o755, Content: []byte(binary)}}, testTime)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Image(p, testTime.Add(500*time.Millisecond), Config{
		Entrypoint: []string{"/app"},
		User:       "65532:65532",
		Env:        []string{"PATH=/"},
		Labels:     map[string]string{"org.opencontainers.image.version": "v1.2.3"},
	}, LayerSpec{Layer: base, CreatedBy: "base"}, LayerSpec{Layer: bin, CreatedBy: "binaries"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestImageConfigRunsTheEntrypointAsTheUserWithTheLabels(t *testing.T) {
	img := testImage(t, arm64, "arm64 app")
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "arm64" {
		t.Errorf("platform %s/%s, want linux/arm64", cf.OS, cf.Architecture)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{"/app"}) || c.User != "65532:65532" || !slices.Equal(c.Env, []string{"PATH=/"}) ||
		c.Labels["org.opencontainers.image.version"] != "v1.2.3" {
		t.Errorf("config %+v", c)
	}
	if !cf.Created.Time.Equal(testTime) {
		t.Errorf("created %s, want %s (whole seconds)", cf.Created, testTime)
	}
	if len(cf.History) != 2 || cf.History[0].CreatedBy != "base" || cf.History[1].CreatedBy != "binaries" ||
		!cf.History[1].Created.Time.Equal(testTime) {
		t.Errorf("history %+v, want one entry per layer dated %s", cf.History, testTime)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 || len(cf.RootFS.DiffIDs) != 2 {
		t.Fatalf("%d layers, %d diff IDs, want 2", len(layers), len(cf.RootFS.DiffIDs))
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("media types %s / %s, want OCI's", m.MediaType, m.Config.MediaType)
	}
	for _, l := range m.Layers {
		if l.MediaType != types.OCILayer {
			t.Errorf("layer media type %s", l.MediaType)
		}
	}
}

func TestIndexListsEachPlatformOnce(t *testing.T) {
	idx, err := Index(map[string]string{"org.opencontainers.image.source": "https://example.com/src"},
		testImage(t, amd64, "amd64 app"), testImage(t, arm64, "arm64 app"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex || m.Annotations["org.opencontainers.image.source"] != "https://example.com/src" {
		t.Errorf("index media type %s, annotations %v", m.MediaType, m.Annotations)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("%d manifests, want 2", len(m.Manifests))
	}
	for i, want := range []v1.Platform{amd64, arm64} {
		d := m.Manifests[i]
		if d.Platform == nil || !d.Platform.Equals(want) {
			t.Errorf("manifest %d platform %v, want %v", i, d.Platform, want)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != want.Architecture {
			t.Errorf("manifest %d's image is %s", i, cf.Architecture)
		}
	}
	if m.Manifests[0].Digest == m.Manifests[1].Digest {
		t.Error("both platforms have the same image")
	}
}
