package localcluster

import (
	"errors"
	"net"
	"time"

	"github.com/go-logr/logr"
)

// serveRelay accepts connections on l and relays each to what dial
// connects, until l is closed. The real nodes reach the API server this
// way (and the demo's pods its cloud emulator, ExposeLoopbackPort): it
// listens on the machine's loopback only, and l listens on the gateway
// address in the control-plane host's network namespace. The relay
// carries the API server's TLS end to end, so the API server
// authenticates every client as before; it sets no idle timeout, which
// would cut the clients' watches (the API server times those out itself).
func serveRelay(l net.Listener, dial func() (net.Conn, error), log logr.Logger) {
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary failure (out of file descriptors): back off as
			// net/http's server does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			log.Info("accepting a connection to relay failed, retrying", "address", l.Addr(), "error", err, "after", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		go func() {
			upstream, err := dial()
			if err != nil {
				log.Info("cannot reach the relay's upstream", "address", l.Addr(), "error", err)
				_ = conn.Close()
				return
			}
			relay(conn, upstream)
		}()
	}
}
