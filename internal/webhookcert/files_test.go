package webhookcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// readCertDir returns the files as seen through their stable names.
func readCertDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{tlsCertKey, tlsKeyKey, caCertKey} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
		out[name] = b
	}
	return out
}

func versionDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), versionPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func certFiles(data map[string][]byte) map[string][]byte {
	return map[string][]byte{tlsCertKey: data[tlsCertKey], tlsKeyKey: data[tlsKeyKey], caCertKey: data[caCertKey]}
}

func TestWriteCertDir(t *testing.T) {
	pol := testPolicy()
	first, _ := reconcile(t, nil, pol, t0)
	second, _ := reconcile(t, nil, pol, t0)

	tests := []struct {
		name string
		// prepare sets up dir before the write.
		prepare   func(t *testing.T, dir string)
		files     map[string][]byte
		wantWrote bool
	}{
		{
			name:      "empty dir",
			files:     certFiles(first),
			wantWrote: true,
		},
		{
			name:      "dir does not exist yet",
			prepare:   func(t *testing.T, dir string) { mustRemove(t, dir) },
			files:     certFiles(first),
			wantWrote: true,
		},
		{
			name: "same content is not rewritten",
			prepare: func(t *testing.T, dir string) {
				mustWrite(t, dir, certFiles(first))
			},
			files:     certFiles(first),
			wantWrote: false,
		},
		{
			name: "new content replaces the old version",
			prepare: func(t *testing.T, dir string) {
				mustWrite(t, dir, certFiles(first))
			},
			files:     certFiles(second),
			wantWrote: true,
		},
		{
			name: "regular files from elsewhere are replaced",
			prepare: func(t *testing.T, dir string) {
				for name, content := range certFiles(first) {
					if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			},
			files:     certFiles(first),
			wantWrote: true,
		},
		{
			name: "leftovers of an interrupted write are cleaned up",
			prepare: func(t *testing.T, dir string) {
				mustWrite(t, dir, certFiles(first))
				if err := os.Mkdir(filepath.Join(dir, versionPrefix+"crashed"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(versionPrefix+"crashed", filepath.Join(dir, dataLinkTmp)); err != nil {
					t.Fatal(err)
				}
			},
			files:     certFiles(second),
			wantWrote: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "certs")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			wrote, err := writeCertDir(dir, tt.files)
			if err != nil {
				t.Fatalf("writeCertDir: %v", err)
			}
			if wrote != tt.wantWrote {
				t.Errorf("wrote = %v, want %v", wrote, tt.wantWrote)
			}
			if diff := cmp.Diff(tt.files, readCertDir(t, dir)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			for name := range tt.files {
				target, err := os.Readlink(filepath.Join(dir, name))
				if err != nil || target != filepath.Join(dataLink, name) {
					t.Errorf("%s links to %q (%v), want %s", name, target, err, filepath.Join(dataLink, name))
				}
			}
			if got := versionDirs(t, dir); len(got) != 1 {
				t.Errorf("version directories %v, want exactly one", got)
			}
			if _, err := os.Lstat(filepath.Join(dir, dataLinkTmp)); err == nil {
				t.Errorf("%s left behind", dataLinkTmp)
			}
			fi, err := os.Stat(filepath.Join(dir, tlsKeyKey))
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("tls.key mode %o, want 600", perm)
			}
		})
	}
}

// TestWriteCertDirWithCertwatcher checks that controller-runtime's
// certwatcher, which the webhook server uses, follows the symlink swap.
func TestWriteCertDirWithCertwatcher(t *testing.T) {
	pol := testPolicy()
	now := time.Now()
	first, _ := reconcile(t, nil, pol, now)
	second, _ := reconcile(t, nil, pol, now)
	dir := t.TempDir()
	mustWrite(t, dir, certFiles(first))

	cw, err := certwatcher.New(filepath.Join(dir, tlsCertKey), filepath.Join(dir, tlsKeyKey))
	if err != nil {
		t.Fatalf("certwatcher.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cw.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("certwatcher: %v", err)
		}
	})

	served := func() []byte {
		c, _ := cw.GetCertificate(&tls.ClientHelloInfo{})
		if c == nil {
			return nil
		}
		return c.Certificate[0]
	}
	if want := leafOf(t, first).Raw; !bytes.Equal(served(), want) {
		t.Fatal("certwatcher does not serve the first certificate")
	}
	mustWrite(t, dir, certFiles(second))
	want := leafOf(t, second).Raw
	// The certwatcher notices through fsnotify, or at worst its 10s poll.
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true,
		func(context.Context) (bool, error) { return bytes.Equal(served(), want), nil }); err != nil {
		t.Fatalf("certwatcher never served the replaced certificate: %v", err)
	}
}

func mustWrite(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if _, err := writeCertDir(dir, files); err != nil {
		t.Fatalf("writeCertDir: %v", err)
	}
}

func mustRemove(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}
