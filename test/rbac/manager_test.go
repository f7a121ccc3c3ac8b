package rbac_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding"
	aiadecide "github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	bptranslate "github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	neipdecide "github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/managertest"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// The chart is rendered as release "edgeplane" into managerNS: the manager
// runs as system:serviceaccount:edgeplane-system:edgeplane.
const (
	managerNS   = "edgeplane-system"
	release     = "edgeplane"
	credsNS     = "team-a"
	appNS       = "apps"
	eni         = "eni-0000000000000001"
	podIP       = "10.0.1.5"
	legacyPodIP = "10.0.1.6"
	aiaNode     = "edge-node-1"
	aiaInstance = "ins-node0001"
	neipNode    = "eip-node-1"
	neipENI     = "eni-0000000000000002"
	neipIP      = "10.0.0.20"
)

// forbiddenLog collects every log line of the manager (controller-runtime's
// logger and client-go's klog, where reflectors report failed lists and
// watches) that says the API server refused a request.
type forbiddenLog struct {
	mu    sync.Mutex
	lines []string
	all   bytes.Buffer
}

func (f *forbiddenLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all.Write(p)
	for _, l := range strings.Split(string(p), "\n") {
		if strings.Contains(l, "forbidden") || strings.Contains(l, "Forbidden") {
			f.lines = append(f.lines, l)
		}
	}
	return len(p), nil
}

func (f *forbiddenLog) forbidden() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

// suite is the cluster the manager runs in: the chart's RBAC applied, the
// chart's webhook configurations pointed at the in-process webhook server,
// and one emulator for both clouds.
type suite struct {
	t       *testing.T
	ctx     context.Context
	c       client.Client
	sim     *cloudsimtest.Emulator
	log     *forbiddenLog
	cluster string // the cluster identity the manager resolves (kube-system's UID)
	// extender and api are the float-IP servers' loopback addresses.
	extender, api string
}

// TestManagerUnderChartRBAC runs every controller of the manager, its
// translators, sweeps, webhooks and certificate rotation, as the manager's
// ServiceAccount holding exactly the RBAC the chart renders: a permission
// the chart lacks fails a step below (and is named by the forbidden-request
// check at the end), instead of surfacing on a real cluster.
func TestManagerUnderChartRBAC(t *testing.T) {
	s := newSuite(t)
	// Each step waits for a state only a permitted write can reach.
	t.Run("webhook certificate and caBundle", s.webhookCertificate)
	t.Run("webhook scope", s.webhookScope)
	t.Run("provider configs", s.providerConfigs)
	t.Run("IngressDaemonSet", s.ingressDaemonSet)
	t.Run("PodElasticIP", s.podElasticIP)
	t.Run("AnycastIPBinding", s.anycastIPBinding)
	t.Run("NodeElasticIP", s.nodeElasticIP)
	t.Run("FloatIPPool", s.floatIPPool)
	t.Run("float-IP servers and their certificates", s.floatIPServers)
	t.Run("BurstPolicy", s.burstPolicy)
	if lines := s.log.forbidden(); len(lines) > 0 {
		t.Errorf("the manager was refused %d requests under the chart's RBAC:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func newSuite(t *testing.T) *suite {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	s := &suite{t: t, ctx: ctx, c: env.Client, log: &forbiddenLog{}}
	for _, ns := range []string{managerNS, credsNS, appNS} {
		if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	ks := &corev1.Namespace{}
	if err := s.c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ks); err != nil {
		t.Fatal(err)
	}
	s.cluster = string(ks.UID)

	// The galaxy API on, so its authorisation runs under the chart's RBAC too.
	objs := helmTemplate(t, release, managerNS, "credentialNamespaces={"+credsNS+"}", "floatIP.api.enabled=true")
	webhookAddr := testbin.FreeAddr(t)
	for _, u := range objs {
		switch u.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			// What the manager may change of a Secret it may patch.
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			toURL(t, u, "https://"+webhookAddr)
			// The webhook server ends with this test; later tests of the
			// package must not be refused by a configuration pointing at it.
			t.Cleanup(func() { _ = s.c.Delete(context.Background(), u) })
		default:
			continue
		}
		if err := s.c.Create(ctx, u); err != nil {
			t.Fatalf("applying the chart's %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	s.sim = cloudsimtest.Start(t, cloudsim.Options{Seed: 3, Settings: core.Settings{
		RateLimitsDisabled: true, EC2AddressQuota: 100, TaskDuration: core.Duration(100 * time.Millisecond),
	}, Fixtures: fixtures(s.cluster)})
	for _, cpc := range []*cloudv1alpha1.ClusterProviderConfig{
		managertest.EmulatorConfig(cloudv1alpha1.DefaultProviderConfigName, cloudv1alpha1.ProviderAWS, "us-east-1", s.sim.URL()),
		managertest.EmulatorConfig("tencentcloud", cloudv1alpha1.ProviderTencentCloud, "ap-hongkong", s.sim.URL()),
	} {
		s.create(cpc)
	}

	s.extender, s.api = testbin.FreeAddr(t), testbin.FreeAddr(t)
	s.startManager(managerArgs(t, objs), webhookAddr)
	return s
}

// toURL points each webhook of a rendered configuration at the local
// server (the in-cluster Service does not exist here), as hack/demowebhooks
// does for the demo.
func toURL(t *testing.T, u *unstructured.Unstructured, base string) {
	t.Helper()
	hooks, _, err := unstructured.NestedSlice(u.Object, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		hook := h.(map[string]any)
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		hook["clientConfig"] = map[string]any{"url": base + path}
	}
	if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
		t.Fatal(err)
	}
}

