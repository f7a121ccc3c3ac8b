package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// TestConvertREADMEExample converts the legacy README's nginx-ingress example
// and compares it with testdata/nginx-ingress.golden.yaml (UPDATE_GOLDEN=1
// rewrites it).
func TestConvertREADMEExample(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "nginx-ingress.legacy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(in, &doc); err != nil {
		t.Fatal(err)
	}
	ids, warnings, err := Convert(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(ids)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "nginx-ingress.golden.yaml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(out)); diff != "" {
		t.Errorf("converted manifest (-want +got):\n%s", diff)
	}
	for _, w := range []string{
		"spec.podsPerNode converted to spec.replicasPerNode (2)",
		"maxUnavaiablePodsPerNode (misspelt; the legacy controller ignored it) converted to maxUnavailablePodsPerNode",
		"maxDegradedNodes 3 dropped",
		"spec.selector derived from spec.template.metadata.labels",
		"is a host port",
		"spec.healthChecker.image mumoshu/ingress-daemonset-controller:latest dropped: the health checker's image, pull policy, ServiceAccount and resources are the platform's",
		"spec.healthChecker.imagePullPolicy Always dropped",
		"spec.healthChecker.serviceAccountName default dropped",
	} {
		if !strings.Contains(strings.Join(warnings, "\n"), w) {
			t.Errorf("no warning containing %q in %q", w, warnings)
		}
	}
}

func legacy(rollingUpdate string) map[string]any {
	doc := `
apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1
kind: IngressDaemonSet
metadata: {name: ing, namespace: edge}
spec:
  template:
    metadata: {labels: {app: ing}}
    spec: {containers: [{name: c, image: i}]}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
` + rollingUpdate
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		panic(err)
	}
	return m
}

// checkError fails the test unless err matches wantErr (an error containing
// it, or none when it is empty); it reports whether an error was expected,
// so the caller stops there.
func checkError(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one containing %q", err, wantErr)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// checkWarning fails the test unless some warning contains want ("" checks nothing).
func checkWarning(t *testing.T, warnings []string, want string) {
	t.Helper()
	if want != "" && !strings.Contains(strings.Join(warnings, "\n"), want) {
		t.Errorf("no warning containing %q in %q", want, warnings)
	}
}

func TestConvertRollingUpdate(t *testing.T) {
	cases := map[string]struct {
		ru       string
		want     *appsv1alpha1.RollingUpdate
		wantWarn string
		wantErr  string
	}{
		"legacy json tag (plural)": {
			ru:       "      maxUnavailablePodsPerNodes: 2\n",
			want:     &appsv1alpha1.RollingUpdate{MaxUnavailablePodsPerNode: ptr.To(intstr.FromInt32(2))},
			wantWarn: "maxUnavailablePodsPerNodes converted to maxUnavailablePodsPerNode",
		},
		"README misspelling": {
			ru:       "      maxUnavaiablePodsPerNode: 50%\n",
			want:     &appsv1alpha1.RollingUpdate{MaxUnavailablePodsPerNode: ptr.To(intstr.FromString("50%"))},
			wantWarn: "maxUnavaiablePodsPerNode (misspelt",
		},
		"both misspellings: the json tag wins": {
			ru:       "      maxUnavaiablePodsPerNode: 3\n      maxUnavailablePodsPerNodes: 1\n",
			want:     &appsv1alpha1.RollingUpdate{MaxUnavailablePodsPerNode: ptr.To(intstr.FromInt32(1))},
			wantWarn: "maxUnavaiablePodsPerNode (3) ignored: maxUnavailablePodsPerNodes (1) takes precedence",
		},
		"correct spelling": {
			ru:   "      maxUnavailablePodsPerNode: 1\n      maxSurgedPodsPerNode: 1\n      maxDegradedNodes: 1\n",
			want: &appsv1alpha1.RollingUpdate{MaxUnavailablePodsPerNode: ptr.To(intstr.FromInt32(1)), MaxSurgedPodsPerNode: ptr.To(intstr.FromInt32(1)), MaxDegradedNodes: ptr.To[int32](1)},
		},
		"node annotations without detach mode are dropped": {
			ru:       "      annotateNodeToDetach: {key: a/b}\n",
			want:     &appsv1alpha1.RollingUpdate{},
			wantWarn: "annotateNodeToDetach dropped",
		},
		"detach mode": {
			ru: "      maxUnavailableNodes: 1\n      annotateNodeToDetach: {key: a/b, value: \"true\", gracePeriodSeconds: 10}\n" +
				"      waitForDetachmentByAnnotatedTimestamp: {key: a/ts, format: RFC3339}\n      annotateDeploymentToDetach: {key: c/d, gracePeriodSeconds: 5}\n",
			want: &appsv1alpha1.RollingUpdate{
				MaxUnavailableNodes:                   ptr.To[int32](1),
				AnnotateNodeToDetach:                  &appsv1alpha1.DetachAnnotation{Key: "a/b", Value: "true", GracePeriodSeconds: 10},
				WaitForDetachmentByAnnotatedTimestamp: &appsv1alpha1.DetachmentTimestamp{Key: "a/ts", Format: "RFC3339", GracePeriodSeconds: 10},
				AnnotateDeploymentToDetach:            &appsv1alpha1.DetachAnnotation{Key: "c/d", GracePeriodSeconds: 5},
			},
		},
		"unknown timestamp format": {
			ru:      "      maxUnavailableNodes: 1\n      annotateNodeToDetach: {key: a/b}\n      waitForDetachmentByAnnotatedTimestamp: {key: a/ts, format: Unix}\n",
			wantErr: "only RFC3339 is supported",
		},
		"deployment annotation without a key: the legacy default key": {
			ru:       "      annotateDeploymentToDetach: {gracePeriodSeconds: 5}\n",
			want:     &appsv1alpha1.RollingUpdate{AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "ingressdaemonsets.mumoshu.github.com/to-be-updated", GracePeriodSeconds: 5}},
			wantWarn: "annotateDeploymentToDetach.key is missing: the legacy default ingressdaemonsets.mumoshu.github.com/to-be-updated is used",
		},
		"deployment annotation with an empty key and a value": {
			ru:   "      annotateDeploymentToDetach: {key: \"\", value: \"true\"}\n",
			want: &appsv1alpha1.RollingUpdate{AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "ingressdaemonsets.mumoshu.github.com/to-be-updated", Value: "true"}},
		},
		"node annotation without a key (no legacy default)": {
			ru:      "      maxUnavailableNodes: 1\n      annotateNodeToDetach: {value: \"true\"}\n",
			wantErr: "annotateNodeToDetach.key is missing",
		},
		"unknown field": {
			ru:       "      maxDegradedNode: 2\n",
			want:     &appsv1alpha1.RollingUpdate{},
			wantWarn: "spec.updateStrategy.rollingUpdate.maxDegradedNode is unknown and was dropped",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, warnings, err := Convert(legacy(tc.ru))
			if checkError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got.Spec.UpdateStrategy.RollingUpdate); diff != "" {
				t.Errorf("rollingUpdate (-want +got):\n%s", diff)
			}
			checkWarning(t, warnings, tc.wantWarn)
		})
	}
}

