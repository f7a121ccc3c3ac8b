// Command democerts writes, for a manager run outside the cluster (`make
// demo`), the float-IP servers' certificate directory and kube-scheduler's
// client certificate for the extender, from one new CA, as the manager's
// self-managed Secrets would hold them: <dir>/server (tls.crt, tls.key,
// ca.crt: --floatippool-cert-dir with --floatippool-certs=provided) and
// <dir>/scheduler (tls.crt, tls.key, ca.crt: the scheduler configuration's
// tlsConfig). The local cluster's kube-scheduler reads its files when it
// starts, before the manager runs, so they cannot come from the manager's
// Secret. Existing files are kept.
//
//	go run ./hack/democerts --dir .demo/floatip-certs
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/webhookcert"
)

func main() {
	dir := flag.String("dir", "", "directory to write server/ and scheduler/ into (required)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "democerts:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if dir == "" {
		return errors.New("--dir is required")
	}
	serverDir, clientDir := filepath.Join(dir, "server"), filepath.Join(dir, "scheduler")
	present := 0
	for _, f := range []string{filepath.Join(serverDir, "tls.crt"), filepath.Join(clientDir, "tls.crt")} {
		if _, err := os.Stat(f); err == nil {
			present++
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if present == 2 {
		return nil
	}
	// The example scheduler configuration names the in-cluster Service;
	// the demo reaches the manager on loopback.
	names := []string{"localhost", floatippool.DefaultOptions().ServiceName + ".edgeplane-system.svc"}
	server, client, err := webhookcert.Issue(names, []net.IP{net.IPv4(127, 0, 0, 1)}, floatippool.SchedulerClientName, time.Now())
	if err != nil {
		return err
	}
	for d, files := range map[string]map[string][]byte{serverDir: server, clientDir: client} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(d, name), data, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}
