//go:build e2e

// Package podelasticip_test runs PodElasticIP end to end on a local cluster
// (real scheduler and controller-manager, kwok nodes) against the cloud
// emulator, with the examples make demo applies.
package podelasticip_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/orphan"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

const ns = "nginx-demo-ns"

func TestPodElasticIPExamples(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir: t.TempDir(), Scheme: scheme, Log: testr.New(t),
		Nodes: []localcluster.NodeSpec{
			{Name: "w1", CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")},
			{Name: "w2", CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")},
		},
	})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}

	// The emulator with the demo's fixtures: one ENI holding the kwok pod IPs.
	raw, err := os.ReadFile(filepath.Join(root, "examples", "podelasticip", "cloudsim-fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx core.Fixtures
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	sim := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2AddressQuota: 100}, Fixtures: &fx})

	c := cluster.Client()
	cpc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: cloudv1alpha1.DefaultProviderConfigName}}
	cpc.Spec.Provider, cpc.Spec.Region, cpc.Spec.Endpoint, cpc.Spec.ClusterIdentity = cloudv1alpha1.ProviderAWS, "us-east-1", sim.URL(), "e2e"
	cpc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	if err := c.Create(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	// The Tencent Cloud account of examples/podelasticip/tencent.yaml, on
	// the same emulator's Tencent front.
	tcpc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "tencentcloud"}}
	tcpc.Spec.Provider, tcpc.Spec.Region, tcpc.Spec.Endpoint, tcpc.Spec.ClusterIdentity = cloudv1alpha1.ProviderTencentCloud, "ap-guangzhou", sim.URL(), "e2e"
	tcpc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	if err := c.Create(ctx, tcpc); err != nil {
		t.Fatal(err)
	}

	ctrl.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 0}))
	mgr, err := ctrl.NewManager(cluster.RESTConfig(), ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: manager.CacheOptions("")}) // the manager's own cache, transforms included
	if err != nil {
		t.Fatal(err)
	}
	o := podelasticip.DefaultOptions()
	o.PollInterval, o.MaxBackoff, o.OrphanMode = 5*time.Second, 3*time.Second, orphan.ModeOff
	if err := o.Setup()(ctx, mgr, setup.Config{ClusterName: "e2e"}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	for _, f := range []string{"namespace.yaml", "nginx-demo.yaml", "statefulset.yaml", "podelasticip.yaml", "tencent.yaml"} {
		apply(ctx, t, c, filepath.Join(root, "examples", "podelasticip", f))
	}

	// The legacy-annotated Deployment's pod gets a translated PodElasticIP,
	// an address and the legacy label.
	nginx := readyPodElasticIP(ctx, t, c, client.MatchingLabels{"app": "app-nginx-demo"})
	// The hand-made PodElasticIP of the StatefulSet pod.
	web := waitReady(ctx, t, c, "web-0")
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, pod); err != nil {
		t.Fatal(err)
	}
	if !hasCondition(pod, networkingv1alpha1.PodConditionElasticIPReady) {
		t.Errorf("web-0 lacks the %s condition: %+v", networkingv1alpha1.PodConditionElasticIPReady, pod.Status.Conditions)
	}
	// The StatefulSet pod with an elastic IP on Tencent Cloud: bound to its
	// kwok IP on the fixtures' ENI, with spec.tencent's bandwidth.
	tc := waitReady(ctx, t, c, "web-tc-0")
	tcPod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-tc-0"}, tcPod); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range sim.World().Snapshot().Tencent.Addresses {
		if a.AddressID == tc.Status.AllocationID {
			found = a.AddressStatus == "BIND" && a.NetworkInterfaceID == "eni-demopods" && a.PrivateAddressIP == tcPod.Status.PodIP && a.Bandwidth == 10
			if !found {
				t.Errorf("web-tc-0's address %+v, want it bound to %s on eni-demopods with 10 Mbps", a, tcPod.Status.PodIP)
			}
		}
	}
	if !found || !hasCondition(tcPod, networkingv1alpha1.PodConditionElasticIPReady) {
		t.Errorf("web-tc-0: address %s found %v, pod conditions %+v", tc.Status.AllocationID, found, tcPod.Status.Conditions)
	}

	// A rollout replaces the nginx pod: the new pod gets its own address,
	// the old pod's PodElasticIP is garbage-collected with the pod and its
	// address released.
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-nginx-demo"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339)
	if err := c.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually.That(t.Context(), t, "the old nginx PodElasticIP gone and a new one Ready", func() (bool, string) {
		var list networkingv1alpha1.PodElasticIPList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		oldGone, newReady := true, false
		for _, p := range list.Items {
			if p.Name == nginx.Name {
				oldGone = false
			}
			if p.Name != nginx.Name && p.Name != "web-0" && p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable {
				newReady = true
			}
		}
		return oldGone && newReady, fmt.Sprintf("%d PodElasticIPs", len(list.Items))
	})
	eventually.That(t.Context(), t, "the old nginx address released", func() (bool, string) {
		addrs := sim.World().Snapshot().EC2.Addresses
		for _, a := range addrs {
			if a.AllocationID == nginx.Status.AllocationID {
				return false, "still allocated"
			}
		}
		return len(addrs) == 2, fmt.Sprintf("%d addresses", len(addrs))
	})

	// The StatefulSet pod is deleted and recreated: the address follows it.
	if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually.That(t.Context(), t, "web-0 recreated with its address", func() (bool, string) {
		p := &networkingv1alpha1.PodElasticIP{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, p); err != nil {
			return false, err.Error()
		}
		return p.Status.PodUID != "" && p.Status.PodUID != string(pod.UID) && p.Status.AllocationID == web.Status.AllocationID &&
			p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable, fmt.Sprintf("%+v", p.Status)
	})
	t.Logf("nginx address %s (%s) replaced after the rollout; web-0 kept %s (%s) across its recreation",
		nginx.Status.PublicIP, nginx.Status.AllocationID, web.Status.PublicIP, web.Status.AllocationID)
}

