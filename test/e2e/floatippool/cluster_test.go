package floatippool_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// writeSchedulerConfig writes the KubeSchedulerConfiguration that sends
// float-IP pods to the extender at extenderURL (the shape of
// examples/floatippool/kube-scheduler-config.yaml), with the scheduler's
// client certificate from certs, for the local cluster in clusterDir, and
// returns its path. clientQPS > 0 raises the scheduler's client limits
// (burst twice that).
func writeSchedulerConfig(t testing.TB, clusterDir string, certs floatippooltest.Certs, extenderURL string, nodeCacheCapable bool, clientQPS int) string {
	t.Helper()
	cfg := wire.SchedulerConfig{
		Kubeconfig: localcluster.ComponentKubeconfig(clusterDir, localcluster.Scheduler), URLPrefix: extenderURL,
		Resource: networkingv1alpha1.ResourceENIIP, NodeCacheCapable: nodeCacheCapable, QPS: clientQPS,
		CertDir: certs.ClientDir,
	}.YAML()
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// installFloatIPCRDs installs the FloatIPPool, FloatIP and FloatIPPoolLedger CRDs.
func installFloatIPCRDs(t testing.TB, cfg *rest.Config) {
	t.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crds := []string{
		filepath.Join(root, "config", "crd", "bases", "networking.edgeplane.io_floatippools.yaml"),
		filepath.Join(root, "config", "crd", "bases", "networking.edgeplane.io_floatips.yaml"),
		filepath.Join(root, "config", "crd", "bases", "networking.edgeplane.io_floatippoolledgers.yaml"),
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
}
