// Package httpserve runs an HTTP server of the manager's own (the float-IP
// scheduler extender, the galaxy-ipam compatible API) as a manager runnable
// with every limit a listening port needs set: read-header, read, write and
// idle timeouts, a header size and a request body cap, and TLS when given.
// A server built here cannot be started without them (Limits.validate).
package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Limits bound what one client can hold of a server.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout the
	// whole request (headers and body), WriteTimeout the time from the end
	// of the headers to the end of the response, and IdleTimeout how long a
	// kept-alive connection waits for its next request. Over HTTP/2 the
	// read and write timeouts apply per stream.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request's body: a longer one, announced or
	// not, is refused with 413 Request Entity Too Large after reading at
	// most this much (Body).
	MaxBodyBytes int64
}

// ShutdownTimeout is how long a stopping server lets requests in flight
// finish.
const ShutdownTimeout = 5 * time.Second

// validate refuses a limit left at zero, which net/http reads as none.
func (l Limits) validate() error {
	var errs []error
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": l.ReadHeaderTimeout, "ReadTimeout": l.ReadTimeout,
		"WriteTimeout": l.WriteTimeout, "IdleTimeout": l.IdleTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, not %s", name, d))
		}
	}
	if l.MaxHeaderBytes <= 0 || l.MaxBodyBytes <= 0 {
		errs = append(errs, fmt.Errorf("MaxHeaderBytes (%d) and MaxBodyBytes (%d) must be positive", l.MaxHeaderBytes, l.MaxBodyBytes))
	}
	return errors.Join(errs...)
}

// Server serves Handler on Addr (or Listener) until the manager stops. It
// runs on every replica, not only the leader.
type Server struct {
	// Name says which server this is, in logs and errors.
	Name string
	// Addr is the address to listen on, unless Listener is set.
	Addr string
	// Listener, if set, is served instead of listening on Addr (tests).
	Listener net.Listener
	Handler  http.Handler
	// TLS, if set, serves HTTPS (and HTTP/2) with it; nil serves plain
	// HTTP, which only a loopback address should be.
	TLS    *tls.Config
	Limits Limits
}

// NeedLeaderElection is false: every replica serves.
func (s *Server) NeedLeaderElection() bool { return false }

// HTTPServer is the http.Server Start serves with: every limit set, the
// body capped around Handler, requests' contexts derived from ctx.
func (s *Server) HTTPServer(ctx context.Context) (*http.Server, error) {
	if err := s.Limits.validate(); err != nil {
		return nil, fmt.Errorf("the %s's limits: %w", s.Name, err)
	}
	return &http.Server{
		Handler:           Body(s.Limits.MaxBodyBytes, s.Handler),
		TLSConfig:         s.TLS,
		ReadHeaderTimeout: s.Limits.ReadHeaderTimeout,
		ReadTimeout:       s.Limits.ReadTimeout,
		WriteTimeout:      s.Limits.WriteTimeout,
		IdleTimeout:       s.Limits.IdleTimeout,
		MaxHeaderBytes:    s.Limits.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}, nil
}

// Start serves until ctx ends, then lets requests in flight finish for up
// to ShutdownTimeout.
func (s *Server) Start(ctx context.Context) error {
	srv, err := s.HTTPServer(ctx)
	if err != nil {
		return err
	}
	ln := s.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", s.Addr); err != nil {
			return fmt.Errorf("listening for the %s on %s: %w", s.Name, s.Addr, err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		if s.TLS != nil {
			// The certificate comes from TLS (GetCertificate).
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	log.FromContext(ctx).Info("Serving", "server", s.Name, "address", ln.Addr().String(), "tls", s.TLS != nil)
	select {
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(shutdownCtx) //nolint:contextcheck // the manager's context is already done
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving the %s: %w", s.Name, err)
	}
}

// Body wraps next so that a request body longer than limit is refused with
// 413: at once when its Content-Length says so, else when a read passes the
// limit (http.MaxBytesReader, whose error a handler answers with
// TooLarge).
func Body(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			TooLarge(w, limit)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// IsTooLarge reports whether err came from reading past a Body limit.
func IsTooLarge(err error) bool {
	var tooLarge *http.MaxBytesError
	return errors.As(err, &tooLarge)
}

// TooLarge answers 413 naming the limit.
func TooLarge(w http.ResponseWriter, limit int64) {
	http.Error(w, "request body larger than "+strconv.FormatInt(limit, 10)+" bytes", http.StatusRequestEntityTooLarge)
}

// Deadlines wraps next so that each request must be read within read and
// answered within write from when its headers arrived: the read and write
// timeouts of a server whose http.Server is built by a library that offers
// no such option (controller-runtime's webhook and metrics servers), set
// per request through http.ResponseController (HTTP/1 and HTTP/2 alike).
// Every request it wraps sets its own, so a kept-alive HTTP/1 connection's
// next request is not held to the last one's.
func Deadlines(read, write time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		// A writer that cannot take deadlines (a test recorder) is served
		// as it is.
		_ = rc.SetReadDeadline(now.Add(read))
		_ = rc.SetWriteDeadline(now.Add(write))
		next.ServeHTTP(w, r)
	})
}
