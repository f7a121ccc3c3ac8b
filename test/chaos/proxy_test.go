package chaos

import (
	"bufio"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// echoServer answers each line with name + ":" + line.
func echoServer(t *testing.T, name string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(name + ":" + line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func ask(t *testing.T, addr, msg string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "closed" // EOF or a reset: the proxy hung up
	}
	return strings.TrimSpace(line)
}

func TestProxy(t *testing.T) {
	a, b := echoServer(t, "a"), echoServer(t, "b")
	tests := map[string]struct {
		backends []string
		want     []string // answers to four connections, sorted
		refused  int64
	}{
		"both alive: round robin":          {backends: []string{a.Addr().String(), b.Addr().String()}, want: []string{"a:hi", "a:hi", "b:hi", "b:hi"}},
		"one dead: the live one takes all": {backends: []string{deadAddr(t), b.Addr().String()}, want: []string{"b:hi", "b:hi", "b:hi", "b:hi"}},
		"all dead: connections are closed": {backends: []string{deadAddr(t)}, want: []string{"closed", "closed", "closed", "closed"}, refused: 4},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := NewProxy(tc.backends)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close() }()
			var got []string
			for range 4 {
				got = append(got, ask(t, p.Addr(), "hi"))
			}
			if diff := cmp.Diff(tc.want, slices.Sorted(slices.Values(got))); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if p.Refused() != tc.refused || p.Served() != 4-tc.refused {
				t.Errorf("served %d refused %d, want %d and %d", p.Served(), p.Refused(), 4-tc.refused, tc.refused)
			}
		})
	}
	if _, err := NewProxy(nil); err == nil {
		t.Error("a proxy without backends was created")
	}
}

func TestProxyRefuse(t *testing.T) {
	a := echoServer(t, "a")
	p, err := NewProxy([]string{a.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()

	// A kept-alive connection from before the outage.
	kept, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kept.Close() }()
	r := bufio.NewReader(kept)
	if _, err := kept.Write([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "a:before\n" {
		t.Fatalf("before the outage: %q, %v", line, err)
	}

	p.Refuse(true)
	// The outage cuts it: the replica never answers again on it.
	_, _ = kept.Write([]byte("during\n"))
	if line, err := r.ReadString('\n'); err == nil {
		t.Errorf("a connection from before the outage still answers: %q", line)
	}
	for range 3 {
		if got := askRefused(p.Addr()); got != "refused" {
			t.Errorf("during the outage a new connection got %q", got)
		}
	}
	if p.Refused() != 3 || p.Served() != 1 {
		t.Errorf("served %d refused %d, want 1 and 3", p.Served(), p.Refused())
	}

	p.Refuse(false)
	if got := ask(t, p.Addr(), "hi"); got != "a:hi" {
		t.Errorf("after the outage: %q", got)
	}
	if p.Refused() != 3 || p.Served() != 2 {
		t.Errorf("served %d refused %d, want 2 and 3", p.Served(), p.Refused())
	}
}

// askRefused sends a line and reads the answer like ask, but a connection
// reset while dialling (the proxy may reset before the handshake returns)
// is an answer too: "refused" whenever no line came back.
func askRefused(addr string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "refused"
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write([]byte("hi\n")); err != nil {
		return "refused"
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "refused"
	}
	return strings.TrimSpace(line)
}
