//go:build e2e

// Package realnodes_test starts the local cluster with real nodes (a
// kubelet, containerd and kube-proxy each, in network namespaces on one
// bridge) and checks what kwok nodes cannot show: pods run real
// containers, each on its node with its address on eth0, `kubectl exec`
// and `kubectl logs` reach them through the API server, a Service routes
// from one node's pod to another's, and from the control plane too; and
// nothing of it is left on the machine afterwards, even after a crash.
package realnodes_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// crashDirEnv makes the test binary a cluster that is killed, not a test
// (TestRealNodesAfterACrash).
const crashDirEnv = "REALNODES_CRASH_DIR"

func TestMain(m *testing.M) {
	// The tests read the cluster with controller-runtime's client, which
	// logs nothing they need.
	ctrllog.SetLogger(logr.Discard())
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(runUntilKilled(dir))
	}
	os.Exit(m.Run())
}

// startTimeout bounds a cluster start with real nodes on a busy machine.
const startTimeout = 8 * time.Minute

const namespace = "realnodes"

func TestTwoRealNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	before := observeMachine(t)
	dir := t.TempDir()
	began := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:          dir,
		RealNodes:    2,
		Nodes:        []localcluster.NodeSpec{{Name: "kwok-1"}},
		Log:          testr.New(t),
		StartTimeout: startTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the cluster with 2 real nodes started in %s", time.Since(began).Round(100*time.Millisecond))
	stopped := false
	defer func() {
		if !stopped {
			_ = cluster.Stop()
		}
	}()
	namespaces := hostNamespaces(t, cluster)
	c := cluster.Client()
	k := kubectl{t: t, ctx: ctx, kubeconfig: cluster.KubeconfigPath()}
	if err := cluster.CreateNamespace(ctx, namespace); err != nil {
		t.Fatal(err)
	}

	// Two replicas of the test image on two different real nodes.
	labels := map[string]string{"app": "web"}
	if err := c.Create(ctx, webDeployment(labels)); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually.That(ctx, t, "two ready web pods", func() (bool, string) {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		var states []string
		for _, p := range list.Items {
			states = append(states, fmt.Sprintf("%s on %q: %s ready=%v", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p)))
			if podReady(&p) {
				pods = append(pods, p)
			}
		}
		return len(pods) == 2, strings.Join(states, "; ")
	})
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Spec.NodeName, b.Spec.NodeName) })
	if got := []string{pods[0].Spec.NodeName, pods[1].Spec.NodeName}; !slices.Equal(got, cluster.RealNodes()) {
		t.Fatalf("the pods run on %v, want one on each of %v", got, cluster.RealNodes())
	}

	for _, p := range pods {
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
			t.Fatal(err)
		}
		podRange, err := netip.ParsePrefix(node.Spec.PodCIDR)
		if err != nil {
			t.Fatalf("node %s's pod range %q: %v", node.Name, node.Spec.PodCIDR, err)
		}
		ip := netip.MustParseAddr(p.Status.PodIP)
		if !podRange.Contains(ip) {
			t.Errorf("pod %s has %s, outside its node %s's range %s", p.Name, ip, node.Name, podRange)
		}
		// The pod's own view, through the API server's exec.
		addrs := k.run("exec", "-n", namespace, p.Name, "--", "/nodetest", "addrs")
		if want := fmt.Sprintf("eth0 %s/%d", ip, podRange.Bits()); !slices.Contains(strings.Split(addrs, "\n"), want) {
			t.Errorf("pod %s's interfaces, as it sees them:\n%s\nwant a line %q", p.Name, addrs, want)
		}
		if logs := k.run("logs", "-n", namespace, p.Name); !strings.Contains(logs, p.Name+" serving on") {
			t.Errorf("kubectl logs %s = %q, want its start-up line", p.Name, logs)
		}
		// In-cluster clients reach the API server through the kubernetes
		// Service, verifying it with the service account's CA.
		if version := strings.TrimSpace(k.run("exec", "-n", namespace, p.Name, "--", "/nodetest", "apiserver")); version != k8sbin.Version {
			t.Errorf("pod %s sees API server version %q, want %s", p.Name, version, k8sbin.Version)
		}
	}

	// A Service in front of the second node's pod only, reached from the
	// first node's pod through kube-proxy.
	client1, target := pods[0], pods[1]
	patch := client.MergeFrom(target.DeepCopy())
	target.Labels["role"] = "target"
	if err := c.Patch(ctx, &target, patch); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web", "role": "target"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	eventually.That(ctx, t, "the Service to answer "+client1.Name, func() (bool, string) {
		out, err := k.output("exec", "-n", namespace, client1.Name, "--", "/nodetest", "get", url)
		return err == nil && strings.TrimSpace(out) == target.Name, fmt.Sprintf("%q, %v", out, err)
	})

	// From the machine, the way kube-scheduler reaches an extender behind
	// a Service: through the egress proxy, from the control-plane host.
	proxied := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(cluster.ServiceProxyURL())}}
	eventually.That(ctx, t, "the Service to answer through the egress proxy", func() (bool, string) {
		body, err := get(proxied, url)
		return err == nil && body == target.Name, fmt.Sprintf("%q, %v", body, err)
	})
	// The proxy refuses the machine's own addresses.
	if body, err := get(proxied, "http://127.0.0.2:1/"); err == nil {
		t.Errorf("the egress proxy reached the machine's loopback: %q", body)
	}
	// And the API server's own way out: the Service's proxy subresource
	// goes through its egress selector to the pod.
	raw := k.run("get", "--raw", fmt.Sprintf("/api/v1/namespaces/%s/services/http:target:80/proxy/", namespace))
	if strings.TrimSpace(raw) != target.Name {
		t.Errorf("the API server's service proxy answered %q, want %q", raw, target.Name)
	}

	// The machine's kernel settings are the machine's, while kubelets run.
	checkSysctls(t, before, "while the real nodes run")

	began = time.Now()
	if err := cluster.Stop(); err != nil {
		t.Fatalf("stopping the cluster: %v", err)
	}
	stopped = true
	t.Logf("the cluster stopped in %s", time.Since(began).Round(100*time.Millisecond))
	checkMachineClean(t, before, dir, namespaces)
}

