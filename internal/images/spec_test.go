package images

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// repoRoot is the repository the tests build images of.
var repoRoot string

func TestMain(m *testing.M) {
	var err error
	if repoRoot, err = k8sbin.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestEdgeplaneRefIsWhatTheChartRenders renders the chart with its default
// values: every container of edgeplane's image and the health checker's
// image flag name the reference edgeplane's tarball carries, so a node that
// loaded it runs the chart without a registry.
func TestEdgeplaneRefIsWhatTheChartRenders(t *testing.T) {
	spec, err := Edgeplane(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	objs := gotool.Objects(t, "helm", "template", "edgeplane", "charts/edgeplane", "--namespace", "edgeplane-system",
		"--set", "floatIP.cni.enabled=true", "--set", "floatIP.cni.apiServer=https://10.96.0.1:443")
	var seen []string
	healthCheckFlag := false
	for _, o := range objs {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, e := range containers {
			c, _ := e.(map[string]any)
			img, _, _ := unstructured.NestedString(c, "image")
			seen = append(seen, o.GetKind()+"/"+o.GetName()+": "+img)
			if img != spec.Ref {
				t.Errorf("%s/%s runs %s, edgeplane's tarball carries %s", o.GetKind(), o.GetName(), img, spec.Ref)
			}
			args, _, _ := unstructured.NestedStringSlice(c, "args")
			for _, a := range args {
				v, ok := strings.CutPrefix(a, "--ingressdaemonset-healthcheck-image=")
				healthCheckFlag = healthCheckFlag || ok
				if ok && v != spec.Ref {
					t.Errorf("the health checker's image %s, want %s", v, spec.Ref)
				}
			}
		}
	}
	if !healthCheckFlag {
		t.Error("no container has --ingressdaemonset-healthcheck-image")
	}
	if len(seen) < 2 {
		t.Errorf("containers found: %q; want the manager's and the CNI installer's", seen)
	}
}

func TestChartDefaultImage(t *testing.T) {
	for _, tc := range []struct {
		name, chart, values, want, wantErr string
	}{
		{"appVersion", "appVersion: \"1.2.3\"\n", "image:\n  repository: example.com/ep\n  tag: \"\"\n", "example.com/ep:1.2.3", ""},
		{"tag wins", "appVersion: 1.2.3\n", "image:\n  repository: example.com/ep\n  tag: dev\n", "example.com/ep:dev", ""},
		{"no repository", "appVersion: 1.2.3\n", "image: {}\n", "", "no default image"},
		{"no tag", "name: x\n", "image:\n  repository: example.com/ep\n", "", "no default image"},
		{"bad yaml", "appVersion: [\n", "image: {}\n", "", "parsing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"Chart.yaml": tc.chart, "values.yaml": tc.values} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ChartDefaultImage(dir)
			if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ChartDefaultImage = %q, %v; want %q, error containing %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestSpecsAreDistinctAndRunNonrootOrAsNobodysUser(t *testing.T) {
	all, err := All(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var names, refs []string
	for _, s := range all {
		names, refs = append(names, s.Name), append(refs, s.Ref)
		if s.User == "" || strings.HasPrefix(s.User, "0:") || s.User == "0" {
			t.Errorf("%s runs as %q, want a numeric non-root user", s.Name, s.User)
		}
	}
	if !slices.Equal(names, []string{"edgeplane", "pause", "podreport"}) {
		t.Errorf("images %q", names)
	}
	slices.Sort(refs)
	if len(slices.Compact(refs)) != 3 {
		t.Errorf("references %q are not distinct", refs)
	}
}
