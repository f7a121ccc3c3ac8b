package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Kubectl runs kubectl (k8sbin's, the control plane's version) against the
// cluster as its administrator and returns what it printed on standard
// output; a failure's error carries its standard error. Tests use it for
// what only kubectl does the way a user sees it: exec, logs.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	bin, err := k8sbin.Path("kubectl")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", c.KubeconfigPath()}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}
