package localcluster

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// TestKwokConfigs: kwok loads the built-in stages first and then every file
// of Options.KwokConfigs, in order, from one --config flag (a string slice in
// kwok, so comma-separated).
func TestKwokConfigs(t *testing.T) {
	binDir, err := k8sbin.Dir()
	if err != nil {
		t.Fatal(err)
	}
	stages := filepath.Join(binDir, kwokStagesFile)
	for _, tt := range []struct {
		name    string
		configs []string
		want    string
	}{
		{"built-in stages only", nil, "--config=" + stages},
		{"extra files after them", []string{"/x/kwok.yaml", "/y/more.yaml"}, "--config=" + stages + ",/x/kwok.yaml,/y/more.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{dir: t.TempDir(), opts: Options{KwokConfigs: tt.configs}}
			comp, err := c.kwokComponent()
			if err != nil {
				t.Fatal(err)
			}
			args := comp.args([]int{12345})
			configs := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return !strings.HasPrefix(a, "--config=") })
			if len(configs) != 1 || configs[0] != tt.want {
				t.Errorf("kwok's --config flags = %q, want [%q]", configs, tt.want)
			}
		})
	}
}
