//go:build e2e

// Package plugin_test runs kubectl-edgeplane the way users do: built, put on
// PATH and found by the real kubectl's plugin mechanism, against the local
// cluster.
package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

func TestKubectlEdgeplane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := k8sbin.Path("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}

	// The plugin, built as `make build` builds it, on a PATH of its own.
	binDir := t.TempDir()
	testbin.Build(t, binDir, "kubectl-edgeplane")

	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), Scheme: scheme, Nodes: []localcluster.NodeSpec{{Name: "w1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Stop() }()
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}

	sh := func(t *testing.T, stdin, name string, args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cluster.KubeconfigPath())
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}

	t.Run("kubectl finds the plugin", func(t *testing.T) {
		out, errOut, err := sh(t, "", kubectl, "plugin", "list")
		if err != nil || !strings.Contains(out, filepath.Join(binDir, "kubectl-edgeplane")) {
			t.Fatalf("kubectl plugin list: %v\n%s%s", err, out, errOut)
		}
	})
	t.Run("convert, then kubectl apply the output", func(t *testing.T) {
		if out, errOut, err := sh(t, "", kubectl, "create", "namespace", "burst-demo"); err != nil {
			t.Fatalf("%v\n%s%s", err, out, errOut)
		}
		converted, warnings, err := sh(t, "", kubectl, "edgeplane", "convert",
			"-f", "internal/plugin/testdata/seeds", "-f", "examples/burstpolicy/legacy-nginx-deployment.yaml",
			"-f", "internal/controller/ingressdaemonset/importer/testdata/nginx-ingress.legacy.yaml",
			"-f", "internal/plugin/convert/testdata/galaxy.yaml")
		if err != nil {
			t.Fatalf("convert: %v\n%s", err, warnings)
		}
		// Server-side dry run first, then for real.
		for _, dry := range []string{"--dry-run=server", "--dry-run=none"} {
			out, errOut, err := sh(t, converted, kubectl, "apply", "--server-side", dry, "-f", "-")
			if err != nil {
				t.Fatalf("kubectl apply %s: %v\n%s%s\ninput:\n%s", dry, err, out, errOut, converted)
			}
		}
	})
	t.Run("status", func(t *testing.T) {
		out, errOut, err := sh(t, "", kubectl, "edgeplane", "status", "-A")
		if err != nil {
			t.Fatalf("status: %v\n%s%s", err, out, errOut)
		}
		// No manager runs here: everything applied is listed, none Ready.
		for _, want := range []string{"ClusterBurstPolicy", "BurstPolicy", "IngressDaemonSet", "FloatIPPool", "FloatIP ", "NoStatus", " not Ready"} {
			if !strings.Contains(out, want) {
				t.Errorf("status output lacks %q:\n%s", want, out)
			}
		}
		t.Logf("kubectl edgeplane status -A:\n%s", out)
	})
	t.Run("orphans without provider configs", func(t *testing.T) {
		out, errOut, err := sh(t, "", kubectl, "edgeplane", "orphans", "-A")
		if err != nil || !strings.Contains(out, "No orphaned cloud addresses found.") {
			t.Errorf("orphans: %v\n%s%s", err, out, errOut)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		_, errOut, err := sh(t, "", kubectl, "edgeplane", "bogus")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(errOut, "Commands:") {
			t.Errorf("want exit 2 and the usage, got %v\n%s", err, errOut)
		}
	})
}
