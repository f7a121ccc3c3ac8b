package legacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}

// world is the cluster (the shared API server), the cloud emulator and a
// running edgeplane manager with every controller but the IngressDaemonSet
// one (its test drives that reconciler on a clock of its own).
type world struct {
	t   *testing.T
	ctx context.Context
	emu *cloudsimtest.Emulator
	// extender and api are the float-IP servers' base URLs, and
	// extenderClient and apiClient call them as kube-scheduler (its client
	// certificate) and an allowed galaxy API user (a bearer token) do.
	extender, api             string
	extenderClient, apiClient *http.Client
}

// Legacy inputs the manager must find when it starts, and the cloud's
// fixtures, are set up by each project's setup function before the manager
// runs; its test then checks what edgeplane made of them.
type project struct {
	name     string
	fixtures func(*core.Fixtures)
	setup    func(*world)
	test     func(*testing.T, *world)
}

func startWorld(t *testing.T, projects []project) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fx := &core.Fixtures{}
	for _, p := range projects {
		if p.fixtures != nil {
			p.fixtures(fx)
		}
	}
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 18, Fixtures: fx, Settings: core.Settings{
		RateLimitsDisabled: true,
		TaskDuration:       core.Duration(200 * time.Millisecond),
		EC2AddressQuota:    100,
		EC2PublicIPv4Pools: map[string]string{"amazon": "198.18.0.0/16", "amazon-staticbgp": "198.19.0.0/16"},
	}})
	w := &world{t: t, ctx: ctx, emu: emu}
	w.providerConfigs()
	for _, p := range projects {
		if p.setup != nil {
			p.setup(w)
		}
	}
	w.startManager()
	return w
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// startManager runs edgeplane's manager, as the binary builds it, until the
// test ends.
func (w *world) startManager() {
	t := w.t
	extender, api := freeAddr(t), freeAddr(t)
	w.extender, w.api = "https://"+extender, "https://"+api
	certs := floatippooltest.Write(t, "")
	w.extenderClient = certs.Client(t)
	w.apiClient = certs.APIClient(t, floatippooltest.GalaxyCaller(t, w.ctx, env.Client, "default", "galaxy-script"))
	all := manager.Controllers()
	fs := pflag.NewFlagSet("controllers", pflag.ContinueOnError)
	manager.BindControllerFlags(fs, all)
	if err := fs.Parse([]string{
		"--floatippool-extender-address=" + extender, "--floatippool-api-address=" + api,
		"--floatippool-cert-dir=" + certs.ServerDir, "--floatippool-certs=provided",
		"--anycastipbinding-provider-config=" + tencentConfig, "--anycastipbinding-orphan-mode=off",
		"--podelasticip-legacy-cluster-name=" + pecClusterName, "--podelasticip-orphan-mode=off",
		// The admin lets claims take the README's pool, as a migration does.
		"--podelasticip-claimable-tags=pec-ip-pool",
		"--podelasticip-poll-interval=2s", "--podelasticip-max-backoff=2s",
		"--nodeelasticip-node-selector=" + kubeipSelector, "--nodeelasticip-pool-filter=" + kubeipFilter,
		"--nodeelasticip-taint-key=" + kubeipTaint, "--nodeelasticip-kubeip-label", "--nodeelasticip-orphan-mode=off",
		"--nodeelasticip-node-webhook=false",
	}); err != nil {
		t.Fatalf("parsing controller flags: %v", err)
	}
	o := manager.DefaultOptions()
	o.Controllers = []string{"*", "-ingressdaemonset"}
	o.ClusterName = "legacy-golden"
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.LeaderElectionNamespace = "default"
	o.LeaderElectionID = "edgeplane-legacy-golden"
	o.WebhookServiceNamespace = "default"
	o.WebhookHost = "127.0.0.1"
	webhook := freeAddr(t)
	_, port, _ := net.SplitHostPort(webhook)
	if _, err := fmt.Sscan(port, &o.WebhookPort); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "edgeplane-legacy-certs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	o.WebhookCertDir = dir
	mgr, err := manager.New(w.ctx, env.Config, o, all)
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with: %v", err)
		}
	})
}

