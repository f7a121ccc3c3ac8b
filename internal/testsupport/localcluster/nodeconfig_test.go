package localcluster

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func TestContainerdConfig(t *testing.T) {
	p := containerdPaths{
		Root: "/d/root", State: "/d/state", Socket: "/d/containerd.sock", Opt: "/d/opt",
		CNIBinDir: "/bin/cni", CNIConfDir: "/d/net.d", FloatIPConfDir: "/d/floatip.d", SandboxImage: "localcluster.local/nodetest:v1",
		StreamAddress: "127.0.0.1",
	}
	conf, err := containerdConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`root = "/d/root"`,
		`state = "/d/state"`,
		`address = "/d/containerd.sock"`,
		`path = "/d/opt"`,
		`sandbox_image = "localcluster.local/nodetest:v1"`,
		// Each of these is needed on this machine (see the comments).
		"restrict_oom_score_adj = true",
		"netns_mounts_under_state_dir = true",
		"SystemdCgroup = false",
		`stream_server_address = "127.0.0.1"`,
		`bin_dir = "/bin/cni"`,
		`conf_dir = "/d/net.d"`,
		// FloatIPRuntimeClass's handler: runc on the float-IP network.
		`[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.floatip]`,
		`cni_conf_dir = "/d/floatip.d"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("the configuration lacks %q:\n%s", want, conf)
		}
	}
	// A value TOML would read differently from what Go quotes is refused.
	for _, bad := range []string{"", "/d/ro\not", "/d/\u00e9"} {
		q := p
		q.Root = bad
		if _, err := containerdConfig(q); err == nil {
			t.Errorf("containerdConfig accepted root %q", bad)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	raw, err := cniConfig(netip.MustParsePrefix("10.244.2.0/24"), "/d/ipam")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct {
			Type        string          `json:"type"`
			IsGateway   bool            `json:"isGateway"`
			HairpinMode bool            `json:"hairpinMode"`
			IPAM        json.RawMessage `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[1].Type != "portmap" {
		t.Fatalf("plugins = %+v, want bridge then portmap", conf.Plugins)
	}
	if !conf.Plugins[0].IsGateway || !conf.Plugins[0].HairpinMode {
		t.Errorf("bridge = %+v, want the pods' gateway with hairpin mode", conf.Plugins[0])
	}
	var ipam struct {
		Type    string                `json:"type"`
		Ranges  [][]map[string]string `json:"ranges"`
		DataDir string                `json:"dataDir"`
	}
	if err := json.Unmarshal(conf.Plugins[0].IPAM, &ipam); err != nil {
		t.Fatal(err)
	}
	// The lower half: the upper one is the float IPs'.
	want := [][]map[string]string{{{"subnet": "10.244.2.0/24", "rangeStart": "10.244.2.2", "rangeEnd": "10.244.2.127"}}}
	if ipam.Type != "host-local" || ipam.DataDir != "/d/ipam" || !cmp.Equal(want, ipam.Ranges) {
		t.Errorf("ipam = %+v, want host-local over 10.244.2.2-127 keeping its state in /d/ipam", ipam)
	}
}

