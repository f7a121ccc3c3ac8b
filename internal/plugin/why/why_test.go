package why_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"

	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/plugin"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/managertest"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}

const (
	ns          = "shop"
	eni         = "eni-0000000000000023"
	servedIP    = "10.0.1.5"
	quotaIP     = "10.0.1.6"
	aiaNode     = "edge-node-1"
	aiaInstance = "ins-edge0001"
	galaxyNode  = "galaxy-node"
	localNode   = "local-1"
	eipNode     = "eip-node-1"
	eipInstance = "i-0000000000000024"
	ingressNode = "ingress-1"
)

// TestWhyGolden produces each kind's common failure for real, with the
// manager (every controller) running against the API server and two cloud
// emulators, and checks what `kubectl edgeplane why` says about it against
// a golden file: an Elastic IP pod served and one over the account's
// address quota, a pod with an invalid annotation, a float-IP pod whose
// pool has no free IP, a pod held for its BurstPolicy's local floor, a node
// whose anycast address is not bound yet (its emulator's tasks run for an
// hour), a node whose Elastic IP pool has no free address, a node detached
// for its IngressDaemonSet's rollout, and a PodElasticIP asked for by name,
// in text and JSON.
func TestWhyGolden(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	aws := cloudsimtest.Start(t, cloudsim.Options{Seed: 23, Settings: core.Settings{
		RateLimitsDisabled: true, EC2AddressQuota: 1, TaskDuration: core.Duration(100 * time.Millisecond),
	}, Fixtures: &core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{{
		InstanceID: "i-0000000000000023", VpcID: "vpc-1", SubnetID: "subnet-1",
		NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: eni, PrivateIPAddresses: []string{"10.0.0.10", servedIP, quotaIP}}},
	}, {
		// The NodeElasticIP node's instance.
		InstanceID: eipInstance, VpcID: "vpc-1", SubnetID: "subnet-1",
		NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: "eni-0000000000000024", PrivateIPAddresses: []string{"10.0.2.10"}}},
	}}}}})
	// Tencent's tasks never finish within the test: a binding stays Binding.
	tencent := cloudsimtest.Start(t, cloudsim.Options{Seed: 23, Settings: core.Settings{
		RateLimitsDisabled: true, TaskDuration: core.Duration(time.Hour),
	}, Fixtures: &core.Fixtures{Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{{
		InstanceID: aiaInstance, PrivateIPAddresses: []string{"10.1.0.1"}}}}}})
	create(t, ctx,
		managertest.EmulatorConfig(cloudv1alpha1.DefaultProviderConfigName, cloudv1alpha1.ProviderAWS, "us-east-1", aws.URL()),
		managertest.EmulatorConfig("tencentcloud", cloudv1alpha1.ProviderTencentCloud, "ap-hongkong", tencent.URL()),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
	)
	extender, scheduler := startManager(t, ctx)

	// Elastic IPs: the first pod takes the account's only address, the
	// second meets the quota, the third asks for a type that does not exist.
	eipPod(t, ctx, "web-0", servedIP, translate.TypeAuto)
	waitFor(t, ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0"}}, "Ready=True", func(o client.Object) bool {
		return ready(o.(*networkingv1alpha1.PodElasticIP).Status.Conditions, "True", "Available")
	})
	eipPod(t, ctx, "web-1", quotaIP, translate.TypeAuto)
	waitFor(t, ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"}}, "QuotaExceeded", func(o client.Object) bool {
		return ready(o.(*networkingv1alpha1.PodElasticIP).Status.Conditions, "False", string(networkingv1alpha1.PodElasticIPReasonQuotaExceeded))
	})
	eipPod(t, ctx, "web-2", "", "sometimes")
	waitForEvent(t, ctx, "web-2", "InvalidAnnotation")

	// Float IPs: a pool of one IP, taken by the first pod the extender
	// places; the second pod finds none.
	node(t, ctx, galaxyNode, "192.168.30.10", nil)
	// Ready, as the node lifecycle controller (not running here) would make
	// it: the extender binds no pod to a node whose taint it does not
	// tolerate.
	var gn corev1.Node
	if err := env.Client.Get(ctx, client.ObjectKey{Name: galaxyNode}, &gn); err != nil {
		t.Fatal(err)
	}
	gn.Spec.Taints = nil
	if err := env.Client.Update(ctx, &gn); err != nil {
		t.Fatal(err)
	}
	create(t, ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-one"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.3.0.10"}, Subnet: "10.3.0.0/24", Gateway: "10.3.0.1",
			NodeSubnets: []string{"192.168.30.0/24"}}})
	holder := floatIPPod(t, ctx, "fip-0")
	schedule(t, ctx, scheduler, extender, holder)
	floatIPPod(t, ctx, "fip-1")
	waitFor(t, ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-one"}}, "no free IP", func(o client.Object) bool {
		p := o.(*networkingv1alpha1.FloatIPPool)
		return p.Status.Total == 1 && p.Status.Available == 0
	})

	// BurstPolicy: one replica must stay local, and the scheduler found no
	// local node with room for it.
	node(t, ctx, localNode, "", nil)
	create(t, ctx, &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"},
		Spec: schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "batch"}}, LocalReplicas: 1}})
	batch := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch-0", Labels: map[string]string{"app": "batch"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}}}}}
	create(t, ctx, batch)
	batch.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
	if err := env.Client.Status().Update(ctx, batch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"}}, "LocalCapacityShort=True", func(o client.Object) bool {
		return meta.IsStatusConditionTrue(o.(*schedulingv1alpha1.BurstPolicy).Status.Conditions, schedulingv1alpha1.TypeLocalCapacityShort)
	})

	// AnycastIPBinding: the node asks the legacy way; its address's
	// allocation task runs (for an hour).
	create(t, ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: aiaNode, Labels: map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}},
		Spec: corev1.NodeSpec{ProviderID: "qcloud:///800002/" + aiaInstance}})
	waitFor(t, ctx, &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: aiaNode}}, "Creating, with an address", func(o client.Object) bool {
		b := o.(*networkingv1alpha1.AnycastIPBinding)
		return b.Status.AddressID != "" && ready(b.Status.Conditions, "False", "Creating")
	})

	// NodeElasticIP: the node asks for an Elastic IP from the reserved pool
	// the manager's --nodeelasticip-pool-filter names, and the account has
	// no address with that tag.
	create(t, ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: eipNode, Labels: map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + eipInstance}})
	waitFor(t, ctx, &networkingv1alpha1.NodeElasticIP{ObjectMeta: metav1.ObjectMeta{Name: eipNode}}, "PoolExhausted", func(o client.Object) bool {
		return ready(o.(*networkingv1alpha1.NodeElasticIP).Status.Conditions, "False", string(networkingv1alpha1.NodeElasticIPReasonPoolExhausted))
	})

	// IngressDaemonSet: its node rolls out (the test plays the Deployment
	// controller), then a template change detaches the node for an hour's
	// grace period: the node stays Detaching.
	node(t, ctx, ingressNode, "", map[string]string{"role": "ingress"})
	ids := ingressDaemonSet(t, ctx)
	waitFor(t, ctx, ids, "Ready=True", func(o client.Object) bool {
		return ready(o.(*appsv1alpha1.IngressDaemonSet).Status.Conditions, "True", appsv1alpha1.ReasonAllNodesReady)
	})
	eventually.That(ctx, t, "a new template", func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), ids); err != nil {
			return false, err.Error()
		}
		ids.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		if err := env.Client.Update(ctx, ids); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	waitFor(t, ctx, ids, ingressNode+" Detaching", func(o client.Object) bool {
		st := o.(*appsv1alpha1.IngressDaemonSet).Status
		return len(st.Nodes) == 1 && st.Nodes[0].Phase == appsv1alpha1.NodePhaseDetaching
	})

	// A pod elastic IP on Tencent Cloud: the PodElasticIP names the Tencent
	// config and carries its provider block; its allocation task runs (for
	// an hour).
	eipPod(t, ctx, "web-tc", "10.1.5.7", "")
	create(t, ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-tc"},
		Spec: networkingv1alpha1.PodElasticIPSpec{PodName: "web-tc", Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto},
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: "tencentcloud"}},
			Tencent:             &networkingv1alpha1.PodElasticIPTencent{InternetMaxBandwidthOut: 20}}})
	waitFor(t, ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-tc"}}, "allocating, with an address", func(o client.Object) bool {
		p := o.(*networkingv1alpha1.PodElasticIP)
		return p.Status.AllocationID != "" && readyMessage(p.Status.Conditions, "False", string(networkingv1alpha1.PodElasticIPReasonAssociating), "allocating an address")
	})

	// Events are checked apart from the golden files: which Normal Events a
	// run records, and how often a failure is retried, depend on timing.
	for _, tc := range []struct {
		golden string
		args   []string
		// event is the reason of an Event the output must list.
		event string
	}{
		{"pod-served.golden", []string{"pod/web-0", "-n", ns}, "Associated"},
		{"pod-quota.golden", []string{"pod/web-1", "-n", ns}, "CannotCreateExternalResource"},
		{"pod-invalid-annotation.golden", []string{"web-2", "-n", ns}, "InvalidAnnotation"},
		{"pod-no-free-floatip.golden", []string{"pod/fip-1", "-n", ns}, ""},
		{"pod-floor-held.golden", []string{"-n", ns, "pod/batch-0"}, ""},
		{"node-not-bound.golden", []string{"node/" + aiaNode}, "AnycastIPPending"},
		{"node-eip-pool-exhausted.golden", []string{"node/" + eipNode}, networkingv1alpha1.NodeElasticIPEventFailed},
		{"node-mid-rollout.golden", []string{"node/" + ingressNode}, ""},
		{"peip-quota.golden.json", []string{"peip/web-1", "-n", ns, "-o", "json"}, "CannotCreateExternalResource"},
		{"pod-tencent-allocating.golden", []string{"pod/web-tc", "-n", ns}, ""},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out := why(t, tc.args...)
			var verdict, events, listed string
			if strings.HasSuffix(tc.golden, ".json") {
				verdict, events = splitJSON(t, out)
				listed = `"reason":"` + tc.event + `"`
			} else {
				verdict, events, _ = strings.Cut(out, "\nRecent events:\n")
				listed = " " + tc.event + " on "
			}
			golden(t, tc.golden, scrub(verdict))
			// Once: a retried failure (the quota's) is one line, not one per retry.
			if n := strings.Count(events, listed); tc.event != "" && n != 1 {
				t.Errorf("the output lists the %s Event %d times, want once:\n%s", tc.event, n, out)
			}
		})
	}
}

