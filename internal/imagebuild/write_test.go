package imagebuild

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const testRef = "ghcr.io/edgeplane/test/app:v1"

func TestWriteTarballIsADockerArchiveTaggedWithTheReference(t *testing.T) {
	img := testImage(t, amd64, "app")
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a", "app.tar"), filepath.Join(dir, "b", "app.tar")
	for _, p := range []string{first, second} {
		if err := WriteTarball(p, testRef, img); err != nil {
			t.Fatal(err)
		}
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(second); err != nil || !bytes.Equal(a, b) {
		t.Errorf("two tarballs of one image differ (%v)", err)
	}

	// manifest.json names the tag, the config and the layers, as docker
	// load and ctr import read it.
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(tarEntry(t, a, "manifest.json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != testRef || len(manifest[0].Layers) != 2 {
		t.Fatalf("manifest.json %+v, want one image tagged %s with 2 layers", manifest, testRef)
	}

	tag, err := name.NewTag(testRef)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := tarball.ImageFromPath(first, &tag)
	if err != nil {
		t.Fatal(err)
	}
	wantConfig, _ := img.ConfigName()
	if got, err := loaded.ConfigName(); err != nil || got != wantConfig {
		t.Errorf("loaded image's config %s (%v), want %s", got, err, wantConfig)
	}
	if _, err := os.Stat(first + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
}

func TestWriteTarballRefusesAReferenceWithoutATag(t *testing.T) {
	for _, ref := range []string{"ghcr.io/edgeplane/app@sha256:" + string(bytes.Repeat([]byte("0"), 64)), "Not A Ref"} {
		if err := WriteTarball(filepath.Join(t.TempDir(), "x.tar"), ref, testImage(t, amd64, "app")); err == nil {
			t.Errorf("WriteTarball(%q) = nil, want an error", ref)
		}
	}
}

func tarEntry(t *testing.T, archive []byte, name string) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the archive: %v", name, err)
		}
		if hdr.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// TestWriteLayoutHoldsWhatARegistryReceives writes a layout, reads it back
// the way `crane push <dir> <reference>` does (index.json's one entry) and
// pushes it to an in-process registry: the registry serves the index under
// the same digest, with both platforms.
func TestWriteLayoutHoldsWhatARegistryReceives(t *testing.T) {
	idx, err := Index(nil, testImage(t, amd64, "amd64 app"), testImage(t, arm64, "arm64 app"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "app")
	// Twice: the second replaces the first.
	for range 2 {
		if err := WriteLayout(dir, testRef, idx); err != nil {
			t.Fatal(err)
		}
	}

	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != want || top.Manifests[0].Annotations[RefNameAnnotation] != testRef {
		t.Fatalf("index.json %+v, want one entry: %s named %s", top.Manifests, want, testRef)
	}
	child, err := l.ImageIndex(want)
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(u.Host + "/edgeplane/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, child); err != nil {
		t.Fatalf("pushing the layout's index: %v", err)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pulled.Digest(); err != nil || got != want {
		t.Errorf("the registry serves %s (%v), want %s", got, err, want)
	}
	m, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 || !m.Manifests[0].Platform.Equals(amd64) || !m.Manifests[1].Platform.Equals(arm64) {
		t.Errorf("the registry's index lists %+v, want linux/amd64 and linux/arm64", m.Manifests)
	}
	if _, err := os.Stat(dir + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary layout is left behind: %v", err)
	}
}