// TestConvertHealthCheckPortSpellings: the README's prose calls the field
// healthCheckPort (and Spec.HealthCheckNodePort); each spelling, one port or
// a list, ends up in healthCheckNodePorts.
func TestConvertHealthCheckPortSpellings(t *testing.T) {
	cases := map[string]struct {
		spec     string
		want     []int32
		wantWarn string
		wantErr  string
	}{
		"healthCheckPort (the README's spelling)": {spec: "healthCheckPort: 10080", want: []int32{10080},
			wantWarn: "spec.healthCheckPort converted to spec.healthCheckNodePorts"},
		"healthCheckPort as a list":       {spec: "healthCheckPort: [10080, 10081]", want: []int32{10080, 10081}},
		"healthCheckNodePort":             {spec: "healthCheckNodePort: 10081", want: []int32{10081}, wantWarn: "spec.healthCheckNodePort converted"},
		"healthCheckNodePorts":            {spec: "healthCheckNodePorts: [10080]", want: []int32{10080}},
		"a single healthCheckNodePorts":   {spec: "healthCheckNodePorts: 10080", want: []int32{10080}},
		"all spellings, duplicates once":  {spec: "healthCheckNodePorts: [10080]\n  healthCheckPort: 10081\n  healthCheckNodePort: 10080", want: []int32{10080, 10081}},
		"healthCheckPort that is no port": {spec: "healthCheckPort: http", wantErr: "spec.healthCheckPort"},
		"a list with a bad entry":         {spec: "healthCheckPort: [10080, x]", wantErr: "spec.healthCheckPort: [1]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc := "apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: ing}\nspec:\n  " + tc.spec +
				"\n  template: {metadata: {labels: {app: ing}}, spec: {containers: [{name: c, image: i}]}}\n"
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			got, warnings, err := Convert(m)
			if checkError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got.Spec.HealthCheckNodePorts); diff != "" {
				t.Errorf("healthCheckNodePorts (-want +got):\n%s", diff)
			}
			checkWarning(t, warnings, tc.wantWarn)
			for _, w := range warnings {
				if strings.Contains(w, "unknown and was dropped") {
					t.Errorf("a port spelling was dropped: %q", w)
				}
			}
		})
	}
}

func TestConvertRejects(t *testing.T) {
	cases := map[string]struct {
		doc, wantErr string
	}{
		"other kind":  {doc: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\n", wantErr: "not a legacy IngressDaemonSet"},
		"no template": {doc: "apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: x}\nspec: {}\n", wantErr: "spec.template is missing"},
		"no labels to select": {doc: "apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: x}\nspec: {template: {spec: {containers: [{name: c}]}}}\n",
			wantErr: "cannot derive a selector"},
		"bad podsPerNode": {doc: "apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1\nkind: IngressDaemonSet\nmetadata: {name: x}\nspec: {podsPerNode: two}\n", wantErr: "spec.podsPerNode"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(tc.doc), &m); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Convert(m); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
