package healthcheck

import (
	"net/http"
	"time"
)

// Limits bound what one client can make the health checker hold. It listens
// on the node's own address, on the host network, where the load balancer
// and anything else that reaches the node can call it: no request may keep
// a connection, a goroutine or memory for long.
type Limits struct {
	// ReadHeaderTimeout and ReadTimeout bound reading a request; a client
	// that trickles its headers is dropped.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds a request from its headers to the end of the
	// answer: a check (Checker.Timeout, 2 s) and the metrics fit well within.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's headers.
	MaxHeaderBytes int
	// MaxInFlight caps the requests served at once; more are answered 503
	// at once. A load balancer checks each node every few seconds.
	MaxInFlight int
}

// DefaultLimits are the binary's limits.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 2 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    8 << 10,
		MaxInFlight:       32,
	}
}

// NewServer returns the health checker's HTTP server of h on addr, bounded
// by l.
func NewServer(addr string, h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           bounded(h, l.MaxInFlight),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// bounded serves h for at most maxInFlight requests at once and refuses
// every request that brings a body: all endpoints are GETs. A refused body
// is not read, and the connection is closed, so the server does not drain
// it after the answer either.
func bounded(h http.Handler, maxInFlight int) http.Handler {
	slots := make(chan struct{}, max(maxInFlight, 1))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
			http.Error(w, "request bodies are not accepted", http.StatusRequestEntityTooLarge)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			w.Header().Set("Connection", "close")
			http.Error(w, "too many requests in flight", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}