// TestWhyCloudCredentialsUnreadable: a person who may read edgeplane's
// objects but not Secrets asks about a NodeElasticIP whose provider config
// keeps its keys in a Secret. The verdict still comes from the objects; the
// cloud line says the address could not be read for lack of credentials,
// and why. No manager runs: the objects' status is written as a manager
// would have written it.
func TestWhyCloudCredentialsUnreadable(t *testing.T) {
	ctx := testenv.Context(t)
	const (
		secretNS = "why-creds"
		name     = "creds-node"
		user     = "support"
	)
	create(t, ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "aws-keys"},
			StringData: map[string]string{"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}},
	)
	cpc := managertest.EmulatorConfig("keys", cloudv1alpha1.ProviderAWS, "us-east-1", "http://127.0.0.1:1")
	cpc.Spec.Credentials = cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
		SecretRef: &cloudv1alpha1.SecretReference{Namespace: secretNS, Name: "aws-keys"}}
	create(t, ctx, cpc)
	cpc.Status.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: "CredentialsAvailable", LastTransitionTime: metav1.Now()})
	if err := env.Client.Status().Update(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	neip := &networkingv1alpha1.NodeElasticIP{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.NodeElasticIPSpec{NodeName: name, Allocation: networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeAuto},
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: cpc.Name}}}}
	create(t, ctx, neip)
	neip.Status.AllocationID, neip.Status.PublicIP, neip.Status.InstanceID = "eipalloc-0123456789abcdef0", "198.18.0.7", "i-0000000000000099"
	neip.Status.SetConditions(xpv2.Available())
	if err := env.Client.Status().Update(ctx, neip); err != nil {
		t.Fatal(err)
	}
	// The person's role: edgeplane's objects and Events, no Secrets.
	create(t, ctx,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "why-support"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{networkingv1alpha1.GroupVersion.Group}, Resources: []string{"nodeelasticips"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{cloudv1alpha1.GroupVersion.Group}, Resources: []string{"clusterproviderconfigs"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"events", "namespaces"}, Verbs: []string{"get", "list"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "why-support"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "why-support"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}},
	)
	golden(t, "neip-credentials-unreadable.golden", scrub(why(t, "neip/"+name, "--as", user)))
}