func readyPodElasticIP(ctx context.Context, t *testing.T, c client.Client, sel client.MatchingLabels) networkingv1alpha1.PodElasticIP {
	t.Helper()
	var out networkingv1alpha1.PodElasticIP
	eventually.That(t.Context(), t, "the nginx pod's PodElasticIP Ready and its legacy label", func() (bool, string) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), sel); err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprintf("%d pods, %v", len(pods.Items), err)
		}
		pod := pods.Items[0]
		p := &networkingv1alpha1.PodElasticIP{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod.Name}, p); err != nil {
			return false, err.Error()
		}
		out = *p
		return p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable && pod.Labels[translate.LabelPublicIP] == p.Status.PublicIP &&
			p.Labels["app.kubernetes.io/managed-by"] == "edgeplane-translator", fmt.Sprintf("pod %s %s labels %v; %+v; all pods: %s", pod.Name, pod.Status.PodIP, pod.Labels, p.Status, podIPs(ctx, c))
	})
	return out
}

// podIPs names every pod of the namespace with its node and IP, for a
// failure message (two pods on one IP make the cloud refuse the second
// address).
func podIPs(ctx context.Context, c client.Client) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("%s@%s=%s", p.Name, p.Spec.NodeName, p.Status.PodIP))
	}
	return strings.Join(out, ", ")
}

func waitReady(ctx context.Context, t *testing.T, c client.Client, name string) networkingv1alpha1.PodElasticIP {
	t.Helper()
	var out networkingv1alpha1.PodElasticIP
	eventually.That(t.Context(), t, "PodElasticIP "+name+" Ready", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &out); err != nil {
			return false, err.Error()
		}
		return out.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable, fmt.Sprintf("%+v", out.Status)
	})
	return out
}

func hasCondition(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// apply creates every object of a multi-document YAML file.
func apply(ctx context.Context, t *testing.T, c client.Client, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding %s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s from %s: %v", u.GetKind(), u.GetName(), path, err)
		}
	}
}