// TestRealNodesAfterACrash kills a cluster with a running pod the way a
// crash or a test timeout does (SIGKILL): its shims and containers survive
// their parents. The next start in the same directory must clean them up
// and work, and its stop leave nothing behind.
func TestRealNodesAfterACrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	before := observeMachine(t)
	dir := t.TempDir()

	child := exec.CommandContext(ctx, os.Args[0])
	child.Env = append(os.Environ(), crashDirEnv+"="+dir)
	child.Stderr = os.Stderr
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if pid, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- pid
			}
		}
		close(ready)
	}()
	var containerPID string
	select {
	case pid, ok := <-ready:
		if !ok {
			t.Fatalf("the crashing cluster ended before its pod ran: %v", child.Wait())
		}
		containerPID = pid
	case <-ctx.Done():
		t.Fatal("the crashing cluster never reported its pod running")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The pod's process outlived the cluster that started it.
	pid, err := strconv.Atoi(containerPID)
	if err != nil {
		t.Fatalf("the crashing cluster reported pid %q", containerPID)
	}
	time.Sleep(time.Second) // let the parent-death signals land
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != "nodetest" {
		t.Fatalf("the killed cluster's container (pid %d) is not running (%q, %v): the crash left nothing to clean up", pid, comm, err)
	}

	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, RealNodes: 1, Log: testr.New(t), StartTimeout: startTimeout})
	if err != nil {
		t.Fatalf("starting again after the crash: %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("the killed cluster's container (pid %d) still runs after the next start", pid)
	}
	namespaces := hostNamespaces(t, cluster)
	if err := cluster.Stop(); err != nil {
		t.Fatalf("stopping the cluster: %v", err)
	}
	checkMachineClean(t, before, dir, namespaces)
}

// runUntilKilled is the crashing cluster: one real node running one pod,
// reported with its container's pid on stdout, then nothing until SIGKILL.
func runUntilKilled(dir string) int {
	ctx := context.Background()
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, RealNodes: 1, StartTimeout: startTimeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := cluster.Client()
	if err := cluster.CreateNamespace(ctx, namespace); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName:   cluster.RealNodes()[0],
			Containers: []corev1.Container{{Name: "web", Image: localcluster.NodetestRef, ImagePullPolicy: corev1.PullNever, Args: []string{"serve"}}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err == nil && pod.Status.Phase == corev1.PodRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	pid, err := processOf("nodetest", "serve")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("READY %d\n", pid)
	select {}
}

// processOf finds the process running exactly "/<comm> args...".
func processOf(comm string, args ...string) (int, error) {
	want := strings.Join(append([]string{"/" + comm}, args...), "\x00") + "\x00"
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(cmdline) == want {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process runs %s %v", comm, args)
}

func webDeployment(labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{localcluster.RealNodeLabel: "true"},
					// One per node.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							TopologyKey:   corev1.LabelHostname,
						}},
					}},
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name:            "web",
						Image:           localcluster.NodetestRef,
						ImagePullPolicy: corev1.PullNever,
						Args:            []string{"serve"},
						Ports:           []corev1.ContainerPort{{ContainerPort: 8080}},
						// The kubelet probes from the node's namespace.
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return strings.TrimSpace(string(body)), nil
}

// kubectl runs the real kubectl against the cluster.
type kubectl struct {
	t          *testing.T
	ctx        context.Context
	kubeconfig string
}

