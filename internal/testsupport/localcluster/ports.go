package localcluster

import (
	"fmt"
	"net"
	"strings"
)

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago. All listeners are held until every port is chosen so the n ports
// differ; another program can still take one before the component binds it,
// which startComponent handles by retrying with fresh ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// isPortConflict reports whether a log says a listener could not bind.
func isPortConflict(log string) bool {
	return strings.Contains(log, "address already in use")
}
