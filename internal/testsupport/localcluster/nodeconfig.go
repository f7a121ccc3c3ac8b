package localcluster

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The configuration files of a real node and of the API server's egress,
// rendered from plain values so each is table-tested apart from the
// processes that read it.

// Well-known ports inside a node's own network namespace: nothing else
// listens there, so the kubelet's and kube-proxy's defaults are free.
const (
	kubeletPort        = 10250
	kubeletHealthzPort = 10248
	kubeProxyHealthz   = 10256
	kubeProxyMetrics   = 10249
)

// containerdPaths are where one node's containerd keeps its state.
type containerdPaths struct {
	Root, State, Socket string
	// Opt is containerd's "opt" plugin directory, which it would otherwise
	// create as /opt/containerd on the machine.
	Opt        string
	CNIBinDir  string
	CNIConfDir string
	// FloatIPConfDir is the CNI configuration directory of the
	// FloatIPRuntimeClass's runtime handler.
	FloatIPConfDir string
	SandboxImage   string
	StreamAddress  string
}

// containerdConfig renders a containerd 1.6 configuration (version 2) for
// a node: its own root, state and socket, the CRI plugin with the sandbox
// image the cluster imported, the reference CNI plugins, and runc with
// cgroupfs (the kubelet's cgroup driver), twice: as the default runtime
// handler on the node's pod network, and as FloatIPRuntimeClass's handler
// on the float-IP network (its own CNI configuration directory, which
// containerd reads per runtime handler).
func containerdConfig(p containerdPaths) (string, error) {
	for _, v := range []string{p.Root, p.State, p.Socket, p.Opt, p.CNIBinDir, p.CNIConfDir, p.FloatIPConfDir, p.SandboxImage, p.StreamAddress} {
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) || r > unicode.MaxASCII }) {
			return "", fmt.Errorf("containerd configuration value %q: want printable ASCII", v)
		}
	}
	q := strconv.Quote
	return fmt.Sprintf(`version = 2
root = %s
state = %s
oom_score = 0
# No metrics, debug or tracing endpoints: nothing listens but the socket.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %s

[plugins."io.containerd.internal.v1.opt"]
  path = %s

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %s
  # The pod sandboxes' network namespaces are mounted under the state
  # directory, not /var/run/netns.
  netns_mounts_under_state_dir = true
  # This machine lacks CAP_SYS_RESOURCE: runc cannot give a container a
  # lower oom_score_adj than containerd's own, and without this every
  # sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  # exec, attach and port-forward are served on the node's own loopback
  # and reached through the kubelet.
  stream_server_address = %s
  stream_server_port = "0"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%s]
      runtime_type = "io.containerd.runc.v2"
      cni_conf_dir = %s
      cni_max_conf_num = 1
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%s.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %s
    conf_dir = %s
    max_conf_num = 1
`, q(p.Root), q(p.State), q(p.Socket), q(p.Opt), q(p.SandboxImage), q(p.StreamAddress),
		FloatIPRuntimeHandler, q(p.FloatIPConfDir), FloatIPRuntimeHandler, q(p.CNIBinDir), q(p.CNIConfDir)), nil
}

// cniConfig renders a node's CNI network: a bridge (cni0, the pods'
// gateway) with host-local addresses from the lower half of the node's pod
// range (the upper half is its float IPs', floatIPConfig), hairpin mode so
// a pod reaches itself through a Service, and portmap for hostPort. No
// masquerading: nothing outside the cluster's namespaces is reachable
// anyway, and the other nodes route the pods' addresses.
func cniConfig(podCIDR netip.Prefix, ipamDataDir string) ([]byte, error) {
	hostLocal, _, err := splitPodRange(podCIDR)
	if err != nil {
		return nil, err
	}
	return podNetwork("localcluster", map[string]any{
		"type": "host-local",
		"ranges": [][]map[string]string{{{
			"subnet":     podCIDR.String(),
			"rangeStart": hostLocal.first.String(),
			"rangeEnd":   hostLocal.last.String(),
		}}},
		"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
		"dataDir": ipamDataDir,
	})
}

