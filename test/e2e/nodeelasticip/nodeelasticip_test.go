//go:build e2e

// Package nodeelasticip_test runs NodeElasticIP end to end on the local
// cluster (real kube-scheduler and kube-controller-manager, kwok nodes on
// "EC2 instances" of the emulator), with the Node admission webhook
// installed and the translator configured as kubeip is (a reserved pool by
// FILTER): a labelled node is tainted from its first appearance, pods that
// need it stay off it until its address is on its primary interface, then
// land on it; a node kubeip already gave an address keeps it (adopted, not
// moved); deleting a node gives its address back to the pool.
package nodeelasticip_test

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
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// waitTimeout only keeps a broken cluster from hanging the run; nothing
// here asserts on durations.
const waitTimeout = 3 * time.Minute

const (
	plainNode = "plain-1"
	edgeNode  = "eip-edge-1"
	kubeipped = "eip-edge-2"
	ns        = "eip-e2e"
)

func instance(i int) string { return fmt.Sprintf("i-0e2e00000000000%d", i) }
func eni(i int) string      { return fmt.Sprintf("eni-0e2e00000000000%d", i) }
func primary(i int) string  { return fmt.Sprintf("10.3.0.%d", 10+i) }

const (
	// poolFree is the pool's address nobody holds; poolKubeIP the one kubeip
	// put on kubeipped's primary IP before edgeplane came.
	poolFree   = "eipalloc-0e2e000000000001"
	poolKubeIP = "eipalloc-0e2e000000000002"
)

