//go:build linux

package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// Names of the real nodes' processes and files.
const (
	controlPlaneHost = "control-plane"
	Kubelet          = "kubelet"
	KubeProxy        = "kube-proxy"
	Containerd       = "containerd"
	// apiServerKubeletClientCN is the API server's identity towards the
	// kubelets, bound to system:kubelet-api-admin as kubeadm binds it.
	apiServerKubeletClientCN = "kube-apiserver-kubelet-client"
	kubeProxyCN              = "system:kube-proxy"
	// maxUnixSocketPath leaves room for containerd's ".ttrpc" suffix within
	// the kernel's 108 bytes.
	maxUnixSocketPath = 100
)

// realNodes is the state of a cluster's real nodes. How they meet the
// control plane, and why:
//
//   - Servers listen only on loopback or in namespaces the cluster made, so
//     the API server keeps its loopback address and no interface is added
//     to the machine's own namespace. The nodes sit on a bridge in a
//     namespace of their own, the control-plane host, where a relay
//     (serveRelay) listens on the gateway address on the API server's port
//     and passes connections to loopback; the API server advertises that
//     address, so the kubernetes Service leads pods there too.
//   - The API server reaches into the cluster through its egress selector
//     (egressSelectorConfig): an HTTP CONNECT proxy (egressProxy) on a
//     root-only unix socket that dials from the control-plane host. That
//     host runs a kube-proxy of its own, so webhooks and aggregated APIs are
//     called by Service ClusterIP exactly as in a cluster whose control
//     plane runs kube-proxy; --enable-aggregator-routing would pick
//     endpoints itself and never exercise kube-proxy. kube-scheduler gets
//     the same proxy on loopback, with a password, as HTTP(S)_PROXY, for
//     extenders behind Services.
//   - Identities are a real cluster's: the Node authorizer and
//     NodeRestriction for the kubelets' system:node:<name> certificates, a
//     kubelet serving certificate the API server verifies, and the API
//     server's own client certificate bound to system:kubelet-api-admin.
//     Nothing is anonymous.
//   - Teardown is by cgroup, not by process list: see cgroups_linux.go.
type realNodes struct {
	plan    realNetworkPlan
	cgroups cgroupTree
	bins    realNodeBinaries
	masks   map[string]int
	sandbox NodeImage

	cp      *nsHost
	cpProxy *process
	nodes   []*realNode

	apiRelay     net.Listener
	exposed      []net.Listener // ExposeLoopbackPort's, guarded by the cluster's mu
	egressSocket string
	egress       []*http.Server
	proxyURL     *url.URL
}

// realNode is one node: its namespaces and daemons.
type realNode struct {
	addrs      realNodeAddrs
	dir        string
	host       *nsHost
	containerd *process
	kubelet    *process
	kubeProxy  *process
}

// referenceCNIPlugins are the CNI plugins every real node has in its
// /opt/cni/bin from the start.
var referenceCNIPlugins = []string{"bridge", "host-local", "portmap", "loopback"}

// realNodeBinaries are the programs a real node runs.
type realNodeBinaries struct {
	kubelet, kubeProxy, containerd, ctr, cniDir string
}

// findRealNodeBinaries locates every program the real nodes need, naming
// the make target that provides a missing one.
func findRealNodeBinaries() (realNodeBinaries, error) {
	var b realNodeBinaries
	var err error
	if b.kubelet, err = k8sbin.Path(Kubelet); err != nil {
		return b, fmt.Errorf("%w (kubelet and kube-proxy: run `make k8s-node-bin`)", err)
	}
	if b.kubeProxy, err = k8sbin.Path(KubeProxy); err != nil {
		return b, fmt.Errorf("%w (kubelet and kube-proxy: run `make k8s-node-bin`)", err)
	}
	if b.cniDir, err = k8sbin.CNIDir(referenceCNIPlugins...); err != nil {
		return b, err
	}
	tools := map[string]*string{"containerd": &b.containerd, "ctr": &b.ctr}
	for _, name := range []string{"containerd", "ctr", "containerd-shim-runc-v2", "runc", "iptables", "nsenter", "mount"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return b, fmt.Errorf("real nodes need %s (run `make node-runtime`): %w", name, err)
		}
		if dst, ok := tools[name]; ok {
			*dst = p
		}
	}
	return b, nil
}

