package webhooks_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// TestEveryWebhookIsBenchmarked fails when config/webhook or the chart
// configures a webhook that no benchmark here measures, or when a
// benchmarked webhook is no longer configured.
func TestEveryWebhookIsBenchmarked(t *testing.T) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for name := range benchmarked {
			if !yield(name) {
				return
			}
		}
	})
	for _, file := range []string{"config/webhook/manifests.yaml", "charts/edgeplane/files/webhooks.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, doc := range strings.Split(string(raw), "\n---") {
			var cfg struct {
				Webhooks []struct {
					Name string `json:"name"`
				} `json:"webhooks"`
			}
			if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, w := range cfg.Webhooks {
				names = append(names, w.Name)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("%s configures webhooks %v; the benchmarks measure %v", file, names, want)
		}
	}
}
