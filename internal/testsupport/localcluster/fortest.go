package localcluster

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/testr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// StartForTest starts a cluster for a test or benchmark: in a directory
// of the test's (unless opts.Dir is set), logging to the test (unless
// opts.Log is set), stopped when the test ends, with the CRD files named
// by crds (relative to config/crd/bases) installed, or every edgeplane
// CRD when none is named. It fails the test on any error.
func StartForTest(ctx context.Context, t testing.TB, opts Options, crds ...string) *Cluster {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Log.GetSink() == nil {
		opts.Log = testr.NewWithInterface(t, testr.Options{})
	}
	cluster, err := Start(ctx, opts)
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
	bases := filepath.Join(root, "config", "crd", "bases")
	paths := []string{bases}
	if len(crds) > 0 {
		paths = paths[:0]
		for _, name := range crds {
			paths = append(paths, filepath.Join(bases, name))
		}
	}
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}
	return cluster
}