// splitJSON returns the -o json verdict without its events, and the events.
func splitJSON(t *testing.T, out string) (verdict, events string) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	ev, err := json.Marshal(v["events"])
	if err != nil {
		t.Fatal(err)
	}
	delete(v, "events")
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n", string(ev)
}

// volatile are parts of the output that differ between runs: the
// emulators' generated IDs and addresses, request IDs, user counts.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`eipalloc-[0-9a-f]+`), "eipalloc-<id>"},
	{regexp.MustCompile(`eipassoc-[0-9a-f]+`), "eipassoc-<id>"},
	{regexp.MustCompile(`\beip-[0-9a-z]{8}\b`), "eip-<id>"},
	{regexp.MustCompile(`\b198\.1[89]\.\d+\.\d+\b`), "<public-ip>"},
	{regexp.MustCompile(`\b(\d+\.){3}\d+ \(anycast\)`), "<anycast-ip> (anycast)"},
	{regexp.MustCompile(`RequestID: [0-9a-f-]+`), "RequestID: <id>"},
	// A provider config counts its users when it is next reconciled.
	{regexp.MustCompile(`, \d+ users?\b`), ", <n> users"},
}

func scrub(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// why runs the plugin in-process as kubectl would run it.
func why(t *testing.T, args ...string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args = append([]string{"why"}, append(args, "--kubeconfig", kubeconfig)...)
	if code := plugin.Run(testenv.Context(t), args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != plugin.ExitOK {
		t.Fatalf("kubectl edgeplane %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// startManager runs the manager and returns its extender's URL and a
// client that calls it as kube-scheduler does (its client certificate).
func startManager(t *testing.T, ctx context.Context) (extender string, scheduler *http.Client) {
	t.Helper()
	extender = testbin.FreeAddr(t)
	_, port, _ := net.SplitHostPort(testbin.FreeAddr(t))
	certs := floatippooltest.Write(t, "")
	managertest.Start(t, ctx, env.Config, append([]string{
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--webhook-service-namespace=default", "--webhook-host=127.0.0.1", "--webhook-port=" + port,
		"--webhook-cert-dir=" + t.TempDir(),
		"--floatippool-extender-address=" + extender,
		"--anycastipbinding-provider-config=tencentcloud", "--anycastipbinding-orphan-mode=off", "--podelasticip-orphan-mode=off",
		"--podelasticip-poll-interval=1s", "--podelasticip-max-backoff=2s",
		"--nodeelasticip-pool-filter=Name=tag:pool,Values=edge", "--nodeelasticip-orphan-mode=off",
	}, certs.ManagerFlags()...), nil)
	return "https://" + extender, certs.Client(t)
}

func create(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func node(t *testing.T, ctx context.Context, name, internalIP string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	create(t, ctx, n)
	if internalIP != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: internalIP}}
		if err := env.Client.Status().Update(ctx, n); err != nil {
			t.Fatalf("setting node %s's address: %v", name, err)
		}
	}
}

// eipPod creates a pod with aws-pod-eip-controller's type annotation,
// running with podIP on the emulator's ENI when podIP is set.
func eipPod(t *testing.T, ctx context.Context, name, podIP, typ string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{translate.Type: typ}},
		Spec:       corev1.PodSpec{NodeName: "w1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if typ == "" {
		// No legacy annotation: a hand-made PodElasticIP serves the pod.
		pod.Annotations = nil
	}
	create(t, ctx, pod)
	if podIP == "" {
		return
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP, pod.Status.HostIP = podIP, "10.0.0.10"
	pod.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// ingressDaemonSet creates a detach-mode IngressDaemonSet on the ingress
// node and plays the Deployment controller for its node's Deployment: every
// replica updated and ready.
func ingressDaemonSet(t *testing.T, ctx context.Context) *appsv1alpha1.IngressDaemonSet {
	t.Helper()
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ing"},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
			NodeSelector: map[string]string{"role": "ingress"},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxUnavailableNodes:  ptr.To[int32](1),
				AnnotateNodeToDetach: &appsv1alpha1.DetachAnnotation{Key: "example.com/detached", Value: "true", GracePeriodSeconds: 3600},
			}},
		},
	}
	create(t, ctx, ids)
	eventually.That(ctx, t, "the ingress node's Deployment rolled out", func() (bool, string) {
		got := &appsv1alpha1.IngressDaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), got); err != nil {
			return false, err.Error()
		}
		if len(got.Status.Nodes) != 1 || got.Status.Nodes[0].Deployment == "" {
			return false, fmt.Sprintf("nodes %+v", got.Status.Nodes)
		}
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.Nodes[0].Deployment}, d); err != nil {
			return false, err.Error()
		}
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		if err := env.Client.Status().Update(ctx, d); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return ids
}

