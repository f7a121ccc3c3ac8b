package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 that hands each connection to the next
// backend that accepts it, round robin, so the API server (webhooks) and the
// scheduler (the float-IP extender) reach whichever manager replica is alive,
// as a Service would. It does not look into the bytes: TLS passes through to
// the replica, whose certificate covers 127.0.0.1.
type Proxy struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	served   atomic.Int64
	refused  atomic.Int64
	// refusing is true during an outage (Refuse).
	refusing atomic.Bool

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// dialTimeout bounds a connection attempt to one backend: on loopback a dead
// replica refuses at once, a stopped one (SIGSTOP) would hang.
const dialTimeout = time.Second

// NewProxy listens on a free loopback port and serves until Close.
func NewProxy(backends []string) (*Proxy, error) {
	if len(backends) == 0 {
		return nil, errors.New("proxy: no backends")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: listening: %w", err)
	}
	p := &Proxy{ln: ln, backends: append([]string(nil), backends...), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Served and Refused count connections passed to a backend and connections
// no backend accepted or an outage refused.
func (p *Proxy) Served() int64  { return p.served.Load() }
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// Close stops listening, closes every open connection and waits for the
// copying goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// Refuse starts (on) or ends an outage of every backend at once, as when no
// webhook server runs behind a Service: the open connections are cut, so
// the API server cannot go on using a kept-alive one, and each new
// connection is reset at once without reaching a backend (it counts in
// Refused).
func (p *Proxy) Refuse(on bool) {
	p.refusing.Store(on)
	if !on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// handle connects the client to the first backend, from the next in turn,
// that accepts, and copies both ways until either side closes.
func (p *Proxy) handle(client net.Conn) {
	defer p.untrack(client)
	if p.refusing.Load() {
		p.refused.Add(1)
		if tc, ok := client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with a reset, not an orderly FIN
		}
		return
	}
	start := p.next.Add(1)
	var backend net.Conn
	for i := range uint64(len(p.backends)) {
		addr := p.backends[(start+i)%uint64(len(p.backends))]
		c, err := net.DialTimeout("tcp", addr, dialTimeout)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		p.refused.Add(1)
		return
	}
	if !p.track(backend) {
		_ = backend.Close()
		return
	}
	defer p.untrack(backend)
	if p.refusing.Load() { // an outage began while this one was dialling
		p.refused.Add(1)
		return
	}
	p.served.Add(1)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close so the other direction can drain, then let handle
		// close both.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(backend, client)
	go pipe(client, backend)
	<-done
	<-done
}
