package webhookcert

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The cert dir uses the layout kubelet uses for Secret volumes, so that
// tls.crt and tls.key always change together:
//
//	CertDir/..certs-123456/{tls.crt,tls.key,ca.crt}   one directory per version
//	CertDir/..data -> ..certs-123456                  swapped by one rename
//	CertDir/tls.crt -> ..data/tls.crt                 stable paths for readers
//
// Renaming per file would leave a moment with a new tls.crt and an old
// tls.key; the certwatcher would then fail to load the pair (it keeps the
// previous one, so this is not fatal, but it is avoidable). With the symlink
// swap a reader opening the two paths sees one version or the other, except
// when the swap happens between its two reads, which the certwatcher's next
// read repairs.
const (
	dataLink      = "..data"
	dataLinkTmp   = "..data_tmp"
	versionPrefix = "..certs-"
)

// writeCertDir makes dir hold exactly the given files (name -> content). It
// does nothing when the files already have that content, so that a periodic
// check does not make the certwatcher reload. It reports whether it wrote.
func writeCertDir(dir string, files map[string][]byte) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("creating cert dir %s: %w", dir, err)
	}
	if upToDate(dir, files) {
		return false, nil
	}

	// Write the new version in full before anything points at it.
	version, err := os.MkdirTemp(dir, versionPrefix)
	if err != nil {
		return false, fmt.Errorf("creating certificate version directory in %s: %w", dir, err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := writeFileSync(filepath.Join(version, name), files[name], fileMode(name)); err != nil {
			_ = os.RemoveAll(version)
			return false, err
		}
	}

	// Swap ..data to the new version: a rename over a symlink is atomic.
	oldVersion, _ := os.Readlink(filepath.Join(dir, dataLink))
	tmp := filepath.Join(dir, dataLinkTmp)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("removing stale %s: %w", tmp, err)
	}
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		return false, fmt.Errorf("creating %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		return false, fmt.Errorf("switching %s to %s: %w", filepath.Join(dir, dataLink), version, err)
	}

	// Point the stable names at ..data. This only changes anything on the
	// first write, or when a previous version of this code (or a person) left
	// regular files there; each replacement is again a rename.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := ensureLink(dir, name); err != nil {
			return true, err
		}
	}

	// Remove old versions (including ones left by a crash) last, once nothing
	// points at them any more.
	if err := removeStaleVersions(dir, filepath.Base(version), oldVersion); err != nil {
		return true, err
	}
	syncDir(dir)
	return true, nil
}

// upToDate reports whether every file already exists, through its stable
// link, with the wanted content.
func upToDate(dir string, files map[string][]byte) bool {
	for name, want := range files {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil || target != filepath.Join(dataLink, name) {
			return false
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

func ensureLink(dir, name string) error {
	path := filepath.Join(dir, name)
	want := filepath.Join(dataLink, name)
	if target, err := os.Readlink(path); err == nil && target == want {
		return nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory, expected a certificate file", path)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing stale %s: %w", tmp, err)
	}
	if err := os.Symlink(want, tmp); err != nil {
		return fmt.Errorf("creating link %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s with a link to %s: %w", path, want, err)
	}
	return nil
}

func removeStaleVersions(dir, current, previous string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if name == current || !e.IsDir() || !(strings.HasPrefix(name, versionPrefix) || name == previous) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			errs = append(errs, fmt.Errorf("removing old certificate version %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func writeFileSync(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	_, werr := f.Write(data)
	// Sync so that a crash right after the ..data swap cannot leave it
	// pointing at empty files.
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// syncDir persists the renames; best effort, as not every file system
// supports syncing a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// fileMode keeps the private key readable by the owner only.
func fileMode(name string) os.FileMode {
	if name == tlsKeyKey {
		return 0o600
	}
	return 0o644
}