// fixtures: an EC2 instance whose ENI holds the pods' IPs, an orphaned Auto
// address of this cluster for the PodElasticIP sweep, the EC2 instance of
// the NodeElasticIP node and an orphaned address of a NodeElasticIP gone
// for its sweep, the CVM instance
// behind the AnycastIPBinding node and an orphaned address of this cluster
// (binding and node gone) for its sweep.
func fixtures(cluster string) *core.Fixtures {
	return &core.Fixtures{
		EC2: core.EC2Fixtures{
			Instances: []core.EC2InstanceFixture{{InstanceID: "i-0000000000000001", VpcID: "vpc-1", SubnetID: "subnet-1",
				NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: eni, PrivateIPAddresses: []string{"10.0.0.10", podIP, legacyPodIP}}}},
				{InstanceID: "i-0000000000000002", VpcID: "vpc-1", SubnetID: "subnet-1", AvailabilityZone: "us-east-1a",
					NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: neipENI, PrivateIPAddresses: []string{neipIP}}}}},
			Addresses: []core.EC2AddressFixture{{AllocationID: "eipalloc-00000000000000f1", Tags: map[string]string{
				decide.TagCluster: cluster, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "gone-uid",
				decide.TagPod: appNS + "/gone", decide.TagMode: "Auto"}},
				{AllocationID: "eipalloc-00000000000000f2", Tags: map[string]string{
					neipdecide.TagCluster: cluster, neipdecide.TagOwnerKind: neipdecide.OwnerKind, neipdecide.TagOwnerUID: "gone-uid",
					neipdecide.TagNode: "gone-node", neipdecide.TagMode: "Auto"}}},
		},
		Tencent: core.TencentFixtures{
			Instances: []core.TCInstanceFixture{{InstanceID: aiaInstance, PrivateIPAddresses: []string{"10.1.0.1"}}},
			Addresses: []core.TCAddressFixture{{AddressID: "eip-orphan01", AddressType: "AnycastEIP", Tags: map[string]string{
				aiadecide.TagCluster: cluster, aiadecide.TagOwnerUID: "gone-uid", aiadecide.TagNodeName: "gone-node"}}},
		},
	}
}

