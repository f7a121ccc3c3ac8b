package monitoring

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
)

// helmTemplate renders the chart as release "ops" (fullname ops-edgeplane,
// so the job selector visibly changes) with set.
func helmTemplate(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"helm", "template", "ops", "charts/edgeplane", "--namespace", "monitoring"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return gotool.Objects(t, args...)
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// TestChartShipsRulesAndDashboard: by default the chart renders neither
// (a cluster without the Prometheus Operator has no PrometheusRule kind);
// enabled, the PrometheusRule holds exactly the rule file's groups with the
// release's job and runbook base, and the dashboard ConfigMap holds the
// dashboard JSON under the label Grafana's sidecar looks for.
func TestChartShipsRulesAndDashboard(t *testing.T) {
	def := helmTemplate(t)
	if o := find(def, "PrometheusRule", "ops-edgeplane"); o != nil {
		t.Error("the chart renders a PrometheusRule by default")
	}
	if o := find(def, "ConfigMap", "ops-edgeplane-dashboard"); o != nil {
		t.Error("the chart renders the dashboard ConfigMap by default")
	}

	const base = "https://docs.example.com/edgeplane/operations"
	objs := helmTemplate(t, "prometheusRule.enabled=true", "prometheusRule.labels.release=kube-prometheus-stack",
		"prometheusRule.runbookBaseURL="+base, "grafanaDashboard.enabled=true", "grafanaDashboard.annotations.grafana_folder=edge")
	pr := find(objs, "PrometheusRule", "ops-edgeplane")
	if pr == nil {
		t.Fatal("no PrometheusRule ops-edgeplane rendered with prometheusRule.enabled=true")
	}
	if got := pr.GetLabels()["release"]; got != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule label release = %q", got)
	}
	file := strings.ReplaceAll(string(readRepoFile(t, rulesFile)), rulesJob, `job="ops-edgeplane-metrics"`)
	file = strings.ReplaceAll(file, runbookBase, base)
	var want map[string]any
	if err := yaml.Unmarshal([]byte(file), &want); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	if diff := cmp.Diff(want["groups"], any(got)); diff != "" {
		t.Errorf("PrometheusRule groups differ from %s with the release's job and runbook base (-want +got):\n%s", rulesFile, diff)
	}
	if strings.Contains(file, `job="edgeplane-metrics"`) || !strings.Contains(file, base+"#") {
		t.Error("the expected rules still name the default job or runbook base: the replacement in this test is wrong")
	}

	cm := find(objs, "ConfigMap", "ops-edgeplane-dashboard")
	if cm == nil {
		t.Fatal("no ConfigMap ops-edgeplane-dashboard rendered with grafanaDashboard.enabled=true")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetAnnotations()["grafana_folder"] != "edge" || cm.GetNamespace() != "monitoring" {
		t.Errorf("dashboard ConfigMap labels %v, annotations %v, namespace %q", cm.GetLabels(), cm.GetAnnotations(), cm.GetNamespace())
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "edgeplane.json")
	if diff := cmp.Diff(strings.TrimSpace(string(readRepoFile(t, dashboardFile))), data); diff != "" {
		t.Errorf("the ConfigMap's edgeplane.json differs from %s (-want +got):\n%s", dashboardFile, diff)
	}
}