// FloatIPNetwork is the name of the float-IP network (floatIPConfig):
// containerd keeps each pod's result under /var/lib/cni/results/
// <network>-<sandbox id>-<interface> until CNI DEL.
const FloatIPNetwork = "floatip"

// floatIPConfig renders the network of FloatIPRuntimeClass's pods: the
// same bridge, with edgeplane-cni-ipam handing each pod the float IP the
// scheduler extender allocated. The plugin is not the cluster's: the
// chart's DaemonSet installs it into the node's /opt/cni/bin, with its
// kubeconfig; until then such pods fail to start, as on any node the
// DaemonSet has not reached yet. A FloatIPPool for the node takes its
// addresses from the upper half of the node's pod range (FloatIPRange), so
// the bridge is their gateway and the other nodes route them already.
func floatIPConfig() ([]byte, error) {
	return podNetwork(FloatIPNetwork, map[string]any{"type": "edgeplane-cni-ipam"})
}

// podNetwork is the node's conflist shape with ipam as the bridge's IPAM.
func podNetwork(name string, ipam map[string]any) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       name,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "cni0",
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam":        ipam,
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// addrRange is an inclusive range of addresses.
type addrRange struct{ first, last netip.Addr }

// splitPodRange splits an IPv4 pod range into its host-local half (from
// the address after the bridge's, the gateway, to the middle) and its
// float-IP half (the rest, without the broadcast address).
func splitPodRange(p netip.Prefix) (hostLocal, floatIPs addrRange, err error) {
	p = p.Masked()
	if !p.Addr().Is4() || p.Bits() > 28 {
		return addrRange{}, addrRange{}, fmt.Errorf("pod range %s: want IPv4 with at least 16 addresses", p)
	}
	base := p.Addr().As4()
	n := uint32(1) << (32 - p.Bits())
	at := func(off uint32) netip.Addr {
		v := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
		v += off
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	return addrRange{at(2), at(n/2 - 1)}, addrRange{at(n / 2), at(n - 2)}, nil
}

// kubeletSettings are the values a node's kubelet configuration varies in.
type kubeletSettings struct {
	NodeIP, ClientCAFile, TLSCertFile, TLSKeyFile string
	RuntimeSocket, CgroupRoot, PodLogsDir         string
}

// kubeletConfig renders a KubeletConfiguration. Authentication and
// authorization are the real thing: client certificates from the cluster
// CA (the API server's among them) and the API server's TokenReview and
// SubjectAccessReview for everything else, nothing anonymous. The rest is
// what this machine needs (see each comment).
func kubeletConfig(s kubeletSettings) ([]byte, error) {
	conf := kubeletv1beta1.KubeletConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletv1beta1.SchemeGroupVersion.String(), Kind: "KubeletConfiguration"},
		// The API server reaches the kubelet on the node's address; its
		// health endpoint stays on the node's own loopback. No read-only
		// port (the default, 0).
		Address:            s.NodeIP,
		Port:               kubeletPort,
		HealthzBindAddress: "127.0.0.1",
		HealthzPort:        ptr.To[int32](kubeletHealthzPort),
		TLSCertFile:        s.TLSCertFile,
		TLSPrivateKeyFile:  s.TLSKeyFile,
		Authentication: kubeletv1beta1.KubeletAuthentication{
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: s.ClientCAFile},
		},
		Authorization:            kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		ContainerRuntimeEndpoint: "unix://" + s.RuntimeSocket,
		// This machine runs cgroup v1, which kubelet 1.35+ refuses unless
		// told otherwise; containerd 1.6 does not report its cgroup driver,
		// so the kubelet uses this one, runc's cgroupfs.
		FailCgroupV1: ptr.To(false),
		CgroupDriver: "cgroupfs",
		// Pods go below the cluster's own cgroup subtree, which teardown
		// removes (cgroups_linux.go).
		CgroupRoot: s.CgroupRoot,
		// The machine may have swap; the pods need no guarantee about it.
		FailSwapOn: ptr.To(false),
		// Without CAP_SYS_RESOURCE the kubelet cannot lower its own
		// oom_score_adj (it would log an error at every start).
		OOMScoreAdj: ptr.To[int32](0),
		PodLogsDir:  s.PodLogsDir,
		// No cluster DNS runs; an empty resolv.conf keeps the machine's
		// resolvers out of the pods.
		ResolverConfig: ptr.To(""),
		ClusterDomain:  "cluster.local",
		// Other sessions share this machine's disk: evict only when it is
		// really full, and never garbage-collect the imported images (they
		// cannot be pulled again).
		EvictionHard: map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "1%",
			"imagefs.available": "1%",
			"nodefs.inodesFree": "1%",
		},
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		SerializeImagePulls:         ptr.To(false),
	}
	return yaml.Marshal(conf)
}