// startManager builds the manager from the chart's own arguments, with what
// cannot work outside a pod replaced (listen addresses, the certificate
// folder) and short sweep intervals, and a rest.Config that impersonates the
// chart's ServiceAccount.
func (s *suite) startManager(chartArgs map[string]string, webhookAddr string) {
	t := s.t
	_, port, _ := net.SplitHostPort(webhookAddr)
	overrides := map[string]string{
		"metrics-bind-address": "0", "health-probe-bind-address": "0",
		"webhook-host": "127.0.0.1", "webhook-port": port, "webhook-cert-dir": t.TempDir(),
		"floatippool-extender-address": s.extender, "floatippool-api-address": s.api, "floatippool-cert-dir": t.TempDir(),
		"floatippool-sweep-interval": "2s", "floatippool-migrate-interval": "2s",
		"anycastipbinding-provider-config": "tencentcloud",
		"podelasticip-orphan-interval":     "2s", "podelasticip-orphan-grace-period": "1s",
		"anycastipbinding-orphan-interval": "2s", "anycastipbinding-orphan-grace-period": "1s",
		"nodeelasticip-orphan-interval": "2s", "nodeelasticip-orphan-grace-period": "1s",
	}
	var args []string
	for k, v := range chartArgs {
		if _, ok := overrides[k]; !ok {
			args = append(args, "--"+k+"="+v)
		}
	}
	for k, v := range overrides {
		args = append(args, "--"+k+"="+v)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + managerNS + ":" + release}
	t.Cleanup(func() {
		if t.Failed() {
			s.log.mu.Lock()
			t.Logf("manager log:\n%s", s.log.all.String())
			s.log.mu.Unlock()
		}
	})
	managertest.Start(t, context.Background(), cfg, args, s.log)
}

func (s *suite) create(objs ...client.Object) {
	s.t.Helper()
	for _, o := range objs {
		if err := s.c.Create(s.ctx, o); err != nil {
			s.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// eventually polls cond (generously: the machine may be loaded) until it
// holds; last says what was seen.
func (s *suite) eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(s.ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		var ok bool
		ok, last = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last seen: %s", what, err, last)
	}
}

// gone waits until obj is deleted (finalizers released).
func (s *suite) gone(t *testing.T, obj client.Object) {
	t.Helper()
	s.eventually(t, fmt.Sprintf("%T %s gone", obj, obj.GetName()), func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("err %v finalizers %v", err, obj.GetFinalizers())
	})
}

func (s *suite) delete(t *testing.T, obj client.Object) {
	t.Helper()
	if err := s.c.Delete(s.ctx, obj); err != nil {
		t.Fatalf("deleting %T %s: %v", obj, obj.GetName(), err)
	}
	s.gone(t, obj)
}

// webhookCertificate: the rotator creates its Secret and patches the caBundle
// of both configurations, by name.
func (s *suite) webhookCertificate(t *testing.T) {
	s.eventually(t, "the certificate Secret", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKey{Namespace: managerNS, Name: release + "-webhook-cert"}, &corev1.Secret{})
		return err == nil, fmt.Sprint(err)
	})
	s.eventually(t, "caBundles injected", func() (bool, string) {
		mw := &admissionregistrationv1.MutatingWebhookConfiguration{}
		vw := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: release + "-mutating"}, mw); err != nil {
			return false, err.Error()
		}
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: release + "-validating"}, vw); err != nil {
			return false, err.Error()
		}
		for _, w := range mw.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, "no caBundle on " + w.Name
			}
		}
		for _, w := range vw.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, "no caBundle on " + w.Name
			}
		}
		return true, ""
	})
}

// webhookRequests is the webhook server's request count for path.
func webhookRequests(t *testing.T, path string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if promtext.Labels(m)["webhook"] == path {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func plainPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

// webhookScope: pods created in kube-system and in the manager's namespace
// never reach the pod webhook, a pod elsewhere does; a node without the
// AnycastIPBinding label never reaches the node webhook.
func (s *suite) webhookScope(t *testing.T) {
	before := webhookRequests(t, burstpolicy.PodWebhookPath)
	s.create(plainPod(metav1.NamespaceSystem, "scope-system", nil), plainPod(managerNS, "scope-manager", nil))
	nodesBefore := webhookRequests(t, anycastipbinding.NodeWebhookPath)
	s.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "scope-unlabelled"}})
	s.create(plainPod(appNS, "scope-app", nil))
	// The API server calls a webhook before it stores the object, but the
	// webhook server counts a request only once it has answered it: wait
	// for the app pod's request to be counted. The others' were answered
	// before it was made, so they would be counted by then too.
	var got float64
	eventually.That(s.ctx, t, "the pod webhook's request for the app pod counted", func() (bool, string) {
		got = webhookRequests(t, burstpolicy.PodWebhookPath) - before
		return got >= 1, fmt.Sprintf("%v requests", got)
	})
	if got != 1 {
		t.Errorf("the pod webhook got %v requests for pods in kube-system, %s and %s; want 1 (the %s pod)", got, managerNS, appNS, appNS)
	}
	if got := webhookRequests(t, anycastipbinding.NodeWebhookPath) - nodesBefore; got != 0 {
		t.Errorf("the node webhook got %v requests for a node without the selector label", got)
	}
}

