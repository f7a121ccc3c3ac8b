package ingressdaemonset

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

func TestTolerationCovers(t *testing.T) {
	tol := func(key string, op corev1.TolerationOperator, value string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect}
	}
	const (
		ex  = corev1.TolerationOpExists
		eq  = corev1.TolerationOpEqual
		ns  = corev1.TaintEffectNoSchedule
		nex = corev1.TaintEffectNoExecute
	)
	for name, tc := range map[string]struct {
		allowed, t corev1.Toleration
		want       bool
	}{
		"same key, value, effect":             {tol("k", eq, "v", ns), tol("k", eq, "v", ns), true},
		"empty operator is Equal":             {tol("k", "", "v", ns), tol("k", eq, "v", ns), true},
		"other value":                         {tol("k", eq, "v", ns), tol("k", eq, "w", ns), false},
		"Exists on the key covers any value":  {tol("k", ex, "", ns), tol("k", eq, "w", ns), true},
		"Exists covers Exists":                {tol("k", ex, "", ns), tol("k", ex, "", ns), true},
		"Equal does not cover Exists":         {tol("k", eq, "v", ns), tol("k", ex, "", ns), false},
		"other key":                           {tol("k", ex, "", ns), tol("j", ex, "", ns), false},
		"any effect covers one":               {tol("k", ex, "", ""), tol("k", eq, "v", nex), true},
		"one effect does not cover any":       {tol("k", ex, "", ns), tol("k", ex, "", ""), false},
		"one effect does not cover another":   {tol("k", ex, "", ns), tol("k", ex, "", nex), false},
		"every key covers everything":         {tol("", ex, "", ""), tol("", ex, "", ""), true},
		"every key of one effect":             {tol("", ex, "", ns), tol("k", eq, "v", ns), true},
		"a key does not cover every key":      {tol("k", ex, "", ""), tol("", ex, "", ""), false},
		"an unknown operator needs Exists":    {tol("k", eq, "5", ""), tol("k", "Gt", "5", ""), false},
		"an unknown operator under Exists":    {tol("k", ex, "", ""), tol("k", "Gt", "5", ""), true},
		"tolerationSeconds does not matter":   {tol("k", ex, "", nex), corev1.Toleration{Key: "k", Operator: ex, Effect: nex, TolerationSeconds: new(int64)}, true},
		"an empty key with Equal is no match": {tol("", eq, "", ""), tol("k", eq, "", ""), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tolerationCovers(tc.allowed, tc.t); got != tc.want {
				t.Errorf("tolerationCovers(%+v, %+v) = %v, want %v", tc.allowed, tc.t, got, tc.want)
			}
		})
	}
}

