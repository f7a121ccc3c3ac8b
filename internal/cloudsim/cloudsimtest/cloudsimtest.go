// Package cloudsimtest starts the cloud emulator for tests.
package cloudsimtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Emulator is a running emulator: the Server (for World() access) and its
// loopback HTTP endpoint.
type Emulator struct {
	*cloudsim.Server
	HTTP *httptest.Server
}

// URL is the emulator's base URL (http://127.0.0.1:PORT).
func (e *Emulator) URL() string { return e.HTTP.URL }

// AdminToken is the admin API token of an emulator Start runs without one
// of its own: a test's emulator serves loopback only.
const AdminToken = "cloudsimtest-admin-token"

// Start runs an emulator on a loopback port for the duration of the test.
// Logs are discarded unless opts.Logger is set; the admin API takes
// AdminToken unless opts.AdminToken is set.
func Start(t testing.TB, opts cloudsim.Options) *Emulator {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.AdminToken == "" {
		opts.AdminToken = AdminToken
	}
	s, err := cloudsim.New(opts)
	if err != nil {
		t.Fatalf("starting the cloud emulator: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &Emulator{Server: s, HTTP: srv}
}

// SignEC2 signs an EC2 Query request with SigV4 as the AWS SDK does (the
// SDK's own signer, so the emulator's verifier is checked against an
// implementation it does not share), for tests that talk to the emulator
// without an EC2 client. The zero time means now.
func SignEC2(r *http.Request, body []byte, accessKeyID, secretAccessKey string, at time.Time) {
	if at.IsZero() {
		at = time.Now()
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey}
	// SignHTTP only fails on a request it cannot read; these are built
	// by the tests themselves.
	_ = v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), "ec2", "us-east-1", at)
}

// SignEC2Default signs with the emulator's well-known key pair, now.
func SignEC2Default(r *http.Request, body []byte) {
	SignEC2(r, body, core.DefaultEC2AccessKeyID, core.DefaultEC2SecretAccessKey, time.Time{})
}