// conditioned is a kind with crossplane conditions.
type conditioned interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

func ready(conds conditioned) (bool, string) {
	c := conds.GetCondition(xpv2.TypeReady)
	return c.Status == corev1.ConditionTrue, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

// providerConfigs: both configs become Ready, one whose credentials Secret
// lives in a credentials namespace too; while that config is in use it holds
// its Secret (with its finalizer, the one change the chart's policy lets the
// manager make) and the usage (until the resource is gone); an unused config
// is deleted.
func (s *suite) providerConfigs(t *testing.T) {
	s.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credsNS, Name: "aws-creds"},
		StringData: map[string]string{"aws_access_key_id": "AKIAEXAMPLE", "aws_secret_access_key": "secret"}})
	withSecret := managertest.EmulatorConfig("with-secret", cloudv1alpha1.ProviderAWS, "us-east-1", s.sim.URL())
	withSecret.Spec.Credentials = cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
		SecretRef: &cloudv1alpha1.SecretReference{Namespace: credsNS, Name: "aws-creds"}}
	s.create(withSecret)
	for _, name := range []string{cloudv1alpha1.DefaultProviderConfigName, "tencentcloud", "with-secret"} {
		cpc := &cloudv1alpha1.ClusterProviderConfig{}
		s.eventually(t, "ClusterProviderConfig "+name+" Ready", func() (bool, string) {
			if err := s.c.Get(s.ctx, client.ObjectKey{Name: name}, cpc); err != nil {
				return false, err.Error()
			}
			return ready(cpc)
		})
	}
	yes := true
	use := &cloudv1alpha1.ProviderConfigUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "uses-with-secret",
			Labels: map[string]string{xpv2.LabelKeyProviderKind: cloudv1alpha1.ClusterProviderConfigKind, xpv2.LabelKeyProviderName: "with-secret"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "PodElasticIP",
				Name: "gone", UID: "uid-gone", Controller: &yes}}},
		TypedProviderConfigUsage: xpv2.TypedProviderConfigUsage{
			ProviderConfigReference: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "with-secret"},
			ResourceReference:       xpv2.TypedReference{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "PodElasticIP", Name: "gone"},
		},
	}
	s.create(use)
	held := func(want bool) func() (bool, string) {
		return func() (bool, string) {
			sec := &corev1.Secret{}
			if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: credsNS, Name: "aws-creds"}, sec); err != nil {
				return false, err.Error()
			}
			return slices.Contains(sec.Finalizers, "clusterproviderconfig.cloud.edgeplane.io/with-secret") == want, fmt.Sprintf("finalizers %v", sec.Finalizers)
		}
	}
	s.eventually(t, "the config in use holding its Secret", held(true))
	// The usage's resource is gone: the usage (held by the manager's
	// finalizer) goes once deleted, and the Secret is let go.
	if err := s.c.Delete(s.ctx, use); err != nil {
		t.Fatal(err)
	}
	s.gone(t, use)
	s.eventually(t, "the unused config letting its Secret go", held(false))
	s.delete(t, withSecret)
}

func (s *suite) node(name string, labels map[string]string, providerID ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if len(providerID) > 0 {
		n.Spec.ProviderID = providerID[0]
	}
	s.create(n)
	return n
}

