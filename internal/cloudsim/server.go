// Package cloudsim is edgeplane's local cloud emulator: one http.Handler that
// speaks the EC2 Query API and Tencent Cloud API 3.0 subsets edgeplane uses,
// on the real wire protocols, backed by a deterministic emulated account
// (internal/cloudsim/core), plus an admin API under /admin/.
//
// Use it in-process with httptest:
//
//	sim, _ := cloudsim.New(cloudsim.Options{Seed: 1})
//	srv := httptest.NewServer(sim)
//	// point aws-sdk-go-v2 (BaseEndpoint) or tencentcloud-sdk-go
//	// (HttpProfile.Endpoint + Scheme "http") at srv.URL
//
// or as the binary cmd/edgeplane-cloudsim.
//
// Routing: a request with an X-TC-Action header goes to the Tencent
// front-end, a path under /admin/ to the admin API (authenticated with
// Options.AdminToken, see admin.go), anything else to the EC2 front-end
// (which reads the form's Action).
package cloudsim

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/cloudsim/ec2"
	"github.com/edgeplane/edgeplane/internal/cloudsim/tencent"
)

// Options configure a Server.
type Options struct {
	// Seed makes IDs, addresses, request IDs and fault decisions
	// reproducible.
	Seed uint64
	// Clock defaults to the wall clock; tests inject a *core.ManualClock to
	// drive async tasks and eventual-consistency windows.
	Clock core.Clock
	// Settings: quotas, rate limits, task duration, Tencent keys. Zero
	// values take the real cloud's defaults.
	Settings core.Settings
	// Fixtures are applied at start and on every reset that keeps fixtures.
	Fixtures *core.Fixtures
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SignatureClock is the wall clock request signatures are checked
	// against (default time.Now): clients sign with their own wall clock
	// even when the emulator runs on a manual one. Tests set it off the
	// real time to emulate a client whose clock is skewed.
	SignatureClock func() time.Time
	// AdminToken is the bearer token every admin API request but GET
	// /admin/healthz must carry; empty turns the admin API off.
	AdminToken string
	// AdminHosts are Host header values (host or host:port) the admin API
	// answers besides loopback names: the names a remote client uses with
	// --allow-remote.
	AdminHosts []string
}

// Server is the emulator's single HTTP entry point.
type Server struct {
	world   *core.World
	ec2     *ec2.Handler
	tencent *tencent.Handler
	admin   *adminHandler
	log     *slog.Logger
}

// New builds an emulator.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w, err := core.New(core.Options{
		Seed:     opts.Seed,
		Clock:    opts.Clock,
		Settings: opts.Settings,
		Fixtures: opts.Fixtures,
		Logger:   opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{
		world:   w,
		ec2:     ec2.NewHandler(w, opts.Logger, opts.SignatureClock),
		tencent: tencent.NewHandler(w, opts.Logger, opts.SignatureClock),
		log:     opts.Logger,
	}
	s.admin = newAdminHandler(s, opts.AdminToken, opts.AdminHosts)
	return s, nil
}

// World is the emulated account, for tests that want to inspect or change
// state directly rather than through the admin API.
func (s *Server) World() *core.World { return s.world }

// ServeHTTP routes a request to the Tencent front-end (TC3 signature or any
// X-TC-Action header, even an empty one, so that a malformed Tencent request
// gets the Tencent error envelope), the admin API (/admin/) or the EC2
// front-end.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case isTencentRequest(r):
		s.tencent.ServeHTTP(rw, r)
	case strings.HasPrefix(r.URL.Path, "/admin/"):
		s.admin.ServeHTTP(rw, r)
	default:
		s.ec2.ServeHTTP(rw, r)
	}
}

func isTencentRequest(r *http.Request) bool {
	if _, ok := r.Header["X-Tc-Action"]; ok {
		return true
	}
	return strings.HasPrefix(r.Header.Get("Authorization"), "TC3-HMAC-SHA256")
}
