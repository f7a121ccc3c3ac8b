package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/edgeplane/edgeplane/internal/imagebuild"
)

// layerFile is a file as one layer of an image holds it.
type layerFile struct {
	layer   int
	hdr     *tar.Header
	content []byte
}

func imageFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]layerFile{}
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = layerFile{i, hdr, b}
		}
		_ = rc.Close()
	}
	return files
}

// checkBinary checks that a layer's file is root's 0755 static executable
// for platform.
func checkBinary(t *testing.T, name string, f layerFile, p v1.Platform) {
	t.Helper()
	if f.hdr == nil {
		t.Errorf("%s is not in the image", name)
		return
	}
	if f.hdr.Mode != 0o755 || f.hdr.Uid != 0 || f.hdr.Gid != 0 {
		t.Errorf("%s: mode %o, owner %d:%d, want root's 0755", name, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid)
	}
	bin, err := elf.NewFile(bytes.NewReader(f.content))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Architecture]
	if bin.Machine != want {
		t.Errorf("%s in the %s image is built for %v", name, p, bin.Machine)
	}
	for _, prog := range bin.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v)", name, prog.Type)
		}
	}
}

func checkConfig(t *testing.T, img v1.Image, spec Spec, p v1.Platform, rev Revision) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != p.OS || cf.Architecture != p.Architecture || c.User != spec.User || !slices.Equal(c.Entrypoint, spec.Entrypoint) {
		t.Errorf("%s for %s: config %s/%s user %q entrypoint %q", spec.Name, p, cf.OS, cf.Architecture, c.User, c.Entrypoint)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.version":  rev.Version,
		"org.opencontainers.image.revision": rev.Commit,
		"org.opencontainers.image.created":  rev.Created.Format(time.RFC3339),
		"org.opencontainers.image.title":    spec.Name,
	} {
		if c.Labels[k] != want {
			t.Errorf("%s: label %s = %q, want %q", spec.Name, k, c.Labels[k], want)
		}
	}
	if !cf.Created.Time.Equal(rev.Created) {
		t.Errorf("%s: created %s, want %s", spec.Name, cf.Created, rev.Created)
	}
}

var testRevision = Revision{Version: "v0.0.0-test", Commit: "0123456789abcdef0123456789abcdef01234567", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

// buildLayouts compiles the test images for both platforms in a work
// directory of its own and writes their layouts under out.
func buildLayouts(t *testing.T, out string, specs ...Spec) map[string]v1.ImageIndex {
	t.Helper()
	b := Builder{Root: repoRoot, WorkDir: t.TempDir(), Revision: testRevision}
	idxs := map[string]v1.ImageIndex{}
	for _, spec := range specs {
		idx, err := b.Index(context.Background(), spec, Platforms...)
		if err != nil {
			t.Fatal(err)
		}
		if err := imagebuild.WriteLayout(filepath.Join(out, spec.Name), spec.Ref, idx); err != nil {
			t.Fatal(err)
		}
		idxs[spec.Name] = idx
	}
	return idxs
}

// TestTestImagesAreReproducibleMultiPlatformIndexes compiles the pause and
// podreport images for linux/amd64 and linux/arm64 twice, from scratch each
// time: the layouts are byte for byte the same, and each holds an index of
// both platforms whose images run their static binary as their user.
func TestTestImagesAreReproducibleMultiPlatformIndexes(t *testing.T) {
	specs := []Spec{Pause(), PodReport()}
	first, second := t.TempDir(), t.TempDir()
	idxs := buildLayouts(t, first, specs...)
	buildLayouts(t, second, specs...)
	if diff := compareTrees(t, first, second); diff != "" {
		t.Errorf("two builds differ: %s", diff)
	}

	for _, spec := range specs {
		l, err := layout.ImageIndexFromPath(filepath.Join(first, spec.Name))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := idxs[spec.Name].Digest()
		idx, err := l.ImageIndex(want)
		if err != nil {
			t.Fatalf("%s: the layout does not hold index %s: %v", spec.Name, want, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Manifests) != len(Platforms) {
			t.Fatalf("%s: %d manifests, want %d", spec.Name, len(m.Manifests), len(Platforms))
		}
		for i, p := range Platforms {
			if !m.Manifests[i].Platform.Equals(p) {
				t.Errorf("%s: manifest %d is for %v, want %v", spec.Name, i, m.Manifests[i].Platform, p)
			}
			img, err := idx.Image(m.Manifests[i].Digest)
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, img, spec, p, testRevision)
			files := imageFiles(t, img)
			bin := spec.Entrypoint[0][1:]
			checkBinary(t, bin, files[bin], p)
			if spec.NonrootBase {
				if _, ok := files["etc/passwd"]; !ok {
					t.Errorf("%s has no /etc/passwd", spec.Name)
				}
				if files[bin].layer != 1 {
					t.Errorf("%s: the binary is in layer %d, want 1, above the base", spec.Name, files[bin].layer)
				}
			} else if len(files) != 1 {
				t.Errorf("%s holds %d files, want only %s", spec.Name, len(files), bin)
			}
		}
	}
}

// compareTrees returns how the files under a and b differ, or "".
func compareTrees(t *testing.T, a, b string) string {
	t.Helper()
	read := func(root string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	fa, fb := read(a), read(b)
	if len(fa) == 0 {
		return "no files in " + a
	}
	for name, ca := range fa {
		cb, ok := fb[name]
		if !ok {
			return name + " is only in the first"
		}
		if !bytes.Equal(ca, cb) {
			return name + " differs"
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			return name + " is only in the second"
		}
	}
	return ""
}
