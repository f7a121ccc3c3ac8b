package localcluster

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
)

// startEgressProxyForTest serves an egressProxy on loopback that may
// reach only the address allowed, dialling directly.
func startEgressProxyForTest(t *testing.T, allowed netip.Addr, password string) string {
	t.Helper()
	p := &egressProxy{
		dial:     (&net.Dialer{}).DialContext,
		allowed:  func(a netip.Addr) bool { return a == allowed },
		user:     "localcluster",
		password: password,
		log:      testr.New(t),
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newEgressServer(p)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// connect sends a CONNECT for target through the proxy at addr and
// returns the connection, positioned after the response, and its status.
func connect(t *testing.T, addr, target, auth string) (net.Conn, *bufio.Reader, int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	req := fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target)
	if auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, resp.StatusCode
}

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

func TestEgressProxyTunnels(t *testing.T) {
	echo := echoServer(t)
	proxy := startEgressProxyForTest(t, netip.MustParseAddr("127.0.0.1"), "")

	conn, br, status := connect(t, proxy, echo, "")
	if status != http.StatusOK {
		t.Fatalf("CONNECT %s: status %d, want 200", echo, status)
	}
	if _, err := io.WriteString(conn, "through the tunnel\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "through the tunnel\n" {
		t.Errorf("echo = %q, %v", line, err)
	}

	// Only the cluster's networks are reachable, and only by address.
	_, port, _ := net.SplitHostPort(echo)
	for target, want := range map[string]int{
		net.JoinHostPort("127.0.0.2", port): http.StatusForbidden,
		net.JoinHostPort("localhost", port): http.StatusBadRequest,
		"127.0.0.1":                         http.StatusBadRequest,
	} {
		if _, _, status := connect(t, proxy, target, ""); status != want {
			t.Errorf("CONNECT %s: status %d, want %d", target, status, want)
		}
	}
	// Nothing listens there: the dial fails.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	_ = l.Close()
	if _, _, status := connect(t, proxy, free, ""); status != http.StatusBadGateway {
		t.Errorf("CONNECT %s (nothing listens): status %d, want 502", free, status)
	}
}

func TestEgressProxyAsksForThePassword(t *testing.T) {
	echo := echoServer(t)
	proxy := startEgressProxyForTest(t, netip.MustParseAddr("127.0.0.1"), "s3cret")
	basic := func(user, password string) string {
		req := &http.Request{Header: http.Header{}}
		req.SetBasicAuth(user, password)
		return req.Header.Get("Authorization")
	}
	for auth, want := range map[string]int{
		"":                              http.StatusProxyAuthRequired,
		basic("localcluster", "wrong"):  http.StatusProxyAuthRequired,
		basic("someone", "s3cret"):      http.StatusProxyAuthRequired,
		"Bearer s3cret":                 http.StatusProxyAuthRequired,
		"Basic !!!":                     http.StatusProxyAuthRequired,
		basic("localcluster", "s3cret"): http.StatusOK,
	} {
		if _, _, status := connect(t, proxy, echo, auth); status != want {
			t.Errorf("Proxy-Authorization %q: status %d, want %d", auth, status, want)
		}
	}
}

func TestEgressProxyForwardsPlainHTTP(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = fmt.Fprintf(w, "%s %s %s auth=%q", r.Method, r.URL.Path, body, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(backend.Close)
	proxy := startEgressProxyForTest(t, netip.MustParseAddr("127.0.0.1"), "s3cret")
	// What a Go client with HTTP_PROXY sends: an absolute-form request
	// (http.ProxyURL, unlike ProxyFromEnvironment, proxies loopback too).
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{
		Scheme: "http", User: url.UserPassword("localcluster", "s3cret"), Host: proxy,
	})}}
	resp, err := client.Post(backend.URL+"/filter", "text/plain", strings.NewReader("pods"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	// The proxy's credentials stay with the proxy.
	if resp.StatusCode != http.StatusOK || string(body) != `POST /filter pods auth=""` {
		t.Errorf("got %s %q", resp.Status, body)
	}

	// Without the password nothing is forwarded.
	anonymous := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}}
	resp, err = anonymous.Get(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusProxyAuthRequired {
		t.Errorf("without credentials: %s, want 407", resp.Status)
	}
}

func TestEgressDestination(t *testing.T) {
	for _, tt := range []struct {
		hostport string
		connect  bool
		want     string
	}{
		{"10.96.0.10:443", true, "10.96.0.10:443"},
		{"10.96.0.10", false, "10.96.0.10:80"},
		{"[fd00::1]:8080", true, "[fd00::1]:8080"},
		{"[fd00::1]", false, "[fd00::1]:80"},
		{"10.96.0.10", true, ""},    // CONNECT names a port
		{"svc.ns:443", true, ""},    // names are not resolved
		{"svc.ns", false, ""},       // nor here
		{"10.96.0.300:1", true, ""}, // not an address
	} {
		got, err := egressDestination(tt.hostport, tt.connect)
		if tt.want == "" {
			if err == nil {
				t.Errorf("egressDestination(%q, %v) = %s, want an error", tt.hostport, tt.connect, got)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("egressDestination(%q, %v) = %s, %v; want %s", tt.hostport, tt.connect, got, err, tt.want)
		}
	}
}
