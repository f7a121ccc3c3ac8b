// Package imagebuild assembles OCI images from files on disk without a
// container daemon: deterministic layers (sorted entries, fixed owners, modes
// and timestamps), an image config, a multi-platform index, and the two ways
// to hand them on (an OCI layout directory a registry push reads, and the
// docker-archive tarball `ctr images import` loads). The same inputs give
// byte-identical output, so building twice gives the same digests.
package imagebuild

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer: a directory (Mode has fs.ModeDir) or a
// regular file whose bytes are Content or, for large files such as compiled
// binaries, the file at Source on the build machine.
type File struct {
	// Path inside the image: absolute and clean, e.g. "/etc/passwd".
	Path string
	// Mode is the permission bits, plus fs.ModeDir for a directory and
	// fs.ModeSticky where wanted (/tmp). No other type or special bit.
	Mode fs.FileMode
	// UID and GID own the entry inside the image, whoever owns Source.
	UID, GID int
	// Content of a regular file when Source is empty.
	Content []byte
	// Source is read each time the layer is streamed (never held in
	// memory), so it must not change until the image is written.
	Source string
}

// tarSticky is the sticky bit in a tar header's mode (c_ISVTX).
const tarSticky = 0o1000

// Layer returns a gzip-compressed OCI layer holding files, sorted by path,
// every entry stamped with mtime, and every missing parent directory added
// as root's 0755. Its compressed bytes are computed once and kept, so writing
// the image to a layout and to a tarball compresses it only once.
func Layer(files []File, mtime time.Time) (v1.Layer, error) {
	entries, err := layerEntries(files)
	if err != nil {
		return nil, err
	}
	mtime = mtime.UTC().Truncate(time.Second)
	opener := func() (io.ReadCloser, error) {
		r, w := io.Pipe()
		go func() { w.CloseWithError(writeTar(w, entries, mtime)) }()
		return r, nil
	}
	l, err := tarball.LayerFromOpener(opener,
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("building a layer of %d files: %w", len(entries), err)
	}
	return l, nil
}

// layerEntries checks files and returns them sorted by path, with the
// parent directories none of them names.
func layerEntries(files []File) ([]File, error) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		if err := checkFile(f); err != nil {
			return nil, err
		}
		if _, dup := byPath[f.Path]; dup {
			return nil, fmt.Errorf("%s is listed twice", f.Path)
		}
		byPath[f.Path] = f
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "/"; dir = path.Dir(dir) {
			parent, ok := byPath[dir]
			if !ok {
				byPath[dir] = File{Path: dir, Mode: fs.ModeDir | 0o755}
				continue
			}
			if !parent.Mode.IsDir() {
				return nil, fmt.Errorf("%s is inside %s, which is not a directory", f.Path, dir)
			}
		}
	}
	entries := make([]File, 0, len(byPath))
	for _, f := range byPath {
		entries = append(entries, f)
	}
	// A parent's path is a prefix of its children's, so it sorts first.
	slices.SortFunc(entries, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return entries, nil
}

func checkFile(f File) error {
	if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
		return fmt.Errorf("layer path %q: want an absolute, clean path below /", f.Path)
	}
	if f.Mode&^(fs.ModePerm|fs.ModeDir|fs.ModeSticky) != 0 {
		return fmt.Errorf("%s: mode %v: only permission bits, a directory and the sticky bit are supported", f.Path, f.Mode)
	}
	if f.UID < 0 || f.GID < 0 {
		return fmt.Errorf("%s: owner %d:%d is negative", f.Path, f.UID, f.GID)
	}
	if f.Mode.IsDir() && (f.Content != nil || f.Source != "") {
		return fmt.Errorf("%s is a directory and cannot have content", f.Path)
	}
	if f.Content != nil && f.Source != "" {
		return fmt.Errorf("%s has both content and a source file", f.Path)
	}
	return nil
}

func writeTar(w io.Writer, entries []File, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, f := range entries {
		if err := writeEntry(tw, f, mtime); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, f File, mtime time.Time) error {
	hdr := &tar.Header{
		Name:    strings.TrimPrefix(f.Path, "/"),
		Mode:    int64(f.Mode.Perm()),
		Uid:     f.UID,
		Gid:     f.GID,
		ModTime: mtime,
	}
	if f.Mode&fs.ModeSticky != 0 {
		hdr.Mode |= tarSticky
	}
	if f.Mode.IsDir() {
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
		return tw.WriteHeader(hdr)
	}
	hdr.Typeflag = tar.TypeReg
	if f.Source == "" {
		hdr.Size = int64(len(f.Content))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(f.Content)
		return err
	}
	src, err := os.Open(f.Source)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer func() { _ = src.Close() }()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: source %s is not a regular file", f.Path, f.Source)
	}
	hdr.Size = info.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, src)
	if err == nil && n != hdr.Size {
		err = errors.New("it changed while being read")
	}
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", f.Path, f.Source, err)
	}
	return nil
}