func floatIPPod(t *testing.T, ctx context.Context, name string) *corev1.Pod {
	t.Helper()
	one := corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: one, Limits: one}}}},
	}
	create(t, ctx, p)
	return p
}

// schedule filters (until the manager's cache shows the pool) and binds
// pod to the galaxy node through the extender, as kube-scheduler does.
func schedule(t *testing.T, ctx context.Context, scheduler *http.Client, extender string, pod *corev1.Pod) {
	t.Helper()
	n := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: galaxyNode}, n); err != nil {
		t.Fatal(err)
	}
	eventually.That(ctx, t, galaxyNode+" passing the filter for "+pod.Name, func() (bool, string) {
		var res struct{ Nodes *corev1.NodeList }
		body := post(t, ctx, scheduler, extender+"/v1/filter", map[string]any{"Pod": pod, "Nodes": &corev1.NodeList{Items: []corev1.Node{*n}}}, &res)
		return res.Nodes != nil && len(res.Nodes.Items) == 1, body
	})
	var res struct{ Error string }
	post(t, ctx, scheduler, extender+"/v1/bind", map[string]any{"PodName": pod.Name, "PodNamespace": pod.Namespace, "PodUID": pod.UID, "Node": galaxyNode}, &res)
	if res.Error != "" {
		t.Fatalf("binding %s: %s", pod.Name, res.Error)
	}
}