// prepareRealNodes readies everything the real nodes need before the
// control plane starts: the binaries, a clean slate (what crashed clusters
// left, and this cluster's directory), the cgroup subtree, the
// control-plane host with the bridge, the egress proxy the API server is
// configured with, and the sandbox image.
func (c *Cluster) prepareRealNodes(ctx context.Context) error {
	plan, err := planRealNetwork(c.opts.RealNodes)
	if err != nil {
		return err
	}
	bins, err := findRealNodeBinaries()
	if err != nil {
		return err
	}
	if err := RemoveStaleRealNodes(c.log); err != nil {
		return fmt.Errorf("removing what crashed clusters left: %w", err)
	}
	masks, err := tunableMasks(kubeletTunables, readSysctl)
	if err != nil {
		return err
	}
	tree, err := newCgroupTree()
	if err != nil {
		return err
	}
	r := &realNodes{plan: plan, cgroups: tree, bins: bins, masks: masks}
	c.real = r
	names := make([]string, 0, len(plan.Nodes))
	for _, n := range plan.Nodes {
		names = append(names, n.Name)
	}
	if err := tree.create(names); err != nil {
		return err
	}

	// The image build runs while the network comes up.
	type built struct {
		img NodeImage
		err error
	}
	images := make(chan built, 1)
	if c.opts.SandboxImage.Archive != "" {
		images <- built{img: c.opts.SandboxImage}
	} else {
		go func() {
			began := time.Now()
			img, err := BuildNodetestImage(ctx, filepath.Join(c.dir, "nodes", "images"))
			if err == nil {
				c.log.Info("sandbox image built", "ref", img.Ref, "took", time.Since(began).Round(time.Millisecond))
			}
			images <- built{img, err}
		}()
	}

	nodesDir := filepath.Join(c.dir, "nodes")
	for _, d := range append([]string{controlPlaneHost}, names...) {
		if err := os.RemoveAll(filepath.Join(nodesDir, d)); err != nil {
			return fmt.Errorf("cleaning %s: %w", d, err)
		}
	}
	if r.cp, err = c.startNSHost(controlPlaneHost, filepath.Join(nodesDir, controlPlaneHost), nil, nil); err != nil {
		return err
	}
	if err := setUpControlPlaneNetwork(r.cp, plan); err != nil {
		return err
	}
	if err := c.startEgressProxy(); err != nil {
		return err
	}
	b := <-images
	if b.err != nil {
		return b.err
	}
	r.sandbox = b.img
	c.log.Info("real nodes prepared", "nodes", len(names), "cgroup", tree.rel, "gateway", plan.Gateway)
	return nil
}

// readSysctl reads a kernel setting of the machine.
func readSysctl(name string) (int, error) {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return 0, fmt.Errorf("reading kernel setting %s: %w", name, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("kernel setting %s: %w", name, err)
	}
	return v, nil
}

// startEgressProxy serves the egress proxy on a unix socket for the API
// server and on loopback, with a password, for kube-scheduler.
func (c *Cluster) startEgressProxy() error {
	r := c.real
	r.egressSocket = filepath.Join(c.dir, "apiserver", "egress.sock")
	if len(r.egressSocket) > maxUnixSocketPath {
		return fmt.Errorf("the cluster directory %s is too long for a unix socket path (%s)", c.dir, r.egressSocket)
	}
	if err := os.MkdirAll(filepath.Dir(r.egressSocket), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(r.egressSocket), err)
	}
	_ = os.Remove(r.egressSocket)
	uds, err := net.Listen("unix", r.egressSocket)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", r.egressSocket, err)
	}
	if err := os.Chmod(r.egressSocket, 0o600); err != nil {
		_ = uds.Close()
		return fmt.Errorf("restricting %s to root: %w", r.egressSocket, err)
	}
	// Loopback, with a password: every process on the machine can reach
	// this port, and behind it are the cluster's pods and Services.
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = uds.Close()
		return fmt.Errorf("listening for the egress proxy: %w", err)
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	password := hex.EncodeToString(secret)
	r.proxyURL = &url.URL{Scheme: "http", User: url.UserPassword("localcluster", password), Host: tcp.Addr().String()}
	for _, l := range []struct {
		listener net.Listener
		password string
	}{{uds, ""}, {tcp, password}} {
		srv := newEgressServer(&egressProxy{
			dial:     r.cp.dial,
			allowed:  r.plan.contains,
			user:     "localcluster",
			password: l.password,
			log:      c.log.WithName("egress-proxy"),
		})
		r.egress = append(r.egress, srv)
		go func() { _ = srv.Serve(l.listener) }()
	}
	return nil
}

