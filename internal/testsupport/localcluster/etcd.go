package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
)

// etcdComponent runs a single-member etcd on two loopback ports (client and
// peer; etcd would otherwise claim the well-known 2379/2380).
func (c *Cluster) etcdComponent() component {
	return component{
		name:  Etcd,
		ports: 2,
		args: func(ports []int) []string {
			c.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
			peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
			return []string{
				"--name=localcluster",
				"--data-dir=" + filepath.Join(c.dir, "etcd"),
				"--listen-client-urls=" + c.etcdURL,
				"--advertise-client-urls=" + c.etcdURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=localcluster=" + peerURL,
				// A throw-away cluster needs no durability; fsync on a machine
				// busy with builds makes every write slow.
				"--unsafe-no-fsync=true",
				"--log-level=warn",
			}
		},
		ready: func(ctx context.Context) error {
			return httpOK(http.DefaultClient, c.etcdURL+"/health")(ctx)
		},
	}
}