func TestNodeElasticIP(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	fx := &core.Fixtures{EC2: core.EC2Fixtures{Addresses: []core.EC2AddressFixture{
		{AllocationID: poolFree, PublicIP: "198.51.100.31", Tags: map[string]string{"kubeip": "reserved"}},
		{AllocationID: poolKubeIP, PublicIP: "198.51.100.32", Tags: map[string]string{"kubeip": "reserved"}, NetworkInterfaceID: eni(2), PrivateIPAddress: primary(2)},
	}}}
	for i := 1; i <= 2; i++ {
		fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{InstanceID: instance(i), VpcID: "vpc-1", SubnetID: "subnet-1", AvailabilityZone: "us-east-1a",
			NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: eni(i), PrivateIPAddresses: []string{primary(i)}},
				{NetworkInterfaceID: fmt.Sprintf("eni-0e2e00000000001%d", i), PrivateIPAddresses: []string{fmt.Sprintf("10.3.1.%d", 10+i)}}}})
	}
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2AddressQuota: 10, RateLimitsDisabled: true}, Fixtures: fx})
	kubeipAssociation := addressOf(emu, poolKubeIP).AssociationID

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
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1", Endpoint: emu.URL(), ClusterIdentity: "e2e"},
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
	opts := nodeelasticip.DefaultOptions()
	// kubeip's DaemonSet env, as the migration guide carries it over.
	opts.PoolFilter = "Name=tag:kubeip,Values=reserved"
	opts.PoolOrderBy = "AllocationId"
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
	podLabels := map[string]string{"app": "egress"}
	if err := c.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "egress", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"},
					Containers:   []corev1.Container{{Name: "c", Image: "nginx"}},
				},
			},
		},
	}); err != nil {
		t.Fatal(err)
	}

	// Watch the node from before it exists: its very first version must
	// carry the taint.
	firstVersion, err := cluster.WatchFirstNodeVersion(ctx, edgeNode)
	if err != nil {
		t.Fatal(err)
	}
	taint := decide.Taint(networkingv1alpha1.DefaultNodeElasticIPTaintKey)
	addNode := func(name string, i int) {
		t.Helper()
		if err := cluster.AddNode(ctx, localcluster.NodeSpec{Name: name, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"),
			Labels: map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"}, ProviderID: "aws:///us-east-1a/" + instance(i)}); err != nil {
			t.Fatal(err)
		}
	}
	addNode(edgeNode, 1)

	t.Run("the labelled node is tainted from its first appearance", func(t *testing.T) {
		firstSeen, err := firstVersion(waitTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if !nodepatch.HasTaint(firstSeen, taint) {
			t.Fatalf("the node's first version has no %s taint: %v", taint.Key, firstSeen.Spec.Taints)
		}
	})

	t.Run("pods stay off the node until its address is on it, then land on it", func(t *testing.T) {
		var violations []string
		eventually.That(ctx, t, "both pods Running on the edge node", func() (bool, string) {
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(podLabels)); err != nil {
				return false, err.Error()
			}
			running := 0
			for _, p := range pods.Items {
				if p.Spec.NodeName == edgeNode && addressOf(emu, poolFree).NetworkInterfaceID != eni(1) {
					violations = append(violations, fmt.Sprintf("pod %s on %s before its address was associated", p.Name, edgeNode))
				}
				if p.Spec.NodeName == edgeNode && p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			return running == 2, fmt.Sprintf("running=%d", running)
		})
		if len(violations) > 0 {
			t.Fatalf("the taint race is open: %s", strings.Join(violations, "; "))
		}
		n := &networkingv1alpha1.NodeElasticIP{}
		if err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, n); err != nil {
			t.Fatal(err)
		}
		if n.Status.AllocationID != poolFree || n.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			t.Fatalf("NodeElasticIP %+v", n.Status)
		}
		if a := addressOf(emu, poolFree); a.NetworkInterfaceID != eni(1) || a.PrivateIPAddress != primary(1) {
			t.Errorf("the pool address is on %s/%s, want the node's primary %s/%s", a.NetworkInterfaceID, a.PrivateIPAddress, eni(1), primary(1))
		}
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, node); err != nil {
			t.Fatal(err)
		}
		if nodepatch.HasTaint(node, taint) || node.Labels[networkingv1alpha1.LabelNodeElasticIP] != "198.51.100.31" {
			t.Errorf("node: taints %v labels %v", node.Spec.Taints, node.Labels)
		}
	})

	t.Run("an address kubeip put on a node is adopted, not moved", func(t *testing.T) {
		addNode(kubeipped, 2)
		eventually.That(ctx, t, "the adopted NodeElasticIP Ready", func() (bool, string) {
			n := &networkingv1alpha1.NodeElasticIP{}
			if err := c.Get(ctx, client.ObjectKey{Name: kubeipped}, n); err != nil {
				return false, err.Error()
			}
			return n.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && n.Status.AllocationID == poolKubeIP && n.Status.Adopted != "",
				fmt.Sprintf("%+v", n.Status)
		})
		if a := addressOf(emu, poolKubeIP); a.AssociationID != kubeipAssociation {
			t.Errorf("kubeip's address was re-associated: %s, was %s", a.AssociationID, kubeipAssociation)
		}
	})

	t.Run("deleting the node gives its address back to the pool", func(t *testing.T) {
		if err := cluster.DeleteNode(ctx, edgeNode); err != nil {
			t.Fatal(err)
		}
		eventually.That(ctx, t, "the address given back and the NodeElasticIP gone", func() (bool, string) {
			a := addressOf(emu, poolFree)
			err := c.Get(ctx, client.ObjectKey{Name: edgeNode}, &networkingv1alpha1.NodeElasticIP{})
			given := a.AllocationID != "" && a.AssociationID == "" && tagOf(a, decide.TagOwnerUID) == "" && tagOf(a, "kubeip") == "reserved"
			return given && client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("address %+v, NodeElasticIP err %v", a, err)
		})
	})
}

func addressOf(emu *cloudsimtest.Emulator, id string) core.EC2Address {
	for _, a := range emu.World().Snapshot().EC2.Addresses {
		if a.AllocationID == id {
			return a
		}
	}
	return core.EC2Address{}
}

func tagOf(a core.EC2Address, key string) string {
	for _, t := range a.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}

// nodeWebhookConfiguration mirrors the +kubebuilder:webhook marker of the
// nodeelasticip package (envtest joins the path with a slash).
func nodeWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	path := strings.TrimPrefix(nodeelasticip.NodeWebhookPath, "/")
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-nodeelasticip-e2e"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "neip.nodes.networking.edgeplane.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "edgeplane", Path: &path}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
			}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](3),
			ReinvocationPolicy:      &ifNeeded,
		}},
	}
}
