// Package cloudsimtest starts the cloud emulator for tests.
package cloudsimtest

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
)

// Emulator is a running emulator: the Server (for World() access) and its
// loopback HTTP endpoint.
type Emulator struct {
	*cloudsim.Server
	HTTP *httptest.Server
}

// URL is the emulator's base URL (http://127.0.0.1:PORT).
func (e *Emulator) URL() string { return e.HTTP.URL }

// Start runs an emulator on a loopback port for the duration of the test.
// Logs are discarded unless opts.Logger is set.
func Start(t testing.TB, opts cloudsim.Options) *Emulator {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := cloudsim.New(opts)
	if err != nil {
		t.Fatalf("starting the cloud emulator: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &Emulator{Server: s, HTTP: srv}
}
