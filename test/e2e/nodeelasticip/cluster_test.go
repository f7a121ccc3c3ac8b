//go:build e2e

package nodeelasticip_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/testr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// startCluster starts a local cluster (stopped when the test ends) with
// every edgeplane CRD installed.
func startCluster(ctx context.Context, t *testing.T, opts localcluster.Options) *localcluster.Cluster {
	t.Helper()
	opts.Dir, opts.Log = t.TempDir(), testr.New(t)
	cluster, err := localcluster.Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}
	return cluster
}
