package monitoring

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/managertest"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const (
	appNS       = "apps"
	eni         = "eni-0000000000000001"
	podIP       = "10.0.1.5"
	aiaNode     = "edge-node-1"
	aiaInstance = "ins-node0001"
	leaseID     = "edgeplane-monitoring"
)

// TestQueriesNameExportedMetrics runs the manager with every controller,
// leader election and plain-HTTP metrics on loopback against envtest and the
// cloud emulator, drives every kind once (and both webhooks and the float-IP
// extender, as the API server and kube-scheduler would call them), scrapes
// /metrics, and checks that every selector of every dashboard panel and
// every alert names a metric the scrape has, with labels it has.
func TestQueriesNameExportedMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	c := env.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}}); err != nil {
		t.Fatal(err)
	}
	ks := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ks); err != nil {
		t.Fatal(err)
	}
	sim := cloudsimtest.Start(t, cloudsim.Options{Seed: 5, Settings: core.Settings{
		EC2AddressQuota: 100, TaskDuration: core.Duration(100 * time.Millisecond),
	}, Fixtures: fixtures(string(ks.UID))})
	for _, cpc := range []*cloudv1alpha1.ClusterProviderConfig{
		managertest.EmulatorConfig(cloudv1alpha1.DefaultProviderConfigName, cloudv1alpha1.ProviderAWS, "us-east-1", sim.URL()),
		managertest.EmulatorConfig("tencentcloud", cloudv1alpha1.ProviderTencentCloud, "ap-hongkong", sim.URL()),
	} {
		create(t, ctx, cpc)
	}

	metricsAddr, webhookAddr, extenderAddr := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	startManager(t, metricsAddr, webhookAddr, extenderAddr)
	drive(t, ctx, webhookAddr, extenderAddr)

	exported := map[string]map[string]bool{}
	// Series appear as their reconciles, sweeps and calls happen: scrape
	// until every name the queries use is there (or time runs out, and the
	// comparison below names what is missing).
	queries := dashboardQueries(t)
	for _, r := range loadRules(t, readRepoFile(t, rulesFile)) {
		queries = append(queries, query{where: "alert " + r.Alert, expr: r.Expr})
	}
	exprs := make([]string, 0, len(queries))
	for _, q := range queries {
		exprs = append(exprs, q.promQL())
	}
	results := parseExprs(t, exprs)
	var missing []string
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		// A failed scrape (the poll's deadline may cut the last one) keeps
		// the previous one's answer.
		if got := scrape(t, ctx, "http://"+metricsAddr+"/metrics"); got != nil {
			exported = got
		}
		missing = compare(queries, results, exported)
		return len(missing) == 0, nil
	})
	for _, m := range missing {
		t.Error(m)
	}
	if t.Failed() {
		names := make([]string, 0, len(exported))
		for n := range exported {
			names = append(names, n)
		}
		slices.Sort(names)
		t.Logf("the manager exports: %s", strings.Join(names, " "))
	}
}

// query is one PromQL expression and where it comes from.
type query struct{ where, expr string }

// grafanaVars are the dashboard's variables as Grafana substitutes them.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "${datasource}", "prometheus", "$job", ".+")

func (q query) promQL() string { return grafanaVars.Replace(q.expr) }

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var d struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(readRepoFile(t, dashboardFile), &d); err != nil {
		t.Fatalf("reading %s: %v", dashboardFile, err)
	}
	var out []query
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, query{where: "panel " + p.Title, expr: tg.Expr})
		}
	}
	return out
}

// scrapeLabels are added by Prometheus when it scrapes, never by the
// exporter.
var scrapeLabels = []string{"job", "instance"}