func (w *world) create(objs ...client.Object) {
	w.t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(w.ctx, o); err != nil {
			w.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func (w *world) namespace(name string) {
	w.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(w.ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		w.t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// node creates a node with labels, an InternalIP and a providerID (each
// optional), Ready: without the node.kubernetes.io/not-ready taint the API
// server adds at creation and the node lifecycle controller (not running
// here) removes once the kubelet reports Ready, so pods may be bound to it.
func (w *world) node(name, internalIP string, labels map[string]string, providerID ...string) {
	w.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if len(providerID) > 0 {
		n.Spec.ProviderID = providerID[0]
	}
	if err := env.CreateReadyNode(w.ctx, n); err != nil {
		w.t.Fatal(err)
	}
	if internalIP != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: internalIP}}
		if err := env.Client.Status().Update(w.ctx, n); err != nil {
			w.t.Fatalf("setting node %s's address: %v", name, err)
		}
	}
}

// crd installs a CustomResourceDefinition whose objects keep every field.
func (w *world) crd(group, plural, kind string, scope apiextensionsv1.ResourceScope) {
	w.t.Helper()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		// galaxy.k8s.io is a protected group: the API server wants this
		// annotation (galaxy-ipam's own CRDs carry none and install through
		// an older path; the test only needs the kind served).
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group,
			Annotations: map[string]string{"api-approved.kubernetes.io": "unapproved, a test copy of a legacy CRD"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: scope,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		w.t.Fatalf("installing CRD %s: %v", crd.Name, err)
	}
}

// The ClusterProviderConfigs: AWS ones for PodElasticIP (translated ones
// use "default"), a Tencent Cloud one for AnycastIPBinding whose Secret
// keeps the legacy charts' key names.
const (
	tencentConfig = "tencent-legacy"
	tencentSecret = "aia-ip-controller-credential"
)

func (w *world) providerConfigs() {
	w.t.Helper()
	w.namespace("edgeplane-system")
	w.create(
		&cloudv1alpha1.ClusterProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Name: cloudv1alpha1.DefaultProviderConfigName},
			Spec: cloudv1alpha1.ClusterProviderConfigSpec{
				CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "ap-southeast-1", Endpoint: w.emu.URL(), ClusterIdentity: "legacy-golden"},
				Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
			},
		},
		// aia-ip-controller's chart keeps the credentials in the Secret
		// <release>-credential under secretID and secretKey.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "edgeplane-system", Name: tencentSecret},
			Data: map[string][]byte{"secretID": []byte(tencentcloud.EmulatorSecretID), "secretKey": []byte(tencentcloud.EmulatorSecretKey)}},
		&cloudv1alpha1.ClusterProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Name: tencentConfig},
			Spec: cloudv1alpha1.ClusterProviderConfigSpec{
				CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: w.emu.URL(), ClusterIdentity: "legacy-golden"},
				Credentials: cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
					SecretRef: &cloudv1alpha1.SecretReference{Namespace: "edgeplane-system", Name: tencentSecret}},
			},
		},
	)
}

// events lists the Events regarding an object (by UID) with reason.
func events(t *testing.T, ctx context.Context, namespace string, uid string, reason string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if string(ev.Regarding.UID) == uid && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// call sends a JSON request to one of the manager's HTTP servers and
// decodes the JSON reply into out (nil: ignore it).
func call(t *testing.T, c *http.Client, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, url, b, err)
		}
	}
	return resp.StatusCode
}

// TestLegacyNames checks, per legacy project, that every name its own
// documentation gives (annotations, labels, taints, ConfigMap names and
// keys, cloud tag keys, Event reasons, API fields) is what edgeplane's
// translators read and its controllers write, through the real API server
// and, for cloud tags, the cloud emulator. The expected values are string
// literals copied from the legacy projects' READMEs (or, where a name is
// only in the legacy code, from that code), never edgeplane's constants:
// a typo in a constant fails this test.
func TestLegacyNames(t *testing.T) {
	projects := []project{aiaIPController(), awsPodEIPController(), galaxyIPAM(), tkeResilience(), ingressDaemonSetController(), kubeIP()}
	w := startWorld(t, projects)
	for _, p := range projects {
		t.Run(p.name, func(t *testing.T) { p.test(t, w) })
	}
}