// realAPIServerFlags are the API server's flags for real nodes.
func (c *Cluster) realAPIServerFlags() []string {
	r := c.real
	return []string{
		// The kubernetes Service's endpoint: the relay on the gateway.
		"--advertise-address=" + r.plan.Gateway.Addr().String(),
		"--endpoint-reconciler-type=lease",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + c.pki.path(apiServerKubeletClientName+".crt"),
		"--kubelet-client-key=" + c.pki.path(apiServerKubeletClientName+".key"),
		"--kubelet-certificate-authority=" + c.pki.path(caCertFile),
		"--egress-selector-config-file=" + filepath.Join(c.dir, "apiserver", "egress-selector.yaml"),
		// What a real cluster runs: a kubelet may read only what its own
		// pods need and change only its own node and pods.
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
	}
}

// apiServerKubeletClientName is the file name of the API server's client
// certificate towards the kubelets.
const apiServerKubeletClientName = "apiserver-kubelet-client"

// prepareRealPKI issues what the API server needs for the real nodes before
// it starts and writes its egress selector configuration.
func (c *Cluster) prepareRealPKI() error {
	if _, _, err := c.pki.issueClient(apiServerKubeletClientName, apiServerKubeletClientCN); err != nil {
		return err
	}
	conf, err := egressSelectorConfig(c.real.egressSocket)
	if err != nil {
		return fmt.Errorf("rendering the egress selector configuration: %w", err)
	}
	path := filepath.Join(c.dir, "apiserver", "egress-selector.yaml")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// realServerURL is the API server's address as the real nodes reach it.
func (c *Cluster) realServerURL() string {
	return "https://" + net.JoinHostPort(c.real.plan.Gateway.Addr().String(), strconv.Itoa(c.apiServerPort))
}

// startControlPlaneHost starts, as soon as the API server serves, what
// runs in the control-plane host: the relay to the API server and
// kube-proxy. That kube-proxy finds no Node of its name and waits 30
// seconds for one before it programs its rules (kube-proxy's fixed
// timeout), so it starts first and the nodes come up meanwhile.
func (c *Cluster) startControlPlaneHost(ctx context.Context) error {
	r := c.real
	relay, err := r.cp.listen("tcp", net.JoinHostPort(r.plan.Gateway.Addr().String(), strconv.Itoa(c.apiServerPort)))
	if err != nil {
		return err
	}
	r.apiRelay = relay
	upstream := fmt.Sprintf("127.0.0.1:%d", c.apiServerPort)
	go serveRelay(relay, func() (net.Conn, error) { return net.DialTimeout("tcp", upstream, 10*time.Second) }, c.log)

	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "localcluster:" + apiServerKubeletClientCN},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: apiServerKubeletClientCN}},
	}
	if err := c.client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("letting the API server use the kubelets: %w", err)
	}
	if err := c.createFloatIPRuntimeClass(ctx); err != nil {
		return err
	}
	if err := c.writeIdentityKubeconfig(KubeProxy, kubeProxyCN); err != nil {
		return err
	}
	r.cpProxy, err = c.startKubeProxy(r.cp, controlPlaneHost, r.plan.Gateway.Addr())
	return err
}

