//go:build e2e

// Package tenantnamespace_test deletes a tenant's namespace that holds
// PodElasticIPs, end to end on a local cluster: the real
// kube-controller-manager's namespace controller deletes the namespace's
// objects in its own order (the credentials Secret, the provider config
// usages and the ProviderConfig among them), the emulator is the cloud, and
// the namespace must finish deleting on its own with every address released.
package tenantnamespace_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/orphan"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/tenancy"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

const (
	tenant = "tenant-x"
	// onConfig PodElasticIPs use the tenant's own ProviderConfig (Secret
	// credentials); translated ones the platform's ClusterProviderConfig.
	onConfig   = 3
	translated = 2
)

func TestTenantNamespaceDeletionReleasesAddresses(t *testing.T) {
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
	cluster := localcluster.StartForTest(ctx, t, localcluster.Options{
		Scheme: scheme, Nodes: []localcluster.NodeSpec{{Name: "w1", CPU: resource.MustParse("8"), Memory: resource.MustParse("16Gi")}},
	})
	// The demo's fixtures: one ENI holding the kwok pod IPs.
	fx, err := cloudsim.LoadConfig(filepath.Join(root, "examples", "podelasticip", "cloudsim-fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	sim := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2AddressQuota: 100}, Fixtures: &fx.Fixtures})

	c := cluster.Client()
	cpc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: cloudv1alpha1.DefaultProviderConfigName}}
	cpc.Spec.Provider, cpc.Spec.Region, cpc.Spec.Endpoint, cpc.Spec.ClusterIdentity = cloudv1alpha1.ProviderAWS, "us-east-1", sim.URL(), "e2e"
	cpc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	if err := c.Create(ctx, cpc); err != nil {
		t.Fatal(err)
	}

	ctrl.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 0}))
	// The tenant's ProviderConfig talks to the emulator, which the admin
	// allows (--tenant-endpoints).
	policy, err := tenancy.NewPolicy([]string{sim.URL()})
	if err != nil {
		t.Fatal(err)
	}
	stopManager := startManager(ctx, t, cluster, setup.Config{ClusterName: "e2e", Tenancy: policy})

	// The tenant: its namespace, its credentials Secret (the emulator's
	// well-known keys, so the addresses land in the account holding the
	// fixtures' ENI) and its ProviderConfig.
	if err := cluster.CreateNamespace(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "aws-credentials"}, StringData: map[string]string{
		"aws_access_key_id": core.DefaultEC2AccessKeyID, "aws_secret_access_key": core.DefaultEC2SecretAccessKey,
	}}
	pc := &cloudv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "own-account"}}
	pc.Spec.Provider, pc.Spec.Region, pc.Spec.Endpoint = cloudv1alpha1.ProviderAWS, "us-east-1", sim.URL()
	pc.Spec.Credentials.Source = cloudv1alpha1.CredentialsSecret
	pc.Spec.Credentials.SecretRef = &cloudv1alpha1.LocalSecretReference{Name: secret.Name}
	for _, obj := range []client.Object{secret, pc} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// Pods: the first onConfig get hand-made PodElasticIPs on the tenant's
	// ProviderConfig, the others aws-pod-eip-controller's annotation (the
	// translator's PodElasticIPs, on the platform's account).
	var names []string
	for i := range onConfig + translated {
		name := fmt.Sprintf("app-%d", i)
		names = append(names, name)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.20"}},
		}}
		if i >= onConfig {
			pod.Annotations = map[string]string{translate.Type: translate.TypeAuto}
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if i < onConfig {
			peip := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name}}
			peip.Spec.PodName = name
			peip.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: pc.Name}
			if err := c.Create(ctx, peip); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually.That(ctx, t, "every PodElasticIP of the tenant Ready", func() (bool, string) {
		var list networkingv1alpha1.PodElasticIPList
		if err := c.List(ctx, &list, client.InNamespace(tenant)); err != nil {
			return false, err.Error()
		}
		var ready []string
		for _, p := range list.Items {
			if p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable {
				ready = append(ready, p.Name)
			}
		}
		slices.Sort(ready)
		return slices.Equal(ready, names), fmt.Sprintf("ready %v of %d: %s", ready, len(list.Items), describe(list.Items))
	})
	if n := len(tenantAddresses(sim)); n != onConfig+translated {
		t.Fatalf("%d addresses tagged for namespace %s, want %d", n, tenant, onConfig+translated)
	}

	// Delete the namespace while the manager is down: the namespace
	// controller deletes everything in it at once, the Secret and the
	// usages included, and the manager that comes back has none of the
	// account's clients cached (as after a restart, or once its cache
	// expired during a long deletion): every deletion must read the config
	// and its Secret again.
	stopManager()
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}}); err != nil {
		t.Fatal(err)
	}
	eventually.That(ctx, t, "the namespace controller's pass over the tenant namespace", func() (bool, string) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(tenant)); err != nil || len(pods.Items) > 0 {
			return false, fmt.Sprintf("%d pods left, %v", len(pods.Items), err)
		}
		sec := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), sec); err == nil && sec.DeletionTimestamp == nil {
			return false, "the Secret is not deleted yet"
		}
		var usages cloudv1alpha1.ProviderConfigUsageList
		if err := c.List(ctx, &usages, client.InNamespace(tenant)); err != nil {
			return false, err.Error()
		}
		for _, u := range usages.Items {
			if u.DeletionTimestamp == nil {
				return false, "usage " + u.Name + " is not deleted yet"
			}
		}
		return true, ""
	})
	stopManager = startManager(ctx, t, cluster, setup.Config{ClusterName: "e2e", Tenancy: policy})
	defer stopManager()
	eventually.That(ctx, t, "the tenant namespace gone", func() (bool, string) {
		ns := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: tenant}, ns)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, conditions %s; left: %s", ns.Status.Phase, namespaceConditions(ns), leftovers(ctx, c))
	})
	if left := tenantAddresses(sim); len(left) > 0 {
		t.Errorf("addresses of the deleted namespace still allocated: %v", left)
	}
	t.Logf("namespace %s with %d PodElasticIPs (%d on its own ProviderConfig) deleted; every address released", tenant, onConfig+translated, onConfig)
}

