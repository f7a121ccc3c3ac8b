//go:build e2e

// Package node_test installs edgeplane the way a user does, with `helm
// install` of charts/edgeplane, onto a local cluster with two real nodes
// (kubelet, containerd and kube-proxy each; `make e2e-node`), from the
// image `make image-load` built, and checks what only real nodes show:
// the manager's pods run the chart's securityContext, probes, RBAC and
// self-managed certificates behind their Services; kube-scheduler reaches
// the float-IP extender through the configuration the chart renders; the
// kubelet calls the CNI plugin the chart's DaemonSet installed, so a
// float-IP pod sees its IP on its own eth0.
package node_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/images"
	"github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

func TestMain(m *testing.M) {
	// The tests read the cluster with controller-runtime's client, which
	// logs nothing they need.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

const (
	// release is the Helm release; the chart names its objects after it
	// ("edgeplane": the release name holds the chart's).
	release   = "edgeplane"
	namespace = "edgeplane-system"
	// workloads is the namespace of the test's own pods.
	workloads = "e2e-node"
	// floatNode is the real node the float-IP pool serves.
	floatNode = "real-2"
	// startTimeout bounds a cluster start with real nodes on a busy machine.
	startTimeout = 8 * time.Minute
)

// resourceENIIP is what a pod requests to get a float IP.
const resourceENIIP corev1.ResourceName = networkingv1alpha1.ResourceENIIP

// env is the installed platform the subtests share.
type env struct {
	t       *testing.T
	ctx     context.Context
	cluster *localcluster.Cluster
	c       client.Client
	dir     string
	sim     *cloudsim.Server
	// first and last bound the float node's pool (floatPool).
	first, last netip.Addr
}

func TestChartOnRealNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	nodeImages := loadedImages(t, root)
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	// E2E_NODE_DIR keeps the cluster's directory (the components' logs)
	// after the test; by default it goes with the test.
	dir := os.Getenv("E2E_NODE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	began := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:       dir,
		RealNodes: 2,
		// A kwok node too, as a cluster has nodes the manager must not
		// run on: the chart's manager.nodeSelector keeps it off.
		Nodes:        []localcluster.NodeSpec{{Name: "kwok-1"}},
		NodeImages:   nodeImages,
		Scheme:       sch,
		Log:          testr.New(t),
		StartTimeout: startTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	}()
	t.Logf("the cluster with 2 real nodes started in %s", time.Since(began).Round(100*time.Millisecond))
	e := &env{t: t, ctx: ctx, cluster: cluster, c: cluster.Client(), dir: dir}
	defer e.dumpOnFailure() // before the cluster stops
	endpoint := e.startEmulator()
	if err := cluster.CreateNamespace(ctx, workloads); err != nil {
		t.Fatal(err)
	}

	began = time.Now()
	e.helmInstall(endpoint)
	t.Logf("helm install took %s", time.Since(began).Round(100*time.Millisecond))
	e.checkManagers()
	e.checkCNIInstalled()
	e.configureScheduler()
	e.first, e.last = e.floatPool("real-2")

	t.Run("FloatIPOnEth0", e.testFloatIPOnEth0)
	t.Run("StatefulSetKeepsItsFloatIP", e.testStatefulSetKeepsItsFloatIP)
	t.Run("IngressDaemonSetRollout", e.testIngressDaemonSetRollout)
	t.Run("PodElasticIP", e.testPodElasticIP)
	t.Run("LeaderFailover", e.testLeaderFailover)
	t.Run("ManagersLogNoErrors", e.testManagersLogNoErrors)
	t.Run("Uninstall", e.testUninstall)
}

