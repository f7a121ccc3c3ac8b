package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Kwok's node selection: it manages only nodes carrying this annotation, so
// tests may also create nodes nobody manages.
const (
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	KwokNodeValue      = "fake"
)

// kwokStagesFile is written next to the binaries by hack/build-k8s.sh: kwok
// refuses to start without Stage objects, and these make nodes go Ready and
// pods go Running (and complete or be deleted) promptly.
const kwokStagesFile = "kwok-stages.yaml"

// kwokComponent runs kwok as the kubelet of every annotated node. Its HTTP
// server (logs/exec endpoints, /healthz) listens on loopback only; the same
// port is advertised as the nodes' kubelet port.
func (c *Cluster) kwokComponent() (component, error) {
	binDir, err := k8sbin.Dir()
	if err != nil {
		return component{}, err
	}
	stages := filepath.Join(binDir, kwokStagesFile)
	if _, err := os.Stat(stages); err != nil {
		return component{}, fmt.Errorf("kwok stages %s missing (run `make k8s-bin`): %w", stages, err)
	}
	home := filepath.Join(c.dir, Kwok)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return component{}, fmt.Errorf("creating kwok home: %w", err)
	}
	var port int
	return component{
		name:  Kwok,
		ports: 1,
		args: func(ports []int) []string {
			port = ports[0]
			defaults := []string{
				"--kubeconfig=" + c.componentKubeconfig(Kwok),
				"--config=" + strings.Join(append([]string{stages}, c.opts.KwokConfigs...), ","),
				"--manage-all-nodes=false",
				// Nodes renew a Lease in kube-node-lease as kubelets do; without it
				// kwok's status heartbeat is slower than the controller-manager's
				// grace period, and nodes (and their pods) flap to NotReady.
				"--node-lease-duration-seconds=40",
				"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeValue,
				"--cidr=" + podCIDR,
				"--node-ip=" + nodeIP,
				fmt.Sprintf("--server-address=127.0.0.1:%d", port),
				fmt.Sprintf("--node-port=%d", port),
			}
			return mergeFlags(defaults, c.opts.KwokFlags)
		},
		// kwok also loads ~/.kwok/kwok.yaml when it exists; a private HOME
		// keeps a developer's kwokctl settings out of the tests.
		env: []string{"HOME=" + home},
		ready: func(ctx context.Context) error {
			return httpOK(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/healthz", port))(ctx)
		},
	}, nil
}