// kubeProxySettings are the values a kube-proxy configuration varies in.
type kubeProxySettings struct {
	Kubeconfig, Hostname, BindAddress, ClusterCIDR string
}

// kubeProxyConfig renders a KubeProxyConfiguration in iptables mode (with
// the machine's iptables, nf_tables backend). Every conntrack setting is
// left as the kernel has it: nf_conntrack_max and its hash size are global
// to the machine, not per namespace.
func kubeProxyConfig(s kubeProxySettings) ([]byte, error) {
	conf := kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta:         metav1.TypeMeta{APIVersion: kubeproxyv1alpha1.SchemeGroupVersion.String(), Kind: "KubeProxyConfiguration"},
		ClientConnection: componentbaseconfigv1alpha1.ClientConnectionConfiguration{Kubeconfig: s.Kubeconfig},
		HostnameOverride: s.Hostname,
		BindAddress:      s.BindAddress,
		// Both on the host's own loopback (its network namespace).
		HealthzBindAddress: fmt.Sprintf("127.0.0.1:%d", kubeProxyHealthz),
		MetricsBindAddress: fmt.Sprintf("127.0.0.1:%d", kubeProxyMetrics),
		Mode:               "iptables",
		// NodePorts on the host's own address only, not on every local
		// address (its bridge's, its loopback).
		NodePortAddresses: []string{"primary"},
		ClusterCIDR:       s.ClusterCIDR,
		DetectLocalMode:   "ClusterCIDR",
		// Without CAP_SYS_RESOURCE it cannot lower its oom_score_adj.
		OOMScoreAdj: ptr.To[int32](0),
		Conntrack: kubeproxyv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore:            ptr.To[int32](0),
			Min:                   ptr.To[int32](0),
			TCPEstablishedTimeout: &metav1.Duration{},
			TCPCloseWaitTimeout:   &metav1.Duration{},
		},
		IPTables: kubeproxyv1alpha1.KubeProxyIPTablesConfiguration{
			SyncPeriod:    metav1.Duration{Duration: 30 * time.Second},
			MinSyncPeriod: metav1.Duration{Duration: time.Second},
		},
	}
	return yaml.Marshal(conf)
}

// egressSelectorConfig renders the API server's EgressSelectorConfiguration:
// its "cluster" traffic (kubelets for exec, logs and port-forward; Services
// of webhooks and aggregated APIs; the proxy subresources) goes through the
// HTTP CONNECT proxy on socket, everything else directly. Webhooks named by
// URL are control-plane traffic, so a manager on the machine's loopback
// keeps serving them.
func egressSelectorConfig(socket string) ([]byte, error) {
	direct := map[string]any{"proxyProtocol": "Direct"}
	conf := map[string]any{
		"apiVersion": "apiserver.k8s.io/v1beta1",
		"kind":       "EgressSelectorConfiguration",
		"egressSelections": []any{
			map[string]any{"name": "cluster", "connection": map[string]any{
				"proxyProtocol": "HTTPConnect",
				"transport":     map[string]any{"uds": map[string]any{"udsName": socket}},
			}},
			map[string]any{"name": "controlplane", "connection": direct},
			map[string]any{"name": "etcd", "connection": direct},
		},
	}
	return yaml.Marshal(conf)
}