// loadedImages are the images `make image-load` wrote that the nodes
// load: edgeplane's, tagged as the chart's default, and the test workload.
func loadedImages(t *testing.T, root string) []localcluster.NodeImage {
	t.Helper()
	dir := os.Getenv("EDGEPLANE_IMAGE_DIR")
	if dir == "" {
		dir = filepath.Join(root, "bin", "image")
	}
	edgeplane, err := images.Edgeplane(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []localcluster.NodeImage
	for _, spec := range []images.Spec{edgeplane, images.PodReport()} {
		img := localcluster.NodeImage{Archive: filepath.Join(dir, spec.Name+".tar"), Ref: spec.Ref}
		if _, err := os.Stat(img.Archive); err != nil {
			t.Fatalf("the image %s: %v (`make image-load` writes it; `make e2e-node` runs it first)", spec.Ref, err)
		}
		out = append(out, img)
	}
	return out
}

// startEmulator serves the cloud emulator where pods reach it, on the
// real nodes' gateway, as a cloud's API endpoint outside the cluster, and
// returns its URL.
func (e *env) startEmulator() string {
	e.t.Helper()
	sim, err := cloudsim.New(cloudsim.Options{Seed: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := e.cluster.ListenClusterNetwork(0)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sim = sim
	e.seedNodeInstances(sim)
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(l) }()
	e.t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// helm runs the pinned helm against the cluster.
func (e *env) helm(args ...string) string {
	e.t.Helper()
	out, err := gotool.Output(append([]string{"helm", "--kubeconfig", e.cluster.KubeconfigPath()}, args...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(out)
}

// helmInstall installs the chart as a user on these nodes would: the
// image the nodes loaded (never pulled), the CNI plugin's DaemonSet, the
// scheduler configuration for this control plane's kube-scheduler, and the
// emulator as the AWS endpoint.
func (e *env) helmInstall(endpoint string) {
	e.t.Helper()
	values := map[string]any{
		"image": map[string]any{"pullPolicy": "Never"},
		"manager": map[string]any{
			"clusterName":  "e2e-node",
			"nodeSelector": map[string]any{localcluster.RealNodeLabel: "true"},
		},
		"floatIP": map[string]any{
			"cni": map[string]any{"enabled": true},
			"schedulerConfig": map[string]any{
				"kubeconfig": localcluster.ComponentKubeconfig(e.dir, localcluster.Scheduler),
				"certDir":    e.schedulerCertDir(),
			},
		},
	}
	raw, err := yaml.Marshal(values)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(e.dir, "values.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.t.Log(e.helm("install", release, "charts/edgeplane", "--namespace", namespace, "--create-namespace",
		"--values", path, "--wait", "--timeout", "10m"))
	// The provider config in a second step: the first install creates the
	// CRDs (docs/operations.md, "Installing, upgrading and uninstalling
	// the chart").
	e.helm("upgrade", release, "charts/edgeplane", "--namespace", namespace, "--reuse-values",
		"--set", "providerConfigs.aws.enabled=true", "--set", "providerConfigs.aws.endpoint="+endpoint,
		"--set", "providerConfigs.aws.credentials.source=None", "--wait", "--timeout", "10m")
}

func (e *env) schedulerCertDir() string { return filepath.Join(e.dir, "floatip-scheduler") }

// managerPods are the manager's pods, ready or not.
func (e *env) managerPods() []corev1.Pod {
	e.t.Helper()
	var list corev1.PodList
	err := e.c.List(e.ctx, &list, client.InNamespace(namespace), client.MatchingLabels{
		"app.kubernetes.io/instance": release, "app.kubernetes.io/component": "manager",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// checkManagers: both replicas are Ready (their probes pass on the real
// kubelet, under the chart's securityContext) and one holds the lease.
func (e *env) checkManagers() {
	e.t.Helper()
	eventually.That(e.ctx, e.t, "two ready manager pods", func() (bool, string) {
		pods := e.managerPods()
		ready := 0
		var states []string
		for _, p := range pods {
			states = append(states, fmt.Sprintf("%s on %s ready=%v", p.Name, p.Spec.NodeName, podReady(&p)))
			if podReady(&p) {
				ready++
			}
		}
		return ready == 2 && len(pods) == 2, strings.Join(states, "; ")
	})
	pods := e.managerPods()
	for _, p := range pods {
		if !slices.Contains(e.cluster.RealNodes(), p.Spec.NodeName) {
			e.t.Errorf("manager pod %s runs on %q, not a real node", p.Name, p.Spec.NodeName)
		}
	}
	eventually.That(e.ctx, e.t, "a manager pod to hold the leader lease", func() (bool, string) {
		holder := e.leader()
		for _, p := range pods {
			if strings.HasPrefix(holder, p.Name+"_") {
				return true, holder
			}
		}
		return false, holder
	})
}

// leader is the leader lease's holder: "<pod name>_<uuid>".
func (e *env) leader() string {
	var lease coordinationv1.Lease
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: "edgeplane-manager.edgeplane.io"}, &lease); err != nil {
		return err.Error()
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// checkCNIInstalled: the chart's DaemonSet put the plugin and its
// kubeconfig at the paths a node's container runtime reads.
func (e *env) checkCNIInstalled() {
	e.t.Helper()
	for _, node := range e.cluster.RealNodes() {
		for _, p := range []string{"/opt/cni/bin/edgeplane-cni-ipam", "/etc/cni/net.d/edgeplane-cni-ipam.kubeconfig"} {
			path, err := e.cluster.RealNodePath(node, p)
			if err != nil {
				e.t.Fatal(err)
			}
			eventually.That(e.ctx, e.t, p+" on "+node, func() (bool, string) {
				_, err := os.Stat(path)
				return err == nil, fmt.Sprint(err)
			})
		}
	}
}

// configureScheduler gives kube-scheduler the chart's configuration, as
// docs/floatippool.md tells a control plane whose scheduler runs on the
// host network without cluster DNS: the extender's URL by the Service's
// ClusterIP (floatIP.schedulerConfig.urlPrefix, set with helm upgrade),
// the rendered ConfigMap as its --config, and the client certificate the
// manager keeps in its Secret copied to floatIP.schedulerConfig.certDir.
func (e *env) configureScheduler() {
	e.t.Helper()
	var svc corev1.Service
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: release + "-floatip"}, &svc); err != nil {
		e.t.Fatal(err)
	}
	urlPrefix := fmt.Sprintf("https://%s/v1", net.JoinHostPort(svc.Spec.ClusterIP, "9040"))
	e.helm("upgrade", release, "charts/edgeplane", "--namespace", namespace, "--reuse-values",
		"--set", "floatIP.schedulerConfig.urlPrefix="+urlPrefix, "--wait", "--timeout", "10m")

	var cm corev1.ConfigMap
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: release + "-scheduler-config"}, &cm); err != nil {
		e.t.Fatal(err)
	}
	conf := cm.Data["kube-scheduler-config.yaml"]
	if !strings.Contains(conf, urlPrefix) {
		e.t.Fatalf("the scheduler configuration does not name %s:\n%s", urlPrefix, conf)
	}
	confPath := filepath.Join(e.dir, "kube-scheduler-config.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		e.t.Fatal(err)
	}
	var secret corev1.Secret
	eventually.That(e.ctx, e.t, "the scheduler's client certificate", func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: release + "-floatip-scheduler-client"}, &secret)
		return err == nil && len(secret.Data["tls.crt"]) > 0, fmt.Sprint(err)
	})
	if err := os.MkdirAll(e.schedulerCertDir(), 0o700); err != nil {
		e.t.Fatal(err)
	}
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if len(secret.Data[key]) == 0 {
			e.t.Fatalf("Secret %s has no %s", secret.Name, key)
		}
		if err := os.WriteFile(filepath.Join(e.schedulerCertDir(), key), secret.Data[key], 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.cluster.RestartScheduler(e.ctx, "--config="+confPath); err != nil {
		e.t.Fatal(err)
	}
}

// readyPod waits for the one ready pod matching labels (and, when
// notUID is set, another than that one) and returns it.
func (e *env) readyPod(labels map[string]string, notUID string) corev1.Pod {
	e.t.Helper()
	var ready corev1.Pod
	eventually.That(e.ctx, e.t, fmt.Sprintf("a ready pod %v", labels), func() (bool, string) {
		var list corev1.PodList
		if err := e.c.List(e.ctx, &list, client.InNamespace(workloads), client.MatchingLabels(labels)); err != nil {
			return false, err.Error()
		}
		var states []string
		for _, p := range list.Items {
			states = append(states, fmt.Sprintf("%s on %q: %s ready=%v ip=%s", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p), p.Status.PodIP))
			if podReady(&p) && string(p.UID) != notUID && p.DeletionTimestamp == nil {
				ready = p
				return true, ""
			}
		}
		return false, strings.Join(states, "; ") + e.podEvents(list.Items)
	})
	return ready
}

