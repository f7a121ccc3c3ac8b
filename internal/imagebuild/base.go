package imagebuild

import (
	"encoding/pem"
	"fmt"
	"io/fs"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// NonrootUID and NonrootGID are the user the images run as, distroless's
// "nonroot": not root, and the same number as distroless so a chart's
// runAsUser or a PodSecurity policy written for distroless images fits.
const (
	NonrootUID = 65532
	NonrootGID = 65532
)

// CACertificatesPath is where Go's crypto/x509 (and most TLS clients) look
// for the system roots on Linux.
const CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"

// NonrootBase is the filesystem of a distroless/static-like base with no
// shell and no package manager: the root, nobody and nonroot users and
// groups (so a user name resolves and tools that look the user up work),
// nsswitch.conf (files before DNS, as the kubelet-managed /etc/hosts
// expects), the CA certificates the manager needs to reach the clouds'
// APIs over TLS, nonroot's home, and a world-writable /tmp with the sticky
// bit.
func NonrootBase() []File {
	return []File{
		{Path: "/etc", Mode: fs.ModeDir | 0o755},
		{Path: "/etc/passwd", Mode: 0o644, Content: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
				fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonrootUID, NonrootGID))},
		{Path: "/etc/group", Mode: 0o644, Content: []byte(
			"root:x:0:\n" +
				"nobody:x:65534:\n" +
				fmt.Sprintf("nonroot:x:%d:\n", NonrootGID))},
		{Path: "/etc/nsswitch.conf", Mode: 0o644, Content: []byte("hosts: files dns\n")},
		{Path: CACertificatesPath, Mode: 0o644, Content: CACertificates()},
		{Path: "/home/nonroot", Mode: fs.ModeDir | 0o700, UID: NonrootUID, GID: NonrootGID},
		{Path: "/root", Mode: fs.ModeDir | 0o700},
		{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
	}
}

// CACertificates returns, as one PEM bundle, Mozilla's root certificates
// from the Go module golang.org/x/crypto/x509roots/fallback (its bundle
// package, pinned in go.mod, so the build needs no network and no distro
// package, and the roots change only when that module is bumped). A root
// that carries a constraint a PEM file cannot express (such as "distrusted
// for certificates issued after a date") is left out: a client reading the
// file would trust it without the constraint.
func CACertificates() []byte {
	var out []byte
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})...)
	}
	return out
}