// ingressDaemonSet: a Deployment per node in the IngressDaemonSet's
// namespace; the health checker's DaemonSet in the manager's namespace, as
// the chart's health-check ServiceAccount, and nothing else written in the
// tenant's namespace; an earlier version's health checker there removed;
// deletion removes the health checker and releases the finalizer.
func (s *suite) ingressDaemonSet(t *testing.T) {
	s.node("ids-node", map[string]string{"role": "ingress"})
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: appNS},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			// Not yet matching the selector: nothing is made until the
			// earlier version's health checker below exists.
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "not-yet"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
			NodeSelector:         map[string]string{"role": "ingress"},
			HealthCheckNodePorts: []int32{10080},
		},
	}
	s.create(ids)
	labels := map[string]string{appsv1alpha1.LabelIngressDaemonSet: "ing", appsv1alpha1.LabelHealthCheckPort: "10080"}
	legacy := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing-10080", Namespace: appNS, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ids, appsv1alpha1.GroupVersion.WithKind("IngressDaemonSet"))}},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "healthcheck", Image: "old"}}}}},
	}
	s.create(legacy)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(ids), ids); err != nil {
			return err
		}
		ids.Spec.Template.Metadata.Labels["app"] = "ing"
		return s.c.Update(s.ctx, ids)
	}); err != nil {
		t.Fatal(err)
	}
	s.eventually(t, "the node's Deployment", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKey{Namespace: appNS, Name: "ing-ids-node"}, &appsv1.Deployment{})
		return err == nil, fmt.Sprint(err)
	})
	checker := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: naming.HealthCheckerName(appNS, "ing", 10080)}}
	s.eventually(t, "the health checker", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(checker), checker); err != nil {
			return false, err.Error()
		}
		sa := checker.Spec.Template.Spec.ServiceAccountName
		return sa == release+"-ingressdaemonset-healthcheck", "ServiceAccount " + sa
	})
	s.gone(t, legacy)
	var rbs rbacv1.RoleBindingList
	if err := s.c.List(s.ctx, &rbs, client.InNamespace(appNS)); err != nil || len(rbs.Items) != 0 {
		t.Errorf("RoleBindings in the tenant's namespace: %d (%v), want none", len(rbs.Items), err)
	}
	s.delete(t, ids)
	s.gone(t, checker)
}

// podElasticIP: an address allocated and associated, the pod's readiness
// condition written; the translator turns a legacy annotation into a
// PodElasticIP; deletion releases the addresses; the sweep releases the
// orphan the emulator started with.
func (s *suite) podElasticIP(t *testing.T) {
	runPod := func(name, ip string, annotations map[string]string) {
		p := plainPod(appNS, name, nil)
		p.Annotations = annotations
		p.Spec.NodeName = "w1"
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: networkingv1alpha1.PodConditionElasticIPReady}}
		s.create(p)
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.HostIP = ip, "10.0.0.10"
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		if err := s.c.Status().Update(s.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	runPod("eip", podIP, nil)
	peip := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "eip"},
		Spec: networkingv1alpha1.PodElasticIPSpec{PodName: "eip", Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}}}
	s.create(peip)
	runPod("legacy", legacyPodIP, map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "auto"})

	for _, name := range []string{"eip", "legacy"} {
		p := &networkingv1alpha1.PodElasticIP{}
		s.eventually(t, "PodElasticIP "+name+" Ready", func() (bool, string) {
			if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: appNS, Name: name}, p); err != nil {
				return false, err.Error()
			}
			return ready(p)
		})
		s.eventually(t, "pod "+name+"'s readiness condition", func() (bool, string) {
			pod := &corev1.Pod{}
			if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: appNS, Name: name}, pod); err != nil {
				return false, err.Error()
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == networkingv1alpha1.PodConditionElasticIPReady {
					return c.Status == corev1.ConditionTrue, string(c.Status)
				}
			}
			return false, "no condition"
		})
	}
	s.eventually(t, "the orphan swept", func() (bool, string) {
		for _, a := range s.sim.World().Snapshot().EC2.Addresses {
			if a.AllocationID == "eipalloc-00000000000000f1" {
				return false, "still there"
			}
		}
		return true, ""
	})
	// The pod goes first, so the translator does not give it a new one
	// (envtest runs no garbage collector, which would delete the translated
	// PodElasticIP with its pod, and no kubelet: the pod goes at once).
	s.delete(t, peip)
	if err := s.c.Delete(s.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "legacy"}}, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	s.delete(t, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "legacy"}})
	s.eventually(t, "every address released", func() (bool, string) {
		n := len(s.sim.World().Snapshot().EC2.Addresses)
		return n == 0, fmt.Sprintf("%d addresses", n)
	})
}

