package imagebuild

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testTime = time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)

// entry is what a test reads back of a tar entry.
type entry struct {
	name     string
	typeflag byte
	mode     int64
	uid, gid int
	mtime    time.Time
	content  string
}

func readLayer(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var out []entry
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid, hdr.ModTime.UTC(), string(b)})
	}
}

func writeSource(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLayerHoldsTheFilesWithTheirModesOwnersAndOneTimestamp(t *testing.T) {
	src := writeSource(t, "\x7fELF binary")
	l, err := Layer([]File{
		{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{Path: "/usr/bin/tool", Mode: 0o755, Source: src},
		{Path: "/etc/passwd", Mode: 0o644, Content: []byte("root:x:0:0::/:\n")},
		{Path: "/home/nonroot", Mode: fs.ModeDir | 0o700, UID: 65532, GID: 65532},
	}, testTime.Add(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := l.MediaType(); mt != types.OCILayer {
		t.Errorf("media type %s, want %s", mt, types.OCILayer)
	}
	want := []entry{
		{"etc/", tar.TypeDir, 0o755, 0, 0, testTime, ""},
		{"etc/passwd", tar.TypeReg, 0o644, 0, 0, testTime, "root:x:0:0::/:\n"},
		{"home/", tar.TypeDir, 0o755, 0, 0, testTime, ""},
		{"home/nonroot/", tar.TypeDir, 0o700, 65532, 65532, testTime, ""},
		{"tmp/", tar.TypeDir, 0o1777, 0, 0, testTime, ""},
		{"usr/", tar.TypeDir, 0o755, 0, 0, testTime, ""},
		{"usr/bin/", tar.TypeDir, 0o755, 0, 0, testTime, ""},
		// The source file is 0600 and the test's own on disk: the layer
		// says 0755 and root.
		{"usr/bin/tool", tar.TypeReg, 0o755, 0, 0, testTime, "\x7fELF binary"},
	}
	got := readLayer(t, l)
	if len(got) != len(want) {
		t.Fatalf("entries:\n%v\nwant\n%v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestLayerDependsOnlyOnContentsNotOnTheSourceFilesDates(t *testing.T) {
	src := writeSource(t, "binary v1")
	files := []File{{Path: "/b", Mode: 0o755, Source: src}, {Path: "/a", Mode: 0o644, Content: []byte("a")}}
	digest := func() v1.Hash {
		t.Helper()
		l, err := Layer(files, testTime)
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest()
	if err := os.Chtimes(src, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o700); err != nil {
		t.Fatal(err)
	}
	files[0], files[1] = files[1], files[0]
	if again := digest(); again != first {
		t.Errorf("digest changed with the source's date, mode and the list's order: %s then %s", first, again)
	}
	if err := os.WriteFile(src, []byte("binary v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if changed := digest(); changed == first {
		t.Errorf("digest %s did not change with the source's content", changed)
	}
}

func TestLayerRefusesBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  string
	}{
		{"relative path", []File{{Path: "etc/passwd", Mode: 0o644}}, "absolute, clean"},
		{"unclean path", []File{{Path: "/etc/../passwd", Mode: 0o644}}, "absolute, clean"},
		{"the root", []File{{Path: "/", Mode: fs.ModeDir | 0o755}}, "absolute, clean"},
		{"duplicate", []File{{Path: "/a", Mode: 0o644}, {Path: "/a", Mode: 0o600}}, "listed twice"},
		{"symlink mode", []File{{Path: "/a", Mode: fs.ModeSymlink | 0o777}}, "only permission bits"},
		{"setuid", []File{{Path: "/a", Mode: fs.ModeSetuid | 0o755}}, "only permission bits"},
		{"negative owner", []File{{Path: "/a", Mode: 0o644, UID: -1}}, "negative"},
		{"directory with content", []File{{Path: "/d", Mode: fs.ModeDir | 0o755, Content: []byte("x")}}, "cannot have content"},
		{"content and source", []File{{Path: "/a", Mode: 0o644, Content: []byte("x"), Source: "/etc/hostname"}}, "both content and a source"},
		{"file inside a file", []File{{Path: "/a", Mode: 0o644}, {Path: "/a/b", Mode: 0o644}}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Layer(tc.files, testTime)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Layer(%+v) error %v, want one saying %q", tc.files, err, tc.want)
			}
		})
	}
}

func TestLayerFailsWhenASourceIsMissingOrNotAFile(t *testing.T) {
	for _, src := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		if _, err := Layer([]File{{Path: "/bin", Mode: 0o755, Source: src}}, testTime); err == nil {
			t.Errorf("Layer with source %s: no error", src)
		}
	}
}