// compare returns a line for every selector that names a metric the scrape
// lacks, or a label none of that metric's series has.
func compare(queries []query, results []parsed, exported map[string]map[string]bool) []string {
	var out []string
	for i, r := range results {
		if r.Error != "" {
			out = append(out, fmt.Sprintf("%s: %q does not parse: %s", queries[i].where, r.Expr, r.Error))
			continue
		}
		for _, s := range r.Selectors {
			labels, ok := exported[s.Metric]
			if !ok {
				out = append(out, fmt.Sprintf("%s: %s is not exported by the manager (in %q)", queries[i].where, s.Metric, queries[i].expr))
				continue
			}
			for _, l := range s.Labels {
				if !labels[l] && !slices.Contains(scrapeLabels, l) {
					out = append(out, fmt.Sprintf("%s: %s has no label %q (in %q)", queries[i].where, s.Metric, l, queries[i].expr))
				}
			}
		}
	}
	return out
}

// scrape reads /metrics and returns every series name a query can select
// (a histogram's _bucket, _sum and _count) with the label names its series
// carry.
func scrape(t *testing.T, ctx context.Context, url string) map[string]map[string]bool {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Logf("scraping %s: %v", url, err)
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	families, err := promtext.Parse(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	out := map[string]map[string]bool{}
	add := func(name string, m *dto.Metric, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range m.GetLabel() {
			out[name][l.GetName()] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				add(name+"_bucket", m, "le")
				add(name+"_sum", m)
				add(name+"_count", m)
			case dto.MetricType_SUMMARY:
				add(name, m, "quantile")
				add(name+"_sum", m)
				add(name+"_count", m)
			default:
				add(name, m)
			}
		}
	}
	return out
}

func create(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// fixtures: an EC2 instance whose ENI holds the pod's IP, the CVM instance
// behind the AnycastIPBinding node, and one orphaned address of this
// cluster per cloud, so both sweeps find, count and delete something.
func fixtures(cluster string) *core.Fixtures {
	return &core.Fixtures{
		EC2: core.EC2Fixtures{
			Instances: []core.EC2InstanceFixture{{InstanceID: "i-0000000000000001", VpcID: "vpc-1", SubnetID: "subnet-1",
				NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: eni, PrivateIPAddresses: []string{"10.0.0.10", podIP}}}}},
			Addresses: []core.EC2AddressFixture{{AllocationID: "eipalloc-00000000000000f1", Tags: map[string]string{
				decide.TagCluster: cluster, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "gone-uid",
				decide.TagPod: appNS + "/gone", decide.TagMode: "Auto"}}},
		},
		Tencent: core.TencentFixtures{
			Instances: []core.TCInstanceFixture{{InstanceID: aiaInstance, PrivateIPAddresses: []string{"10.1.0.1"}}},
			Addresses: []core.TCAddressFixture{{AddressID: "eip-orphan01", AddressType: "AnycastEIP", Tags: map[string]string{
				aiadecide.TagCluster: cluster, aiadecide.TagOwnerUID: "gone-uid", aiadecide.TagNodeName: "gone-node"}}},
		},
	}
}

// startManager runs every controller with leader election and plain-HTTP
// metrics on loopback (the chart's secure metrics need a TokenReview the
// test has no token for; the registry is the same).
func startManager(t *testing.T, metricsAddr, webhookAddr, extenderAddr string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(webhookAddr)
	args := []string{
		"--metrics-bind-address=" + metricsAddr, "--metrics-secure=false", "--health-probe-bind-address=0",
		"--leader-elect=true", "--leader-election-namespace=default", "--leader-election-id=" + leaseID,
		"--webhook-host=127.0.0.1", "--webhook-port=" + port, "--webhook-cert-dir=" + t.TempDir(),
		"--webhook-service-namespace=default",
		// The extender's certificates are self-managed, in namespace default
		// like the webhook's: drive reads the scheduler's client Secret.
		"--floatippool-extender-address=" + extenderAddr, "--floatippool-cert-dir=" + t.TempDir(),
		"--anycastipbinding-provider-config=tencentcloud",
		"--podelasticip-orphan-interval=2s", "--podelasticip-orphan-grace-period=1s", "--podelasticip-orphan-mode=delete",
		"--anycastipbinding-orphan-interval=2s", "--anycastipbinding-orphan-grace-period=1s", "--anycastipbinding-orphan-mode=delete",
	}
	logs := &managertest.Log{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager log:\n%s", logs)
		}
	})
	managertest.Start(t, context.Background(), env.Config, args, logs)
}