func (k kubectl) output(args ...string) (string, error) {
	bin, err := k8sbin.Path("kubectl")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(k.ctx, bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

func (k kubectl) run(args ...string) string {
	k.t.Helper()
	out, err := k.output(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

// machine is what the real nodes could change on the machine.
type machine struct {
	sysctls map[string]string
	// paths the kubelet, containerd or iproute2 write by default: whether
	// each existed.
	paths    map[string]bool
	iptables string
}

var (
	watchedSysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "vm/panic_on_oom", "net/ipv4/ip_forward", "net/netfilter/nf_conntrack_max"}
	watchedPaths   = []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/run/containerd", "/var/run/netns",
		"/opt/containerd", "/var/lib/containerd", "/var/lib/cni", "/run/xtables.lock", "/run/mount"}
)

func observeMachine(t *testing.T) machine {
	t.Helper()
	m := machine{sysctls: map[string]string{}, paths: map[string]bool{}}
	for _, s := range watchedSysctls {
		b, err := os.ReadFile("/proc/sys/" + s)
		if err != nil {
			t.Fatal(err)
		}
		m.sysctls[s] = strings.TrimSpace(string(b))
	}
	for _, p := range watchedPaths {
		_, err := os.Lstat(p)
		m.paths[p] = err == nil
	}
	out, err := exec.Command("iptables-save").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	m.iptables = string(out)
	return m
}

func checkSysctls(t *testing.T, before machine, when string) {
	t.Helper()
	now := observeMachine(t)
	for s, v := range before.sysctls {
		if now.sysctls[s] != v {
			t.Errorf("%s: the machine's %s changed from %s to %s", when, s, v, now.sysctls[s])
		}
	}
}

// hostNamespaces records the network namespaces of the cluster's hosts
// (the holders' processes are named <host>-namespaces).
func hostNamespaces(t *testing.T, cluster *localcluster.Cluster) []string {
	t.Helper()
	var inodes []string
	for name, pid := range cluster.PIDs() {
		if !strings.HasSuffix(name, "-namespaces") {
			continue
		}
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			t.Fatal(err)
		}
		inodes = append(inodes, link)
	}
	if len(inodes) == 0 {
		t.Fatal("the cluster has no namespace holders")
	}
	return inodes
}

// checkMachineClean fails unless the machine is as before the cluster
// started: no process, mount, network namespace, link, iptables rule or
// cgroup of the cluster's, and the default paths the node components
// write to as they were.
func checkMachineClean(t *testing.T, before machine, dir string, namespaces []string) {
	t.Helper()
	checkSysctls(t, before, "after stopping")
	after := observeMachine(t)
	for p, existed := range before.paths {
		if after.paths[p] != existed {
			t.Errorf("%s existed before: %v, after: %v", p, existed, after.paths[p])
		}
	}
	for _, marker := range []string{"KUBE-", "10.244.", "172.31.0."} {
		if strings.Contains(after.iptables, marker) && !strings.Contains(before.iptables, marker) {
			t.Errorf("the machine's iptables now mention %q:\n%s", marker, after.iptables)
		}
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		if iface.Name == "lcbr0" || iface.Name == "cni0" || strings.HasPrefix(iface.Name, "lcveth") {
			t.Errorf("link %s is left in the machine's network namespace", iface.Name)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(mounts)) {
		if strings.Contains(line, dir) {
			t.Errorf("a mount of the cluster is left: %s", line)
		}
		for _, ns := range namespaces {
			if strings.Contains(line, ns) {
				t.Errorf("network namespace %s is still mounted: %s", ns, line)
			}
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		if cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline")); err == nil && bytes.Contains(cmdline, []byte(dir)) {
			t.Errorf("process %s of the cluster is left: %s", e.Name(), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
		if comm, err := os.ReadFile(filepath.Join(proc, "comm")); err == nil && strings.TrimSpace(string(comm)) == "nodetest" && !ofAnotherLiveCluster(proc) {
			t.Errorf("a container of the cluster (pid %s) is left", e.Name())
		}
		if link, err := os.Readlink(filepath.Join(proc, "ns", "net")); err == nil && slices.Contains(namespaces, link) {
			t.Errorf("process %s still holds the cluster's network namespace %s", e.Name(), link)
		}
	}
	owner := fmt.Sprintf("%d-", os.Getpid())
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/edgeplane-localcluster/" + owner + "*")
	for _, cg := range cgroups {
		t.Errorf("cgroup %s is left", cg)
	}
	// The crashed child's cgroups, named after its pid, are gone too.
	leftovers, _ := filepath.Glob("/sys/fs/cgroup/freezer/edgeplane-localcluster/*")
	for _, cg := range leftovers {
		if pid, _, ok := strings.Cut(filepath.Base(cg), "-"); ok {
			if _, err := os.Stat("/proc/" + pid); err != nil {
				t.Errorf("cgroup %s of a dead cluster is left", cg)
			}
		}
	}
}

// ofAnotherLiveCluster reports whether the process at proc runs in the
// cgroup of another local cluster that is still running (a demo, a
// concurrent suite): its owner, the pid that names the cgroup, is neither
// this test nor dead. A container in no cluster's cgroup, or in this one's
// or a dead one's, counts as this cluster's leftover.
func ofAnotherLiveCluster(proc string) bool {
	raw, err := os.ReadFile(filepath.Join(proc, "cgroup"))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(raw), "/edgeplane-localcluster/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "-")
	if pid == strconv.Itoa(os.Getpid()) {
		return false
	}
	_, err = os.Stat("/proc/" + pid)
	return err == nil
}
