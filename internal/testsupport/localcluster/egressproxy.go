package localcluster

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// egressProxy is the HTTP proxy through which processes on the machine
// reach the real nodes' network, which exists only inside the cluster's
// network namespaces: the API server (its egress selector's "cluster"
// traffic, egressSelectorConfig) over a unix socket, and kube-scheduler
// (extenders behind Services) through HTTP_PROXY on loopback. It connects
// from the control-plane host, whose kube-proxy routes Services as every
// node's does, so a Service's ClusterIP works from there as from a pod.
//
// It serves CONNECT tunnels (the API server's HTTPConnect egress, and any
// https:// request through HTTPS_PROXY) and plain http:// requests in
// absolute form (what a Go client sends through HTTP_PROXY).
type egressProxy struct {
	// dial connects from inside the cluster's network.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// allowed says which destination addresses may be reached: the
	// cluster's networks, never the machine's.
	allowed func(netip.Addr) bool
	// user and password, when password is set, are required in
	// Proxy-Authorization (basic): the loopback listener is reachable by
	// every process on the machine, the unix socket only by root.
	user, password string
	log            logr.Logger
	forward        *httputil.ReverseProxy
	forwardOnce    sync.Once
}

// Bounds of what the proxy accepts.
const (
	egressMaxHeaderBytes = 64 << 10
	// egressMaxBody caps a forwarded plain-HTTP request: an extender call
	// carries a pod and a node list.
	egressMaxBody     = 32 << 20
	egressDialTimeout = 10 * time.Second
)

// newEgressServer is an http.Server for the proxy with its timeouts set.
// A CONNECT tunnel clears them once established (see serveConnect).
func newEgressServer(p *egressProxy) *http.Server {
	return &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    egressMaxHeaderBytes,
	}
}

func (p *egressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.password != "" && !p.authorized(r.Header.Get("Proxy-Authorization")) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="localcluster"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	target := r.Host
	if r.Method != http.MethodConnect {
		if r.URL.Scheme != "http" || r.URL.Host == "" {
			http.Error(w, "only CONNECT and absolute http:// requests are proxied", http.StatusBadRequest)
			return
		}
		target = r.URL.Host
	}
	dest, err := egressDestination(target, r.Method == http.MethodConnect)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !p.allowed(dest.Addr()) {
		http.Error(w, fmt.Sprintf("%s is outside the cluster's networks", dest.Addr()), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r, dest)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, egressMaxBody)
	p.forwarder().ServeHTTP(w, r)
}

// egressDestination parses the host:port a request wants: an IP address
// (names are not resolved: nothing serves the cluster's DNS here), with a
// port, which plain http:// may leave out.
func egressDestination(hostport string, connect bool) (netip.AddrPort, error) {
	if !connect {
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			hostport = net.JoinHostPort(strings.Trim(hostport, "[]"), "80")
		}
	}
	dest, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("destination %q: want an IP address and a port", hostport)
	}
	return dest, nil
}

// authorized checks a Proxy-Authorization header in constant time.
func (p *egressProxy) authorized(header string) bool {
	encoded, ok := strings.CutPrefix(header, "Basic ")
	if !ok {
		return false
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return false
	}
	want := p.user + ":" + p.password
	return subtle.ConstantTimeCompare(decoded, []byte(want)) == 1
}

// serveConnect opens the tunnel: the API server's connection to a
// kubelet or a Service, carrying its own TLS.
func (p *egressProxy) serveConnect(w http.ResponseWriter, r *http.Request, dest netip.AddrPort) {
	ctx, cancel := context.WithTimeout(r.Context(), egressDialTimeout)
	upstream, err := p.dial(ctx, "tcp", dest.String())
	cancel()
	if err != nil {
		http.Error(w, fmt.Sprintf("connecting to %s: %v", dest, err), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "connection cannot be hijacked", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		p.log.Error(err, "hijacking a CONNECT request", "destination", dest)
		return
	}
	// The server's read and write deadlines stay on a hijacked
	// connection. A tunnel is an exec session, a followed log or a watch of
	// the API server's: the API server and the kubelet time those out
	// themselves, a deadline here would cut them.
	_ = conn.SetDeadline(time.Time{})
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	// Bytes the client sent right after its request are already buffered.
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ := buf.Reader.Peek(n)
		if _, err := upstream.Write(early); err != nil {
			_ = conn.Close()
			_ = upstream.Close()
			return
		}
	}
	relay(conn, upstream)
}

// forwarder proxies plain http:// requests, dialling from the cluster's
// network.
func (p *egressProxy) forwarder() *httputil.ReverseProxy {
	p.forwardOnce.Do(func() {
		p.forward = &httputil.ReverseProxy{
			// The request already names its destination (absolute form).
			Rewrite: func(*httputil.ProxyRequest) {},
			Transport: &http.Transport{
				Proxy:                 nil,
				DialContext:           p.dial,
				MaxIdleConns:          16,
				IdleConnTimeout:       90 * time.Second,
				ResponseHeaderTimeout: time.Minute,
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
					return
				}
				http.Error(w, fmt.Sprintf("forwarding to %s: %v", r.URL.Host, err), http.StatusBadGateway)
			},
		}
	})
	return p.forward
}

// relay copies between two connections until both directions end,
// passing each side's end of input on as a half-close where the
// connection supports it.
func relay(a, b net.Conn) {
	var wg sync.WaitGroup
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go copyHalf(a, b)
	go copyHalf(b, a)
	wg.Wait()
	_ = a.Close()
	_ = b.Close()
}