func TestFloatIPConfig(t *testing.T) {
	raw, err := floatIPConfig()
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type   string            `json:"type"`
			Bridge string            `json:"bridge"`
			IPAM   map[string]string `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		t.Fatal(err)
	}
	// The pod network's bridge, edgeplane's IPAM with nothing but its
	// type: the plugin reads its own kubeconfig, never one the config names.
	if conf.Name != FloatIPNetwork || len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].Bridge != "cni0" ||
		!cmp.Equal(conf.Plugins[0].IPAM, map[string]string{"type": "edgeplane-cni-ipam"}) {
		t.Errorf("float-IP network = %s", raw)
	}
}

func TestSplitPodRange(t *testing.T) {
	for cidr, want := range map[string][4]string{
		"10.244.2.0/24":  {"10.244.2.2", "10.244.2.127", "10.244.2.128", "10.244.2.254"},
		"10.244.2.77/24": {"10.244.2.2", "10.244.2.127", "10.244.2.128", "10.244.2.254"},
		"10.244.0.0/23":  {"10.244.0.2", "10.244.0.255", "10.244.1.0", "10.244.1.254"},
		"10.244.3.16/28": {"10.244.3.18", "10.244.3.23", "10.244.3.24", "10.244.3.30"},
	} {
		h, f, err := splitPodRange(netip.MustParsePrefix(cidr))
		if err != nil {
			t.Fatalf("%s: %v", cidr, err)
		}
		got := [4]string{h.first.String(), h.last.String(), f.first.String(), f.last.String()}
		if got != want {
			t.Errorf("%s: host-local %s-%s, float IPs %s-%s; want %v", cidr, got[0], got[1], got[2], got[3], want)
		}
	}
	for _, bad := range []string{"10.244.2.0/29", "fd00::/64"} {
		if _, _, err := splitPodRange(netip.MustParsePrefix(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestKubeletConfig(t *testing.T) {
	raw, err := kubeletConfig(kubeletSettings{
		NodeIP: "172.31.0.11", ClientCAFile: "/pki/ca.crt", TLSCertFile: "/pki/k.crt", TLSKeyFile: "/pki/k.key",
		RuntimeSocket: "/d/containerd.sock", CgroupRoot: "/edgeplane-localcluster/1-2-3/real-1", PodLogsDir: "/d/pod-logs",
	})
	if err != nil {
		t.Fatal(err)
	}
	var conf kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(raw, &conf); err != nil {
		t.Fatalf("the kubelet would not read its configuration: %v\n%s", err, raw)
	}
	if conf.Kind != "KubeletConfiguration" || conf.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		t.Errorf("type = %s/%s", conf.APIVersion, conf.Kind)
	}
	// Nothing anonymous; the API server's SubjectAccessReview decides.
	if conf.Authentication.Anonymous.Enabled == nil || *conf.Authentication.Anonymous.Enabled {
		t.Error("anonymous requests are not refused")
	}
	if conf.Authentication.Webhook.Enabled == nil || !*conf.Authentication.Webhook.Enabled || conf.Authorization.Mode != kubeletv1beta1.KubeletAuthorizationModeWebhook {
		t.Errorf("authentication/authorization = %+v / %+v, want the API server's webhooks", conf.Authentication, conf.Authorization)
	}
	if conf.Authentication.X509.ClientCAFile != "/pki/ca.crt" {
		t.Errorf("client CA = %q", conf.Authentication.X509.ClientCAFile)
	}
	if conf.Address != "172.31.0.11" || conf.HealthzBindAddress != "127.0.0.1" || conf.ReadOnlyPort != 0 {
		t.Errorf("listens on %s, health on %s, read-only port %d; want the node address, loopback, none",
			conf.Address, conf.HealthzBindAddress, conf.ReadOnlyPort)
	}
	// What this machine (cgroup v1, no CAP_SYS_RESOURCE) needs.
	if conf.FailCgroupV1 == nil || *conf.FailCgroupV1 || conf.FailSwapOn == nil || *conf.FailSwapOn ||
		conf.CgroupDriver != "cgroupfs" || conf.OOMScoreAdj == nil || *conf.OOMScoreAdj != 0 {
		t.Errorf("failCgroupV1 %v, failSwapOn %v, cgroupDriver %q, oomScoreAdj %v", conf.FailCgroupV1, conf.FailSwapOn, conf.CgroupDriver, conf.OOMScoreAdj)
	}
	if conf.CgroupRoot != "/edgeplane-localcluster/1-2-3/real-1" || conf.PodLogsDir != "/d/pod-logs" ||
		conf.ContainerRuntimeEndpoint != "unix:///d/containerd.sock" {
		t.Errorf("cgroupRoot %q, podLogsDir %q, runtime %q", conf.CgroupRoot, conf.PodLogsDir, conf.ContainerRuntimeEndpoint)
	}
	if conf.ProtectKernelDefaults {
		t.Error("protectKernelDefaults would stop the kubelet on this machine's settings")
	}
}

func TestKubeProxyConfig(t *testing.T) {
	raw, err := kubeProxyConfig(kubeProxySettings{Kubeconfig: "/k/kube-proxy.kubeconfig", Hostname: "real-1", BindAddress: "172.31.0.11", ClusterCIDR: "10.244.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	var conf kubeproxyv1alpha1.KubeProxyConfiguration
	if err := yaml.UnmarshalStrict(raw, &conf); err != nil {
		t.Fatalf("kube-proxy would not read its configuration: %v\n%s", err, raw)
	}
	if conf.Mode != "iptables" || conf.HostnameOverride != "real-1" || conf.ClusterCIDR != "10.244.0.0/16" ||
		conf.ClientConnection.Kubeconfig != "/k/kube-proxy.kubeconfig" {
		t.Errorf("configuration = %+v", conf)
	}
	if !strings.HasPrefix(conf.HealthzBindAddress, "127.0.0.1:") || !strings.HasPrefix(conf.MetricsBindAddress, "127.0.0.1:") {
		t.Errorf("health %s, metrics %s: want loopback", conf.HealthzBindAddress, conf.MetricsBindAddress)
	}
	// Zero leaves the machine-wide conntrack settings alone; unset would
	// mean kube-proxy's defaults, which it writes.
	ct := conf.Conntrack
	if ct.MaxPerCore == nil || *ct.MaxPerCore != 0 || ct.Min == nil || *ct.Min != 0 ||
		ct.TCPEstablishedTimeout == nil || ct.TCPEstablishedTimeout.Duration != 0 ||
		ct.TCPCloseWaitTimeout == nil || ct.TCPCloseWaitTimeout.Duration != 0 {
		t.Errorf("conntrack = %+v, want every setting left as the kernel has it", ct)
	}
}

func TestEgressSelectorConfig(t *testing.T) {
	raw, err := egressSelectorConfig("/d/apiserver/egress.sock")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Kind       string `json:"kind"`
		Selections []struct {
			Name       string `json:"name"`
			Connection struct {
				ProxyProtocol string `json:"proxyProtocol"`
				Transport     *struct {
					UDS struct {
						UDSName string `json:"udsName"`
					} `json:"uds"`
				} `json:"transport"`
			} `json:"connection"`
		} `json:"egressSelections"`
	}
	if err := yaml.Unmarshal(raw, &conf); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range conf.Selections {
		got[s.Name] = s.Connection.ProxyProtocol
		if s.Name == "cluster" && (s.Connection.Transport == nil || s.Connection.Transport.UDS.UDSName != "/d/apiserver/egress.sock") {
			t.Errorf("cluster egress transport = %+v, want the unix socket", s.Connection.Transport)
		}
	}
	want := map[string]string{"cluster": "HTTPConnect", "controlplane": "Direct", "etcd": "Direct"}
	if conf.Kind != "EgressSelectorConfiguration" || !cmp.Equal(want, got) {
		t.Errorf("%s selections = %v, want %v", conf.Kind, got, want)
	}
}
