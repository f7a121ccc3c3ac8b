package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// The pools and node every test allocates from: documentation ranges
// (TEST-NET-2 and -3) that never leave the test's network namespaces.
const (
	poolPublic  = "cni-public"
	poolStorage = "cni-storage"
	testNode    = "cni-node"
)

var worldOnce sync.Once

// ensureWorld creates the node and the two pools once per package.
func ensureWorld(t *testing.T) {
	t.Helper()
	worldOnce.Do(func() {
		ctx := context.Background()
		c := env.Client
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}}
		// Ready, as the extender's bind admits only such a node.
		must(t, env.CreateReadyNode(ctx, node))
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
		must(t, c.Status().Update(ctx, node))
		for _, p := range []*networkingv1alpha1.FloatIPPool{
			{ObjectMeta: metav1.ObjectMeta{Name: poolPublic}, Spec: networkingv1alpha1.FloatIPPoolSpec{
				Ranges: []string{"198.51.100.10~198.51.100.60"}, Subnet: "198.51.100.0/24", Gateway: "198.51.100.1", NodeSubnets: []string{"192.0.2.0/24"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: poolStorage}, Spec: networkingv1alpha1.FloatIPPoolSpec{
				Ranges: []string{"203.0.113.10~203.0.113.60"}, Subnet: "203.0.113.0/24", Gateway: "203.0.113.1", NodeSubnets: []string{"192.0.2.0/24"}}},
		} {
			must(t, c.Create(ctx, p))
			// Admitted into the FloatIPPoolLedger as the manager's pool
			// reconciler does (first pass: finalizer; second: admission).
			pr := &floatippool.PoolReconciler{Client: c}
			for range 2 {
				_, err := pr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
				must(t, err)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ensureWorld(t)
	must(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

// newPod creates a pod; wants asks for a float IP.
func newPod(t *testing.T, ns, name string, wants bool, annotations map[string]string) *corev1.Pod {
	t.Helper()
	c := corev1.Container{Name: "c", Image: "nginx"}
	if wants {
		q := resource.MustParse("1")
		c.Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: q},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: q},
		}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	must(t, env.Client.Create(context.Background(), p))
	return p
}

// allocate binds the pod through the FloatIPPool extender's allocator (the
// real allocation path) and returns its IPs.
func allocate(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	a := &floatippool.Allocator{Reader: env.Client, Live: env.Client, Client: env.Client}
	allocs, err := a.Bind(context.Background(), pod.Namespace, pod.Name, pod.UID, testNode)
	if err != nil {
		t.Fatalf("allocating float IPs to pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	var ips []string
	for _, al := range allocs {
		ips = append(ips, al.FIP.Spec.IP)
	}
	t.Cleanup(func() {
		for _, al := range allocs {
			_ = env.Client.Delete(context.Background(), al.FIP)
		}
	})
	return ips
}

// kubeconfig writes the envtest API server's kubeconfig, its credentials
// embedded, for the plugin (its Plugin.Kubeconfig, or the binary's path
// linked with testbin.BuildWithVars): what the installer's file is on a
// node.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, env.WriteKubeconfig(path))
	return path
}

// netConf is a single-plugin network config using the plugin as its only
// plugin, the way pkg/skel's tests drive an IPAM plugin; extra is spliced
// into the ipam section.
func netConf(version, extra string) []byte {
	return fmt.Appendf(nil, `{"cniVersion":%q,"name":"float","type":"bridge","ipam":{"type":"edgeplane-cni-ipam"%s}}`, version, extra)
}

// cniArgs is what the runtime passes in CNI_ARGS for a pod.
func cniArgs(pod *corev1.Pod) string {
	return fmt.Sprintf("IgnoreUnknown=1;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=%s", pod.Namespace, pod.Name, pod.UID)
}

// podEvents returns the reasons of the plugin's Events on a pod.
func podEvents(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	var list eventsv1.EventList
	must(t, env.Client.List(context.Background(), &list, client.InNamespace(pod.Namespace)))
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == pod.Name && e.Regarding.UID == pod.UID && e.ReportingController == cniipam.ReportingController {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

// hasEvent reports whether one of events starts with reason.
func hasEvent(events []string, reason cniipam.Reason) bool {
	for _, e := range events {
		if strings.HasPrefix(e, string(reason)+": ") {
			return true
		}
	}
	return false
}

// observedKubeconfig writes a kubeconfig for the plugin that reaches the
// envtest API server through a loopback proxy, and calls answered with each
// request after the API server's answer has been passed on: the test sees
// what the plugin has read, without timing it.
func observedKubeconfig(t *testing.T, answered func(*http.Request)) string {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	must(t, err)
	if target.Scheme == "" {
		t.Fatalf("API server host %q has no scheme", env.Config.Host)
	}
	rt, err := rest.TransportFor(env.Config)
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy.ServeHTTP(w, r)
		answered(r)
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["observed"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["plugin"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["observed"] = &clientcmdapi.Context{Cluster: "observed", AuthInfo: "plugin"}
	cfg.CurrentContext = "observed"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, path))
	return path
}