// startManager runs the provider config and PodElasticIP controllers as
// the manager does; the returned function stops them and waits until they
// have.
func startManager(ctx context.Context, t *testing.T, cluster *localcluster.Cluster, cfg setup.Config) func() {
	t.Helper()
	scheme := cluster.Client().Scheme()
	mgr, err := ctrl.NewManager(cluster.RESTConfig(), ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: manager.CacheOptions(""), // the manager's own cache, transforms included
		// The same controllers again, in this process, after a stop.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := providerconfig.Setup(ctx, mgr, cfg); err != nil {
		t.Fatal(err)
	}
	o := podelasticip.DefaultOptions()
	// The sweep is off: every address must be released by its
	// PodElasticIP's own deletion, not found later as an orphan.
	o.PollInterval, o.MaxBackoff, o.OrphanMode = 5*time.Second, 3*time.Second, orphan.ModeOff
	if err := o.Setup()(ctx, mgr, cfg); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	return func() { cancel(); <-done }
}

// tenantAddresses are the emulator's addresses tagged for the tenant's
// namespace.
func tenantAddresses(sim *cloudsimtest.Emulator) []string {
	var out []string
	for _, a := range sim.World().Snapshot().EC2.Addresses {
		for _, tag := range a.Tags {
			if tag.Key == "edgeplane.io/namespace" && tag.Value == tenant {
				out = append(out, a.AllocationID+"="+a.PublicIP)
			}
		}
	}
	return out
}

func describe(peips []networkingv1alpha1.PodElasticIP) string {
	var out []string
	for _, p := range peips {
		r, s := p.GetCondition(xpv2.TypeReady), p.GetCondition(xpv2.TypeSynced)
		out = append(out, fmt.Sprintf("%s: %s %s / %s", p.Name, r.Reason, r.Message, s.Message))
	}
	return strings.Join(out, "; ")
}

func namespaceConditions(ns *corev1.Namespace) string {
	var out []string
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	return strings.Join(out, "; ")
}

// leftovers names what still holds the namespace, with finalizers and
// the PodElasticIPs' Synced messages.
func leftovers(ctx context.Context, c client.Client) string {
	var out []string
	var peips networkingv1alpha1.PodElasticIPList
	if err := c.List(ctx, &peips, client.InNamespace(tenant)); err == nil {
		for _, p := range peips.Items {
			out = append(out, fmt.Sprintf("PodElasticIP %s %v (%s)", p.Name, p.Finalizers, p.GetCondition(xpv2.TypeSynced).Message))
		}
	}
	var usages cloudv1alpha1.ProviderConfigUsageList
	if err := c.List(ctx, &usages, client.InNamespace(tenant)); err == nil {
		for _, u := range usages.Items {
			out = append(out, fmt.Sprintf("ProviderConfigUsage %s %v", u.Name, u.Finalizers))
		}
	}
	var pcs cloudv1alpha1.ProviderConfigList
	if err := c.List(ctx, &pcs, client.InNamespace(tenant)); err == nil {
		for _, p := range pcs.Items {
			out = append(out, fmt.Sprintf("ProviderConfig %s %v users %d", p.Name, p.Finalizers, p.Status.Users))
		}
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.InNamespace(tenant)); err == nil {
		for _, s := range secrets.Items {
			out = append(out, fmt.Sprintf("Secret %s %v", s.Name, s.Finalizers))
		}
	}
	return strings.Join(out, "; ")
}