// anycastIPBinding: a labelled node is tainted by the webhook at admission,
// the translator gives it a binding, the bound address lifts the taint;
// removing the node releases the address, and the sweep releases the
// orphan the emulator started with.
func (s *suite) anycastIPBinding(t *testing.T) {
	n := s.node(aiaNode, map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}, "qcloud:///800002/"+aiaInstance)
	tainted := false
	for _, taint := range n.Spec.Taints {
		tainted = tainted || taint.Key == networkingv1alpha1.LegacyTaintNoAIAIP
	}
	if !tainted {
		t.Errorf("the node webhook did not taint %s at admission: %v", aiaNode, n.Spec.Taints)
	}
	b := &networkingv1alpha1.AnycastIPBinding{}
	s.eventually(t, "the translated binding Ready", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: aiaNode}, b); err != nil {
			return false, err.Error()
		}
		return ready(b)
	})
	s.eventually(t, "the taint lifted", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: aiaNode}, n); err != nil {
			return false, err.Error()
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == networkingv1alpha1.LegacyTaintNoAIAIP {
				return false, fmt.Sprint(n.Spec.Taints)
			}
		}
		return true, ""
	})
	if err := s.c.Delete(s.ctx, n); err != nil {
		t.Fatal(err)
	}
	s.gone(t, b)
	s.eventually(t, "the address released and the orphan swept", func() (bool, string) {
		as := s.sim.World().Snapshot().Tencent.Addresses
		return len(as) == 0, fmt.Sprintf("%d addresses", len(as))
	})
}

// nodeElasticIP: a node carrying the chart's selector label is tainted by
// the node webhook at admission, the translator gives it a NodeElasticIP,
// the address on its primary private IP marks the node and lifts the
// taint; the node leaving the selector deletes the NodeElasticIP, which
// releases the address and unmarks the node; the sweep releases the
// orphan the emulator started with.
func (s *suite) nodeElasticIP(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: neipNode, Labels: map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0000000000000002"}}
	s.create(n)
	pending := func(n *corev1.Node) bool {
		for _, taint := range n.Spec.Taints {
			if taint.Key == networkingv1alpha1.DefaultNodeElasticIPTaintKey {
				return true
			}
		}
		return false
	}
	if !pending(n) {
		t.Errorf("the node webhook did not taint %s at admission: %v", neipNode, n.Spec.Taints)
	}
	neip := &networkingv1alpha1.NodeElasticIP{}
	s.eventually(t, "the translated NodeElasticIP Ready", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: neipNode}, neip); err != nil {
			return false, err.Error()
		}
		return ready(neip)
	})
	id := neip.Status.AllocationID
	onNode := false
	for _, a := range s.sim.World().Snapshot().EC2.Addresses {
		onNode = onNode || (a.AllocationID == id && a.NetworkInterfaceID == neipENI && a.PrivateIPAddress == neipIP)
	}
	if !onNode {
		t.Errorf("address %q is not on %s's primary private IP %s", id, neipNode, neipIP)
	}
	s.eventually(t, "the node marked and the taint lifted", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: neipNode}, n); err != nil {
			return false, err.Error()
		}
		ok := n.Labels[networkingv1alpha1.LabelNodeElasticIP] == neip.Status.PublicIP && n.Labels[networkingv1alpha1.LabelNodeElasticIP] != "" &&
			n.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID] == id && !pending(n)
		return ok, fmt.Sprintf("labels %v annotations %v taints %v", n.Labels, n.Annotations, n.Spec.Taints)
	})

	// The node leaves the selector: the translator deletes its
	// NodeElasticIP, whose deletion releases the address and unmarks it.
	delete(n.Labels, networkingv1alpha1.LabelWantElasticIP)
	if err := s.c.Update(s.ctx, n); err != nil {
		t.Fatal(err)
	}
	s.gone(t, neip)
	s.eventually(t, "the node unmarked", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: neipNode}, n); err != nil {
			return false, err.Error()
		}
		_, annotated := n.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID]
		return n.Labels[networkingv1alpha1.LabelNodeElasticIP] == "" && !annotated, fmt.Sprintf("labels %v annotations %v", n.Labels, n.Annotations)
	})
	s.eventually(t, "the address released and the orphan swept", func() (bool, string) {
		as := s.sim.World().Snapshot().EC2.Addresses
		return len(as) == 0, fmt.Sprintf("%d addresses: %+v", len(as), as)
	})
	if err := s.c.Delete(s.ctx, n); err != nil {
		t.Fatal(err)
	}
}

