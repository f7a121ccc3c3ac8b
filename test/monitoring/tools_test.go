package monitoring

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Paths of the repository files under test.
const (
	rulesFile     = "charts/edgeplane/files/prometheus-rules.yaml"
	dashboardFile = "charts/edgeplane/files/grafana-dashboard.json"
	runbooksFile  = "docs/operations.md"
	// rulesJob is the job selector of the plain rule file, which the chart
	// replaces with its release's metrics Service.
	rulesJob = `job="edgeplane-metrics"`
	// runbookBase is the runbook URL of the plain rule file.
	runbookBase = "https://github.com/edgeplane/edgeplane/blob/main/docs/operations.md"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readRepoFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
)

// prometheusTool returns the path of promtool or promql-metrics, built by
// hack/build-prometheus-tools.sh: a no-op when `make test` has built them
// already (its stamps match), a build otherwise. Never a skip.
func prometheusTool(t *testing.T, name string) string {
	t.Helper()
	toolsOnce.Do(func() {
		cmd := exec.Command(filepath.Join(repoRoot(t), "hack", "build-prometheus-tools.sh"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if toolsErr = cmd.Run(); toolsErr != nil {
			toolsErr = &toolError{err: toolsErr, stderr: stderr.String()}
			return
		}
		toolsDir = strings.TrimSpace(stdout.String())
	})
	if toolsErr != nil {
		t.Fatalf("building the Prometheus tools (make prometheus-tools): %v", toolsErr)
	}
	return filepath.Join(toolsDir, name)
}

type toolError struct {
	err    error
	stderr string
}

func (e *toolError) Error() string { return e.err.Error() + "\n" + e.stderr }

// selector is one vector selector of a PromQL expression, as promql-metrics
// reports it.
type selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

type parsed struct {
	Expr      string     `json:"expr"`
	Selectors []selector `json:"selectors"`
	Error     string     `json:"error"`
}

// parseExprs runs Prometheus' own parser (promql-metrics) over exprs.
func parseExprs(t *testing.T, exprs []string) []parsed {
	t.Helper()
	in, err := json.Marshal(exprs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prometheusTool(t, "promql-metrics"))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("promql-metrics: %v\n%s", err, stderr.String())
	}
	var out []parsed
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("reading promql-metrics' answer: %v\n%s", err, stdout.String())
	}
	if len(out) != len(exprs) {
		t.Fatalf("promql-metrics answered %d results for %d expressions", len(out), len(exprs))
	}
	return out
}
