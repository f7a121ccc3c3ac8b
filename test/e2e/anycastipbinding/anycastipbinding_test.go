//go:build e2e

// Package anycastipbinding_test runs AnycastIPBinding end to end on the
// local cluster (real kube-scheduler and kube-controller-manager, kwok
// nodes), with the Node admission webhook installed and the Tencent Cloud
// emulator: a labelled node is tainted from its first appearance, pods that
// need it stay off it until its address is bound, then land on it, and
// deleting the node releases the address.
package anycastipbinding_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr/testr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// waitTimeout only keeps a broken cluster from hanging the run; nothing
// here asserts on durations.
const waitTimeout = 3 * time.Minute

const (
	plainNode = "plain-1"
	edgeNode  = "edge-1"
	instance  = "ins-edge0001"
	ns        = "anycast-e2e"
)

func TestAnycastIPBinding(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	// Tasks take a while, so the node stays unbound long enough for the
	// scheduler to have had every chance to place the pods on it.
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{TaskDuration: core.Duration(5 * time.Second)},
		Fixtures: &core.Fixtures{Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{{InstanceID: instance, PrivateIPAddresses: []string{"10.1.0.5"}}}}}})

	cluster := localcluster.StartForTest(ctx, t, localcluster.Options{
		Scheme: scheme,
		Nodes:  []localcluster.NodeSpec{{Name: plainNode, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")}},
	})
	whOpts := &envtest.WebhookInstallOptions{
		LocalServingHost:    "127.0.0.1",
		LocalServingCertDir: t.TempDir(),
		MutatingWebhooks:    []*admissionregistrationv1.MutatingWebhookConfiguration{nodeWebhookConfiguration()},
	}
	if err := whOpts.Install(cluster.RESTConfig()); err != nil {
		t.Fatalf("installing the webhook configuration: %v", err)
	}

	c := cluster.Client()
	if err := c.Create(ctx, &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: emu.URL(), ClusterIdentity: "e2e"},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}); err != nil {
		t.Fatal(err)
	}

	ctrl.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 0}))
	mgr, err := ctrl.NewManager(cluster.RESTConfig(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: whOpts.LocalServingHost, Port: whOpts.LocalServingPort, CertDir: whOpts.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := anycastipbinding.DefaultOptions()
	opts.TaskPollInterval = 500 * time.Millisecond
	opts.OrphanGracePeriod = time.Minute
	if err := opts.Setup()(ctx, mgr, setup.Config{ClusterName: "e2e"}); err != nil {
		t.Fatalf("setting up: %v", err)
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	}); err != nil {
		t.Fatalf("waiting for the webhook server: %v", err)
	}
	if err := cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// The Deployment comes first: its pods are Pending (no labelled node).
	labels := map[string]string{"app": "edge-web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "edge-web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"},
					Containers:   []corev1.Container{{Name: "web", Image: "nginx"}},
				},
			},
		},
	}
	if err := c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}

	// Watch the node from before it exists: its very first version must
	// carry the taint.
	firstVersion, err := cluster.WatchFirstNodeVersion(ctx, edgeNode)
	if err != nil {
		t.Fatal(err)
	}

	if err := cluster.AddNode(ctx, localcluster.NodeSpec{Name: edgeNode, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"),
		Labels: map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}, ProviderID: "qcloud:///800002/" + instance}); err != nil {
		t.Fatal(err)
	}

	t.Run("the labelled node is tainted from its first appearance", func(t *testing.T) {
		firstSeen, err := firstVersion(waitTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if !decide.HasTaint(firstSeen) {
			t.Fatalf("the node's first version has no %s taint: %v", networkingv1alpha1.LegacyTaintNoAIAIP, firstSeen.Spec.Taints)
		}
	})

	t.Run("pods stay off the node until its address is bound, then land on it", func(t *testing.T) {
		var violations []string
		eventually.That(ctx, t, "both pods Running on the edge node", func() (bool, string) {
			b := &networkingv1alpha1.AnycastIPBinding{}
			bound := false
			if err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, b); err == nil {
				bound = b.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
			}
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
				return false, err.Error()
			}
			running := 0
			for _, p := range pods.Items {
				if p.Spec.NodeName == edgeNode && !bound {
					// The binding may have turned Ready between the two
					// reads; the address state decides.
					if !addressBound(emu) {
						violations = append(violations, fmt.Sprintf("pod %s on %s before its address was bound", p.Name, edgeNode))
					}
				}
				if p.Spec.NodeName == edgeNode && p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			return running == 2, fmt.Sprintf("bound=%v running=%d binding=%+v", bound, running, b.Status)
		})
		if len(violations) > 0 {
			t.Fatalf("the taint race is open: %s", strings.Join(violations, "; "))
		}
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, n); err != nil {
			t.Fatal(err)
		}
		if decide.HasTaint(n) || n.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPID] == "" || n.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPAddress] == "" {
			t.Errorf("bound node: taints %v annotations %v", n.Spec.Taints, n.Annotations)
		}
	})

	t.Run("deleting the node releases the address", func(t *testing.T) {
		if err := cluster.DeleteNode(ctx, edgeNode); err != nil {
			t.Fatal(err)
		}
		eventually.That(ctx, t, "the address released and the binding gone", func() (bool, string) {
			addrs := emu.World().Snapshot().Tencent.Addresses
			err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, &networkingv1alpha1.AnycastIPBinding{})
			return len(addrs) == 0 && client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("addresses %+v, binding err %v", addrs, err)
		})
	})
}

// addressBound reports whether the emulator has the instance's address BIND.
func addressBound(emu *cloudsimtest.Emulator) bool {
	for _, a := range emu.World().Snapshot().Tencent.Addresses {
		if a.InstanceID == instance && a.AddressStatus == "BIND" {
			return true
		}
	}
	return false
}

// nodeWebhookConfiguration mirrors the +kubebuilder:webhook marker of the
// anycastipbinding package (envtest joins the path with a slash).
func nodeWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	path := strings.TrimPrefix(anycastipbinding.NodeWebhookPath, "/")
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-anycastipbinding-e2e"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "aia.nodes.networking.edgeplane.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "edgeplane", Path: &path}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
			}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](3),
			ReinvocationPolicy:      &ifNeeded,
		}},
	}
}