// floatIPPool: a pool passes the validating webhook and reports Ready;
// galaxy-ipam's ConfigMap in kube-system is translated into a pool;
// deletion releases the finalizer.
func (s *suite) floatIPPool(t *testing.T) {
	pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-a"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.2.0.10~10.2.0.20"}, Subnet: "10.2.0.0/16", Gateway: "10.2.0.1",
			NodeSubnets: []string{"192.168.1.0/24"}}}
	s.create(pool)
	s.eventually(t, "FloatIPPool Ready", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(pool.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", c)
	})
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "floatingip-config"},
		Data: map[string]string{"floatingips": `[{"routableSubnet":"192.168.2.0/24","ips":["10.3.0.10~10.3.0.20"],"subnet":"10.3.0.0/16","gateway":"10.3.0.1"}]`}})
	s.eventually(t, "the galaxy config translated", func() (bool, string) {
		var list networkingv1alpha1.FloatIPPoolList
		if err := s.c.List(s.ctx, &list); err != nil {
			return false, err.Error()
		}
		return len(list.Items) >= 2, fmt.Sprintf("%d pools", len(list.Items))
	})
	s.delete(t, pool)
}

// floatIPServers: the manager keeps the float-IP servers' certificate and
// kube-scheduler's client certificate in their Secrets, by the chart's
// names; the extender serves that client certificate and refuses a caller
// without it; the galaxy API asks the API server who its caller is and
// whether it may read a pool.
func (s *suite) floatIPServers(t *testing.T) {
	s.eventually(t, "the float-IP server certificate Secret", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKey{Namespace: managerNS, Name: release + "-floatip-server-cert"}, &corev1.Secret{})
		return err == nil, fmt.Sprint(err)
	})
	serverName := release + "-floatip." + managerNS + ".svc"
	scheduler := floatippooltest.SelfManagedTLS(t, s.ctx, s.c, managerNS, release+"-floatip-scheduler-client", serverName)
	get := func(cfg *tls.Config, url string, header ...string) (int, error) {
		var rt http.RoundTripper = &http.Transport{TLSClientConfig: cfg}
		if len(header) > 0 {
			rt = floatippooltest.Bearer(header[0], rt)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: rt}).Get(url)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	s.eventually(t, "the extender serving kube-scheduler", func() (bool, string) {
		code, err := get(scheduler, "https://"+s.extender+"/healthz")
		return code == http.StatusOK, fmt.Sprint(code, err)
	})
	noCert := scheduler.Clone()
	noCert.Certificates = nil
	if code, err := get(noCert, "https://"+s.extender+"/healthz"); err == nil {
		t.Errorf("the extender answered %d to a caller without the client certificate", code)
	}
	token := floatippooltest.GalaxyCaller(t, s.ctx, s.c, appNS, "galaxy-script")
	s.eventually(t, "the galaxy API serving an allowed caller", func() (bool, string) {
		code, err := get(noCert, "https://"+s.api+"/v1/pool/no-such-pool", token)
		return code == http.StatusNotFound, fmt.Sprint(code, err)
	})
	if code, err := get(noCert, "https://"+s.api+"/v1/pool/no-such-pool"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("the galaxy API without a token: %d %v, want 401", code, err)
	}
}

// burstPolicy: a policy reports status; the legacy eks-config ConfigMap in
// kube-system becomes the ClusterBurstPolicy "default"; a Deployment's legacy
// annotations become a BurstPolicy that goes with the Deployment; deletion
// works.
func (s *suite) burstPolicy(t *testing.T) {
	policy := &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: appNS},
		Spec: schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Trigger: schedulingv1alpha1.TriggerPending}}
	s.create(policy)
	s.eventually(t, "BurstPolicy status", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(policy), policy); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(policy.Status.Conditions, schedulingv1alpha1.TypeReady)
		return c != nil, fmt.Sprintf("%+v", policy.Status.Conditions)
	})
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "eks-config"},
		Data: map[string]string{"AUTO_SCALE_EKS": "true"}})
	s.eventually(t, "the ClusterBurstPolicy translated from eks-config", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKey{Name: "default"}, &schedulingv1alpha1.ClusterBurstPolicy{})
		return err == nil, fmt.Sprint(err)
	})
	labels := map[string]string{"app": "legacy-web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "legacy-web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
				bptranslate.AnnotationAutoScaleEKS: "true", bptranslate.AnnotationLocalReplicas: "1"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}}}
	s.create(dep)
	translated := &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: bptranslate.PolicyName("Deployment", dep.Name)}}
	s.eventually(t, "the BurstPolicy translated from the Deployment", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKeyFromObject(translated), translated)
		return err == nil, fmt.Sprint(err)
	})
	if err := s.c.Delete(s.ctx, dep); err != nil {
		t.Fatal(err)
	}
	s.gone(t, translated)
	s.delete(t, policy)
}