func TestAllowTolerations(t *testing.T) {
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ingress", Effect: corev1.TaintEffectNoSchedule}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	master := corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	allowed := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	kept, dropped := allowTolerations([]corev1.Toleration{dedicated, everything, master}, allowed)
	if diff := cmp.Diff([]corev1.Toleration{dedicated}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Toleration{everything, master}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if kept, dropped := allowTolerations([]corev1.Toleration{dedicated}, nil); kept != nil || len(dropped) != 1 {
		t.Errorf("no allow-list: kept %v, dropped %v; want nothing kept", kept, dropped)
	}
}

// TestHealthDaemonSetIsThePlatforms: the health checker's image, pull
// policy, ServiceAccount, namespace and resources are the platform's,
// whatever the spec says; its tolerations are the template's the platform
// allows.
func TestHealthDaemonSetIsThePlatforms(t *testing.T) {
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: "tenant", UID: "uid-1"},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			NodeSelector: map[string]string{"role": "edge"},
			Template: appsv1alpha1.PodTemplate{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"zone": "a"},
				Tolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ingress", Effect: corev1.TaintEffectNoSchedule},
					{Operator: corev1.TolerationOpExists},
				},
			}},
			HealthChecker: appsv1alpha1.HealthChecker{
				Image: "attacker/shell:1", ImagePullPolicy: corev1.PullAlways, ServiceAccountName: "admin",
				Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}},
			},
		},
	}
	hc := HealthChecker{Image: "platform/edgeplane:1", Namespace: "platform", ServiceAccount: "platform-hc",
		AllowedTolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}
	ds, dropped := healthDaemonSet(ids, 10080, hc)
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	if ds.Namespace != "platform" || ds.Name != "tenant.ing-10080" || len(ds.OwnerReferences) != 0 {
		t.Errorf("DaemonSet %s/%s owners %v; want platform/tenant.ing-10080 without owner references", ds.Namespace, ds.Name, ds.OwnerReferences)
	}
	if c.Image != "platform/edgeplane:1" || c.ImagePullPolicy != corev1.PullIfNotPresent || pod.ServiceAccountName != "platform-hc" {
		t.Errorf("image %s pull %s ServiceAccount %s; want the platform's", c.Image, c.ImagePullPolicy, pod.ServiceAccountName)
	}
	if diff := cmp.Diff(DefaultHealthCheckResources(), c.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ids.Spec.Template.Spec.Tolerations[:1], pod.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ids.Spec.Template.Spec.Tolerations[1:], dropped); diff != "" {
		t.Errorf("dropped tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"role": "edge", "zone": "a"}, pod.NodeSelector); diff != "" {
		t.Errorf("node selector (-want +got):\n%s", diff)
	}
	wantArgs := []string{"--bind-address=$(HOST_IP)", "--port=10080", "--namespace=tenant", "--ingress-daemonset=ing", "--node=$(NODE_NAME)"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if len(c.Env) != 2 || c.Env[1].Name != "HOST_IP" || c.Env[1].ValueFrom.FieldRef.FieldPath != "status.hostIP" {
		t.Errorf("env %+v: want NODE_NAME and HOST_IP from status.hostIP", c.Env)
	}
	wantLabels := map[string]string{appsv1alpha1.LabelIngressDaemonSet: "ing", appsv1alpha1.LabelIngressDaemonSetNamespace: "tenant",
		appsv1alpha1.LabelIngressDaemonSetUID: "uid-1", appsv1alpha1.LabelHealthCheckPort: "10080"}
	if diff := cmp.Diff(wantLabels, ds.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !isCheckerOf(ds, ids) || checkerOwner(ds) != "tenant/ing" {
		t.Errorf("the DaemonSet does not name its IngressDaemonSet: %v", ds.Annotations)
	}

	hc.BindAddress = "0.0.0.0"
	ds, _ = healthDaemonSet(ids, 10080, hc)
	if c := ds.Spec.Template.Spec.Containers[0]; c.Args[0] != "--bind-address=0.0.0.0" || len(c.Env) != 1 {
		t.Errorf("a literal bind address: args %q env %+v", c.Args, c.Env)
	}
}

func TestIgnoredFields(t *testing.T) {
	if got := ignoredFields(appsv1alpha1.HealthChecker{}); got != nil {
		t.Errorf("empty: %v", got)
	}
	all := appsv1alpha1.HealthChecker{Image: "i", ImagePullPolicy: corev1.PullNever, ServiceAccountName: "s", Resources: &corev1.ResourceRequirements{}}
	if diff := cmp.Diff([]string{"image", "imagePullPolicy", "serviceAccountName", "resources"}, ignoredFields(all)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestHealthCheckerFlags: every flag is checked as it is parsed, so a bad
// value stops the manager at start.
func TestHealthCheckerFlags(t *testing.T) {
	parse := func(args ...string) (HealthChecker, error) {
		hc := DefaultHealthChecker()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		hc.BindFlags(fs)
		return hc, fs.Parse(args)
	}
	hc, err := parse("--ingressdaemonset-healthcheck-image=r/e:1", "--ingressdaemonset-healthcheck-image-pull-policy=Always",
		"--ingressdaemonset-healthcheck-namespace=platform", "--ingressdaemonset-healthcheck-service-account=hc",
		`--ingressdaemonset-healthcheck-resources={"requests":{"cpu":"20m"}}`,
		`--ingressdaemonset-healthcheck-allowed-tolerations=[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]`,
		"--ingressdaemonset-healthcheck-bind-address=::")
	if err != nil {
		t.Fatal(err)
	}
	want := HealthChecker{Image: "r/e:1", ImagePullPolicy: corev1.PullAlways, Namespace: "platform", ServiceAccount: "hc",
		Resources:          corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m")}},
		AllowedTolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		BindAddress:        "::"}
	if diff := cmp.Diff(want, hc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if hc, _ := parse(); hc.BindAddress != HostIP || hc.Namespace != DefaultHealthCheckNamespace || hc.AllowedTolerations != nil {
		t.Errorf("defaults: %+v", hc)
	}
	for _, bad := range []string{
		"--ingressdaemonset-healthcheck-image-pull-policy=Sometimes",
		"--ingressdaemonset-healthcheck-namespace=Not_A_Namespace",
		"--ingressdaemonset-healthcheck-service-account=a/b",
		`--ingressdaemonset-healthcheck-resources={"requests":{"cpu":"lots"}}`,
		`--ingressdaemonset-healthcheck-resources={"request":{}}`,
		`--ingressdaemonset-healthcheck-allowed-tolerations={"key":"a"}`,
		`--ingressdaemonset-healthcheck-allowed-tolerations=[{"operator":"Equal","value":"v"}]`,
		`--ingressdaemonset-healthcheck-allowed-tolerations=[{"key":"a","operator":"Exists","value":"v"}]`,
		`--ingressdaemonset-healthcheck-allowed-tolerations=[{"key":"a","effect":"Never"}]`,
		"--ingressdaemonset-healthcheck-bind-address=localhost",
	} {
		if _, err := parse(bad); err == nil || !strings.Contains(err.Error(), "ingressdaemonset-healthcheck") {
			t.Errorf("%s: err %v, want it refused", bad, err)
		}
	}
}