// podEvents sums up the pods' latest events, for a wait's failure.
func (e *env) podEvents(pods []corev1.Pod) string {
	var list eventsv1.EventList
	if err := e.c.List(e.ctx, &list, client.InNamespace(workloads)); err != nil {
		return ""
	}
	var out []string
	for _, p := range pods {
		for _, ev := range list.Items {
			if ev.Regarding.UID == p.UID {
				out = append(out, fmt.Sprintf("%s %s: %s", p.Name, ev.Reason, ev.Note))
			}
		}
	}
	if len(out) > 6 {
		out = out[len(out)-6:]
	}
	return "; events: " + strings.Join(out, "; ")
}

// dumpOnFailure logs what explains a failure: every pod, the recent
// events and the managers' logs (the components' logs stay in the
// cluster's directory, named in the test's log).
func (e *env) dumpOnFailure() {
	if !e.t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "events", "-A", "--sort-by=.lastTimestamp"},
		{"logs", "-n", namespace, "-l", "app.kubernetes.io/component=manager", "--tail=60", "--prefix"},
		{"logs", "-n", namespace, "-l", "app.kubernetes.io/component=cni-ipam", "--tail=20", "--prefix"},
	} {
		out, err := e.cluster.Kubectl(ctx, args...)
		e.t.Logf("kubectl %s:\n%s%v", strings.Join(args, " "), out, err)
	}
	e.t.Logf("the components' logs: %s", e.cluster.LogDir())
}

// with is e for a subtest.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeIPs maps each real node to its InternalIP.
func (e *env) nodeIPs() map[string]string {
	e.t.Helper()
	ips := map[string]string{}
	for _, name := range e.cluster.RealNodes() {
		var node corev1.Node
		if err := e.c.Get(e.ctx, client.ObjectKey{Name: name}, &node); err != nil {
			e.t.Fatal(err)
		}
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ips[name] = a.Address
			}
		}
	}
	return ips
}