func post(t *testing.T, ctx context.Context, c *http.Client, url string, body, out any) string {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(reply, out); err != nil {
		return fmt.Sprintf("%s: %v", reply, err)
	}
	return string(reply)
}

// readyMessage is ready, with the Ready condition's message too.
func readyMessage(conds any, status, reason, message string) bool {
	b, _ := json.Marshal(conds)
	var list []struct{ Type, Status, Reason, Message string }
	_ = json.Unmarshal(b, &list)
	for _, c := range list {
		if c.Type == "Ready" {
			return c.Status == status && c.Reason == reason && c.Message == message
		}
	}
	return false
}

func ready(conds any, status, reason string) bool {
	switch cs := conds.(type) {
	case []metav1.Condition:
		c := meta.FindStatusCondition(cs, "Ready")
		return c != nil && string(c.Status) == status && c.Reason == reason
	}
	b, _ := json.Marshal(conds)
	var list []struct{ Type, Status, Reason string }
	_ = json.Unmarshal(b, &list)
	for _, c := range list {
		if c.Type == "Ready" {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}

func waitFor(t *testing.T, ctx context.Context, obj client.Object, what string, cond func(client.Object) bool) {
	t.Helper()
	eventually.That(ctx, t, fmt.Sprintf("%T %s: %s", obj, obj.GetName(), what), func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(obj)
		return cond(obj), string(b)
	})
}

func waitForEvent(t *testing.T, ctx context.Context, pod, reason string) {
	t.Helper()
	eventually.That(ctx, t, "Event "+reason+" on pod "+pod, func() (bool, string) {
		var list corev1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == pod && e.Reason == reason {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(list.Items))
	})
}