// drive gives every kind something to do.
func drive(t *testing.T, ctx context.Context, webhookAddr, extenderAddr string) {
	t.Helper()
	c := env.Client
	// PodElasticIP: a running pod on the emulator's ENI.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "eip", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "w1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: networkingv1alpha1.PodConditionElasticIPReady}}},
	}
	create(t, ctx, pod)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP, pod.Status.HostIP = podIP, "10.0.0.10"
	pod.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	create(t, ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "eip"},
		Spec: networkingv1alpha1.PodElasticIPSpec{PodName: "eip", Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}}})
	// AnycastIPBinding: a node labelled the legacy way, translated and bound.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: aiaNode, Labels: map[string]string{
		networkingv1alpha1.LegacyLabelNeedAIAIP: "true", "role": "ingress"}}, Spec: corev1.NodeSpec{ProviderID: "qcloud:///800002/" + aiaInstance}}
	create(t, ctx, node)
	// FloatIPPool.
	create(t, ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-a"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.2.0.10~10.2.0.20"}, Subnet: "10.2.0.0/16", Gateway: "10.2.0.1",
			NodeSubnets: []string{"192.168.1.0/24"}}})
	// IngressDaemonSet on the labelled node.
	create(t, ctx, &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: appNS},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
			NodeSelector: map[string]string{"role": "ingress"},
		},
	})
	// BurstPolicy over the PodElasticIP pod's label.
	create(t, ctx, &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: appNS},
		Spec: schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Trigger: schedulingv1alpha1.TriggerPending}})

	eventually.That(ctx, t, "every kind reconciled", func() (bool, string) {
		var peips networkingv1alpha1.PodElasticIPList
		var aipbs networkingv1alpha1.AnycastIPBindingList
		var bps schedulingv1alpha1.BurstPolicyList
		var idss appsv1alpha1.IngressDaemonSetList
		for _, l := range []client.ObjectList{&peips, &aipbs, &bps, &idss} {
			if err := c.List(ctx, l); err != nil {
				return false, err.Error()
			}
		}
		switch {
		case len(peips.Items) == 0 || peips.Items[0].Status.AllocationID == "":
			return false, "PodElasticIP not allocated"
		case len(aipbs.Items) == 0 || aipbs.Items[0].Status.AddressID == "":
			return false, "AnycastIPBinding not bound"
		case len(bps.Items) == 0 || meta.FindStatusCondition(bps.Items[0].Status.Conditions, "Ready") == nil:
			return false, "BurstPolicy has no status"
		case len(idss.Items) == 0 || idss.Items[0].Status.DesiredNodes == 0:
			return false, "IngressDaemonSet has no nodes"
		}
		return true, ""
	})

	// The webhooks and the extender, called as the API server and
	// kube-scheduler call them.
	tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's self-signed webhook certificate, on loopback
	for path, obj := range map[string]runtime.Object{
		burstpolicy.PodWebhookPath:       &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "admitted"}},
		anycastipbinding.NodeWebhookPath: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "admitted"}},
	} {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		kind := "Pod"
		if _, ok := obj.(*corev1.Node); ok {
			kind = "Node"
		}
		review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: kind},
				Resource:  metav1.GroupVersionResource{Version: "v1", Resource: strings.ToLower(kind) + "s"},
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}}
		post(t, ctx, tlsClient, "https://"+webhookAddr+path, review)
	}
	names := []string{aiaNode}
	scheduler := floatippooltest.SelfManagedClient(t, ctx, c, "default", floatippool.DefaultOptions().SchedulerClientSecretName,
		floatippool.DefaultOptions().ServiceName+".default.svc")
	post(t, ctx, scheduler, "https://"+extenderAddr+"/v1/filter", wire.ExtenderArgs{Pod: pod, NodeNames: &names})
}

// post sends body as JSON until the server answers (it may still be
// starting); any answer counts, the metrics record it.
func post(t *testing.T, ctx context.Context, hc *http.Client, url string, body any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	eventually.That(ctx, t, "POST "+url, func() (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		if err != nil {
			return false, err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return true, ""
	})
}