// startRealNodes starts every node at once and returns when each node's
// kubelet has registered it.
func (c *Cluster) startRealNodes(ctx context.Context) error {
	r := c.real
	errs := make([]error, len(r.plan.Nodes))
	var wg sync.WaitGroup
	for i, addrs := range r.plan.Nodes {
		n := &realNode{addrs: addrs, dir: filepath.Join(c.dir, "nodes", addrs.Name)}
		r.nodes = append(r.nodes, n)
		wg.Go(func() { errs[i] = c.startRealNode(ctx, n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeIdentityKubeconfig issues a client certificate for cn (in groups)
// and writes <name>.kubeconfig pointing at the real nodes' API address.
func (c *Cluster) writeIdentityKubeconfig(name, cn string, groups ...string) error {
	cert, key, err := c.pki.issueClient(name+"-client", cn, groups...)
	if err != nil {
		return err
	}
	creds := credentials{caPEM: c.pki.caPEM, certPEM: cert, keyPEM: key}
	return creds.writeKubeconfig(c.componentKubeconfig(name), c.realServerURL(), cn)
}

// startRealNode brings one node up: namespaces and network, containerd
// with the images, the kubelet (until it has registered the node, which
// then gets its pod range) and kube-proxy.
func (c *Cluster) startRealNode(ctx context.Context, n *realNode) error {
	r := c.real
	name := n.addrs.Name
	began := time.Now()
	var err error
	if err := c.writeNodeCNI(n); err != nil {
		return err
	}
	if n.host, err = c.startNSHost(name, n.dir, r.masks, nodeOverlays); err != nil {
		return err
	}
	if err := attachNode(r.cp, n.host, n.addrs, r.plan); err != nil {
		return err
	}
	if err := c.startContainerd(ctx, n); err != nil {
		return err
	}
	for _, img := range append([]NodeImage{r.sandbox}, c.opts.NodeImages...) {
		if err := c.importImage(ctx, n, img); err != nil {
			return err
		}
	}
	if err := c.startKubelet(ctx, n); err != nil {
		return err
	}
	if n.kubeProxy, err = c.startKubeProxy(n.host, name, n.addrs.IP.Addr()); err != nil {
		return err
	}
	c.log.Info("real node registered", "node", name, "ip", n.addrs.IP.Addr(), "pods", n.addrs.PodCIDR,
		"took", time.Since(began).Round(time.Millisecond))
	return nil
}

// startContainerd writes the node's containerd and CNI configuration and
// starts containerd, waiting for its socket.
func (c *Cluster) startContainerd(ctx context.Context, n *realNode) error {
	r := c.real
	dir := filepath.Join(n.dir, Containerd)
	paths := containerdPaths{
		Root:           filepath.Join(dir, "root"),
		State:          filepath.Join(dir, "state"),
		Socket:         filepath.Join(dir, "containerd.sock"),
		Opt:            filepath.Join(dir, "opt"),
		CNIBinDir:      nodeCNIBinDir,
		CNIConfDir:     nodeCNIConfDir,
		FloatIPConfDir: nodeFloatIPConfDir,
		SandboxImage:   r.sandbox.Ref,
		StreamAddress:  "127.0.0.1",
	}
	if len(paths.Socket) > maxUnixSocketPath {
		return fmt.Errorf("the cluster directory %s is too long for containerd's socket path %s", c.dir, paths.Socket)
	}
	conf, err := containerdConfig(paths)
	if err != nil {
		return err
	}
	if err := writeFileMkdir(filepath.Join(dir, "config.toml"), []byte(conf)); err != nil {
		return err
	}
	p, err := c.startDaemon(n.host, n.addrs.Name+"-"+Containerd, r.bins.containerd, "--config", filepath.Join(dir, "config.toml"))
	if err != nil {
		return err
	}
	n.containerd = p
	c.track(p)
	return waitReady(ctx, p, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", paths.Socket)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// Where a node's containerd finds its CNI plugins and configurations: the
// usual paths, in the node's own overlay of /etc and /opt (nodeOverlays).
const (
	nodeCNIBinDir      = "/opt/cni/bin"
	nodeCNIConfDir     = "/etc/cni/net.d"
	nodeFloatIPConfDir = "/etc/cni/floatip.d"
)

// writeNodeCNI writes, before the node's host starts, what its overlays
// hold from the start: the reference plugins in its /opt/cni/bin (links to
// the cluster's build), its pod network in /etc/cni/net.d and the float-IP
// network in /etc/cni/floatip.d.
func (c *Cluster) writeNodeCNI(n *realNode) error {
	r := c.real
	podNet, err := cniConfig(n.addrs.PodCIDR, filepath.Join(n.dir, "cni", "ipam"))
	if err != nil {
		return fmt.Errorf("rendering %s's CNI configuration: %w", n.addrs.Name, err)
	}
	floatNet, err := floatIPConfig()
	if err != nil {
		return fmt.Errorf("rendering %s's float-IP network: %w", n.addrs.Name, err)
	}
	etc := nodeOverlayUpper(n.dir, "/etc")
	for path, data := range map[string][]byte{
		filepath.Join(etc, strings.TrimPrefix(nodeCNIConfDir, "/etc"), "10-localcluster.conflist"): podNet,
		filepath.Join(etc, strings.TrimPrefix(nodeFloatIPConfDir, "/etc"), "10-floatip.conflist"):  floatNet,
	} {
		if err := writeFileMkdir(path, data); err != nil {
			return err
		}
	}
	bin := filepath.Join(nodeOverlayUpper(n.dir, "/opt"), strings.TrimPrefix(nodeCNIBinDir, "/opt"))
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", bin, err)
	}
	for _, plugin := range referenceCNIPlugins {
		if err := os.Symlink(filepath.Join(r.bins.cniDir, plugin), filepath.Join(bin, plugin)); err != nil {
			return fmt.Errorf("linking %s's CNI plugin %s: %w", n.addrs.Name, plugin, err)
		}
	}
	return nil
}

// importImage loads img into the node's containerd, in the namespace the
// kubelet's images live in.
func (c *Cluster) importImage(ctx context.Context, n *realNode, img NodeImage) error {
	sock := filepath.Join(n.dir, Containerd, "containerd.sock")
	out, err := exec.CommandContext(ctx, c.real.bins.ctr, "--address", sock, "--namespace", "k8s.io",
		"images", "import", img.Archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("importing %s into %s: %w: %s", img.Archive, n.addrs.Name, err, out)
	}
	if !strings.Contains(string(out), img.Ref) {
		return fmt.Errorf("importing %s into %s: it does not hold %s: %s", img.Archive, n.addrs.Name, img.Ref, out)
	}
	return nil
}

// startKubelet issues the kubelet's identity (system:node:<name> in
// system:nodes, which the Node authorizer and NodeRestriction recognise)
// and serving certificate, starts it and waits until it has registered
// the node, then gives the node its pod range.
func (c *Cluster) startKubelet(ctx context.Context, n *realNode) error {
	r := c.real
	name := n.addrs.Name
	dir := filepath.Join(n.dir, Kubelet)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	cert, key, err := c.pki.issueClient(name+"-kubelet-client", "system:node:"+name, "system:nodes")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	creds := credentials{caPEM: c.pki.caPEM, certPEM: cert, keyPEM: key}
	if err := creds.writeKubeconfig(kubeconfig, c.realServerURL(), "system:node:"+name); err != nil {
		return err
	}
	if _, _, err := c.pki.issueNodeServing(name+"-kubelet", name, n.addrs.IP.Addr().AsSlice()); err != nil {
		return err
	}
	conf, err := kubeletConfig(kubeletSettings{
		NodeIP:        n.addrs.IP.Addr().String(),
		ClientCAFile:  c.pki.path(caCertFile),
		TLSCertFile:   c.pki.path(name + "-kubelet.crt"),
		TLSKeyFile:    c.pki.path(name + "-kubelet.key"),
		RuntimeSocket: filepath.Join(n.dir, Containerd, "containerd.sock"),
		CgroupRoot:    r.cgroups.kubeletRoot(name),
		PodLogsDir:    filepath.Join(n.dir, "pod-logs"),
	})
	if err != nil {
		return fmt.Errorf("rendering %s's kubelet configuration: %w", name, err)
	}
	if err := writeFileMkdir(filepath.Join(dir, "config.yaml"), conf); err != nil {
		return err
	}
	p, err := c.startDaemon(n.host, name+"-"+Kubelet, r.bins.kubelet,
		"--config="+filepath.Join(dir, "config.yaml"),
		"--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(dir, "root"),
		"--hostname-override="+name,
		"--node-ip="+n.addrs.IP.Addr().String(),
		"--node-labels="+RealNodeLabel+"=true",
	)
	if err != nil {
		return err
	}
	n.kubelet = p
	c.track(p)
	var node corev1.Node
	err = waitReady(ctx, p, func(ctx context.Context) error {
		return c.client.Get(ctx, client.ObjectKey{Name: name}, &node)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to register: %w", name, err)
	}
	// The controller manager's node IPAM is off (kwok hands out its own
	// addresses), so the node's range, which its CNI configuration already
	// uses, is set here for kube-proxy and anyone reading the Node.
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.PodCIDR = n.addrs.PodCIDR.String()
	node.Spec.PodCIDRs = []string{n.addrs.PodCIDR.String()}
	if err := c.client.Patch(ctx, &node, patch); err != nil {
		return fmt.Errorf("setting %s's pod range: %w", name, err)
	}
	return nil
}

// startKubeProxy starts kube-proxy in host, as hostname, with the node
// address bind (its node IP when the Node object does not exist, as for
// the control-plane host, which has none).
func (c *Cluster) startKubeProxy(host *nsHost, hostname string, bind netip.Addr) (*process, error) {
	r := c.real
	dir := filepath.Join(host.dir, KubeProxy)
	conf, err := kubeProxyConfig(kubeProxySettings{
		Kubeconfig:  c.componentKubeconfig(KubeProxy),
		Hostname:    hostname,
		BindAddress: bind.String(),
		ClusterCIDR: r.plan.ClusterCIDR.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("rendering %s's kube-proxy configuration: %w", hostname, err)
	}
	if err := writeFileMkdir(filepath.Join(dir, "config.yaml"), conf); err != nil {
		return nil, err
	}
	p, err := c.startDaemon(host, hostname+"-"+KubeProxy, r.bins.kubeProxy, "--config="+filepath.Join(dir, "config.yaml"))
	if err != nil {
		return nil, err
	}
	c.track(p)
	return p, nil
}

// waitRealNodes waits until every node is Ready (and untainted) and every
// kube-proxy has programmed its rules.
func (c *Cluster) waitRealNodes(ctx context.Context) error {
	r := c.real
	for _, n := range r.nodes {
		if err := c.WaitNodeReady(ctx, n.addrs.Name); err != nil {
			return c.withLogTail(err, n.addrs.Name+"-"+Kubelet)
		}
	}
	type proxy struct {
		host *nsHost
		p    *process
	}
	proxies := []proxy{{r.cp, r.cpProxy}}
	for _, n := range r.nodes {
		proxies = append(proxies, proxy{n.host, n.kubeProxy})
	}
	for _, px := range proxies {
		probe := &http.Client{Transport: &http.Transport{DialContext: px.host.dial, Proxy: nil}}
		err := waitReady(ctx, px.p, httpOK(probe, fmt.Sprintf("http://127.0.0.1:%d/livez", kubeProxyHealthz)))
		probe.CloseIdleConnections()
		if err != nil {
			return fmt.Errorf("waiting for %s's kube-proxy: %w", px.host.name, err)
		}
	}
	return nil
}

// stopRealNodes stops the kubelets first (they would restart what goes
// next), then kube-proxy and containerd, then kills what is left in the
// cluster's cgroups (shims, containers, the namespace holders: with them
// go the namespaces, their mounts, links and iptables rules) and removes
// the cgroups.
func (c *Cluster) stopRealNodes() error {
	r := c.real
	if r == nil {
		return nil
	}
	each := func(pick func(*realNode) *process) []*process {
		var procs []*process
		for _, n := range r.nodes {
			procs = append(procs, pick(n))
		}
		return procs
	}
	errs := c.stopAll(each(func(n *realNode) *process { return n.kubelet }))
	errs = append(errs, c.stopAll(append(each(func(n *realNode) *process { return n.kubeProxy }), r.cpProxy))...)
	errs = append(errs, c.stopAll(each(func(n *realNode) *process { return n.containerd }))...)
	if err := r.cgroups.remove(c.log); err != nil {
		errs = append(errs, err)
	}
	if r.apiRelay != nil {
		_ = r.apiRelay.Close()
	}
	c.mu.Lock()
	for _, l := range r.exposed {
		_ = l.Close()
	}
	c.mu.Unlock()
	for _, srv := range r.egress {
		_ = srv.Close()
	}
	if r.egressSocket != "" {
		_ = os.Remove(r.egressSocket)
	}
	for _, n := range r.nodes {
		if n.host != nil {
			n.host.close()
		}
	}
	if r.cp != nil {
		r.cp.close()
	}
	return errors.Join(errs...)
}

// writeFileMkdir writes data to path, creating its directory.
func writeFileMkdir(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// RealNodeLabel marks the real nodes (value "true"), for pods that need a
// real container and DaemonSets that must not land on kwok nodes.
const RealNodeLabel = "localcluster.edgeplane.io/real-node"

// RealNodes names the cluster's real nodes.
func (c *Cluster) RealNodes() []string {
	if c.real == nil {
		return nil
	}
	names := make([]string, 0, len(c.real.plan.Nodes))
	for _, n := range c.real.plan.Nodes {
		names = append(names, n.Name)
	}
	return names
}

// ServiceProxyURL is an HTTP proxy (credentials included) through which a
// process on the machine reaches the real nodes' network: Services by
// ClusterIP, pods, the nodes' ports. kube-scheduler uses it for extenders
// behind Services; a Go client sets it as its Transport's Proxy. Nil
// without real nodes.
func (c *Cluster) ServiceProxyURL() *url.URL {
	if c.real == nil || c.real.proxyURL == nil {
		return nil
	}
	u := *c.real.proxyURL
	return &u
}

// DialClusterNetwork connects to addr from the control-plane host, as the
// API server's egress does: a Service's ClusterIP, a pod or a node.
func (c *Cluster) DialClusterNetwork(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.real == nil {
		return nil, errors.New("the cluster has no real nodes")
	}
	return c.real.cp.dial(ctx, network, addr)
}

// LoadImage imports img into every real node's containerd.
func (c *Cluster) LoadImage(ctx context.Context, img NodeImage) error {
	if c.real == nil {
		return errors.New("the cluster has no real nodes")
	}
	for _, n := range c.real.nodes {
		if err := c.importImage(ctx, n, img); err != nil {
			return err
		}
	}
	return nil
}

// createFloatIPRuntimeClass creates the RuntimeClass whose pods get the
// nodes' float-IP network (FloatIPRuntimeClass). Unstructured, so that it
// needs nothing of Options.Scheme.
func (c *Cluster) createFloatIPRuntimeClass(ctx context.Context) error {
	rc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "node.k8s.io/v1",
		"kind":       "RuntimeClass",
		"metadata":   map[string]any{"name": FloatIPRuntimeClass},
		"handler":    FloatIPRuntimeHandler,
	}}
	if err := c.client.Create(ctx, rc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the RuntimeClass %s: %w", FloatIPRuntimeClass, err)
	}
	return nil
}

// GatewayAddr is the control-plane host's address on the real nodes'
// bridge: where pods and nodes reach what the cluster serves them from
// the machine (the API server's relay, ListenClusterNetwork's listeners).
func (c *Cluster) GatewayAddr() (netip.Addr, error) {
	if c.real == nil {
		return netip.Addr{}, errors.New("the cluster has no real nodes")
	}
	return c.real.plan.Gateway.Addr(), nil
}

// ListenClusterNetwork listens on port (0: any free one) of GatewayAddr,
// in the control-plane host: a server of the test or the demo (the cloud
// emulator) that pods must reach, as they would an endpoint outside the
// cluster. Only the cluster's namespaces reach that address, never the
// machine's other processes; the caller closes the listener.
func (c *Cluster) ListenClusterNetwork(port int) (net.Listener, error) {
	if c.real == nil {
		return nil, errors.New("the cluster has no real nodes")
	}
	return c.real.cp.listen("tcp", net.JoinHostPort(c.real.plan.Gateway.Addr().String(), strconv.Itoa(port)))
}

// ExposeLoopbackPort makes a server on the machine's 127.0.0.1:port (the
// demo's cloud emulator) reachable from the cluster's network at
// GatewayAddr():port, until the cluster stops: a relay in the
// control-plane host, as for the API server. The server keeps its own
// authentication; only the cluster's namespaces reach that address.
func (c *Cluster) ExposeLoopbackPort(port int) error {
	l, err := c.ListenClusterNetwork(port)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.real.exposed = append(c.real.exposed, l)
	c.mu.Unlock()
	upstream := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	go serveRelay(l, func() (net.Conn, error) { return net.DialTimeout("tcp", upstream, 10*time.Second) }, c.log)
	return nil
}

// RealNodePath is where the machine sees path of a real node's own view of
// the file system (its mount namespace: its /var/lib, /run, /etc/cni, ...),
// for a test reading what the node wrote, such as containerd's cached CNI
// results under /var/lib/cni/results.
func (c *Cluster) RealNodePath(node, path string) (string, error) {
	if c.real == nil {
		return "", errors.New("the cluster has no real nodes")
	}
	for _, n := range c.real.nodes {
		if n.addrs.Name == node && n.host != nil {
			return n.host.path(path), nil
		}
	}
	return "", fmt.Errorf("no real node %q", node)
}
