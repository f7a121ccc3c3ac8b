package integration_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/testutils"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

// TestSpecVersions is the plugin's own suite, for every spec version it
// supports, the way containernetworking's plugins test themselves (pkg/skel
// arguments, plugins/pkg/testutils): ADD returns the pod's float IP,
// gateway and default route in the requested version; CHECK accepts that
// result; DEL succeeds twice; STATUS (1.1.0) answers.
func TestSpecVersions(t *testing.T) {
	ns := newNamespace(t, "cni-spec")
	kc := kubeconfig(t)
	if got := cniipam.SupportedVersions.SupportedVersions(); !slices.Equal(got, []string{"0.4.0", "1.0.0", "1.1.0"}) {
		t.Fatalf("supported versions = %v, want 0.4.0 through the library's newest, 1.1.0", got)
	}
	p := &cniipam.Plugin{Kubeconfig: kc}
	for _, ver := range cniipam.SupportedVersions.SupportedVersions() {
		t.Run(ver, func(t *testing.T) {
			pod := newPod(t, ns, "web-"+strings.ReplaceAll(ver, ".", "-"), true, nil)
			ips := allocate(t, pod)
			args := &skel.CmdArgs{ContainerID: "c-" + ver, Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(pod), StdinData: netConf(ver, "")}
			r, raw, err := testutils.CmdAddWithArgs(args, func() error { return p.Add(args) })
			if err != nil {
				t.Fatalf("ADD: %v", err)
			}
			if r.Version() != ver {
				t.Fatalf("ADD answered in version %s, not %s: %s", r.Version(), ver, raw)
			}
			res, err := types100.NewResultFromResult(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.IPs) != 1 || res.IPs[0].Address.String() != ips[0]+"/24" || res.IPs[0].Gateway.String() != "198.51.100.1" {
				t.Fatalf("ADD IPs = %v, want %s/24 via 198.51.100.1", res.IPs, ips[0])
			}
			if len(res.Routes) != 1 || res.Routes[0].Dst.String() != "0.0.0.0/0" || res.Routes[0].GW.String() != "198.51.100.1" {
				t.Fatalf("ADD routes = %v, want the default route via the pool's gateway", res.Routes)
			}
			expectEvent(t, pod, cniipam.ReasonAssigned)

			checkConf := fmt.Appendf(nil, `{"cniVersion":%q,"name":"float","type":"bridge","ipam":{"type":"edgeplane-cni-ipam"},"prevResult":%s}`, ver, raw)
			check := *args
			check.StdinData = checkConf
			if err := testutils.CmdCheckWithArgs(&check, func() error { return p.Check(&check) }); err != nil {
				t.Fatalf("CHECK: %v", err)
			}
			for i := range 2 {
				if err := testutils.CmdDelWithArgs(args, func() error { return p.Del(args) }); err != nil {
					t.Fatalf("DEL #%d: %v", i+1, err)
				}
			}
			// DEL released nothing: the controller owns the IP.
			var fip networkingv1alpha1.FloatIP
			must(t, env.Client.Get(context.Background(), client.ObjectKey{Name: strings.ReplaceAll(ips[0], ".", "-")}, &fip))
			if fip.Status.PodUID != string(pod.UID) {
				t.Fatalf("after DEL the FloatIP's holder is %q, want the pod's UID", fip.Status.PodUID)
			}
			if testutils.SpecVersionHasSTATUS(ver) {
				if err := testutils.CmdStatus(func() error { return p.Status(args) }); err != nil {
					t.Fatalf("STATUS: %v", err)
				}
			}
		})
	}
}

// TestCheckRefusesAnotherAddress: CHECK fails when the previous result
// gave the interface an address the pod does not hold.
func TestCheckRefusesAnotherAddress(t *testing.T) {
	ns := newNamespace(t, "cni-check")
	kc := kubeconfig(t)
	pod := newPod(t, ns, "web", true, nil)
	allocate(t, pod)
	prev := `{"cniVersion":"1.0.0","ips":[{"address":"198.51.100.99/24","gateway":"198.51.100.1"}]}`
	args := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(pod),
		StdinData: fmt.Appendf(nil, `{"cniVersion":"1.0.0","name":"float","ipam":{},"prevResult":%s}`, prev)}
	err := testutils.CmdCheckWithArgs(args, func() error { return (&cniipam.Plugin{Kubeconfig: kc}).Check(args) })
	expectCode(t, err, cniipam.CodeAddressMismatch, "previous result does not")
	expectEvent(t, pod, cniipam.ReasonAddressMismatch)
}

// TestBadInput: every bad input is a CNI error with a stable code and a
// message naming the pod and the reason, plus an Event on the pod whenever
// CNI_ARGS name it and it can be read: also for a malformed network config
// (the plugin's own kubeconfig reaches the pod).
func TestBadInput(t *testing.T) {
	ns := newNamespace(t, "cni-bad")
	kc := kubeconfig(t)
	p := &cniipam.Plugin{Kubeconfig: kc, PollInterval: 100e6}
	add := func(pod string, args, conf []byte, ifname string) error {
		a := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: ifname, Args: string(args), StdinData: conf}
		_, _, err := testutils.CmdAddWithArgs(a, func() error { return p.Add(a) })
		return err
	}
	float := newPod(t, ns, "float", true, map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=" + poolPublic})
	allocate(t, float)
	plain := newPod(t, ns, "plain", false, nil)
	pending := newPod(t, ns, "pending", true, nil)
	badConf1 := newPod(t, ns, "badconf", true, nil)
	badConf2 := newPod(t, ns, "badconf-check", true, nil)
	recreated := newPod(t, ns, "recreated", true, nil)
	conf := netConf("1.0.0", `,"waitTimeout":"1s"`)

	t.Run("malformed config", func(t *testing.T) {
		expectCode(t, add("float", []byte(cniArgs(float)), []byte(`{"cniVersion":"1.0.0","name":"float","ipam":{"kubeconfig":"relative"}}`), "eth0"),
			types.ErrInvalidNetworkConfig, `InvalidNetworkConfig: ipam.kubeconfig "relative" is refused`)
	})
	// A refused config is still told to the pod, through the plugin's own
	// kubeconfig.
	badConf := []byte(`{"cniVersion":"1.0.0","name":"float","ipam":{"waitTimeout":"soon"}}`)
	t.Run("malformed config, readable kubeconfig", func(t *testing.T) {
		expectCode(t, add("badconf", []byte(cniArgs(badConf1)), badConf, "eth0"), types.ErrInvalidNetworkConfig, "InvalidNetworkConfig: ipam.waitTimeout")
		expectEvent(t, badConf1, cniipam.ReasonInvalidConfig)
	})
	t.Run("malformed config, readable kubeconfig, CHECK", func(t *testing.T) {
		typo := []byte(`{"cniVersion":"1.0.0","name":"float","ipam":{"waitTimout":"1s"}}`)
		a := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(badConf2), StdinData: typo}
		expectCode(t, testutils.CmdCheckWithArgs(a, func() error { return p.Check(a) }), types.ErrInvalidNetworkConfig, `unknown field "waitTimout"`)
		expectEvent(t, badConf2, cniipam.ReasonInvalidConfig)
	})
	t.Run("malformed config for a deleted pod of the same name", func(t *testing.T) {
		stale := strings.Replace(cniArgs(recreated), string(recreated.UID), "0000-old", 1)
		expectCode(t, add("recreated", []byte(stale), badConf, "eth0"), types.ErrInvalidNetworkConfig, "ipam.waitTimeout")
		// The Event is written before ADD returns: none means none.
		if events := podEvents(t, recreated); hasEvent(events, cniipam.ReasonInvalidConfig) {
			t.Errorf("the pod of the same name with another UID got %s: %v", cniipam.ReasonInvalidConfig, events)
		}
	})
	t.Run("plugin's kubeconfig missing", func(t *testing.T) {
		a := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(float), StdinData: conf}
		uninstalled := &cniipam.Plugin{Kubeconfig: "/nonexistent/kubeconfig"}
		_, _, err := testutils.CmdAddWithArgs(a, func() error { return uninstalled.Add(a) })
		expectCode(t, err, types.ErrPluginNotAvailable, "PluginNotAvailable: the plugin's kubeconfig (written by edgeplane-cni-ipam install): open /nonexistent/kubeconfig")
	})
	t.Run("malformed CNI_ARGS", func(t *testing.T) {
		expectCode(t, add("float", []byte("K8S_POD_NAMESPACE="+ns+";K8S_POD_NAME=float"), conf, "eth0"),
			types.ErrInvalidEnvironmentVariables, "InvalidArgs: CNI_ARGS: K8S_POD_UID")
	})
	t.Run("unknown pod", func(t *testing.T) {
		expectCode(t, add("ghost", []byte("K8S_POD_NAMESPACE="+ns+";K8S_POD_NAME=ghost;K8S_POD_UID=u"), conf, "eth0"),
			cniipam.CodePodNotFound, "pod cni-bad/ghost does not exist")
	})
	t.Run("UID of a deleted pod of the same name", func(t *testing.T) {
		stale := strings.Replace(cniArgs(float), string(float.UID), "0000-old", 1)
		expectCode(t, add("float", []byte(stale), conf, "eth0"), cniipam.CodePodUIDMismatch, "runtime asks for UID 0000-old")
		expectEvent(t, float, cniipam.ReasonPodUIDMismatch)
	})
	t.Run("pod without a float IP", func(t *testing.T) {
		expectCode(t, add("plain", []byte(cniArgs(plain)), conf, "eth0"), cniipam.CodeNoFloatIP, "pod cni-bad/plain requests no tke.cloud.tencent.com/eni-ip")
		expectEvent(t, plain, cniipam.ReasonNoFloatIP)
	})
	t.Run("no float IP for the interface", func(t *testing.T) {
		expectCode(t, add("float", []byte(cniArgs(float)), conf, "net1"), cniipam.CodeNoFloatIPForInterface, "pod cni-bad/float has float IPs for interface(s) eth0, none for net1")
	})
	t.Run("IP outside the network's pools", func(t *testing.T) {
		expectCode(t, add("float", []byte(cniArgs(float)), netConf("1.0.0", `,"pools":["`+poolStorage+`"]`), "eth0"),
			cniipam.CodeIPOutsidePool, "network float serves only pool(s) "+poolStorage)
		expectEvent(t, float, cniipam.ReasonIPOutsidePool)
	})
	t.Run("allocation never written", func(t *testing.T) {
		expectCode(t, add("pending", []byte(cniArgs(pending)), conf, "eth0"), types.ErrTryAgainLater, "pod cni-bad/pending has no float IP allocated yet")
		expectEvent(t, pending, cniipam.ReasonAllocationPending)
	})
	t.Run("DEL never fails", func(t *testing.T) {
		a := &skel.CmdArgs{ContainerID: "c", IfName: "eth0", Args: "garbage", StdinData: []byte(`{"cniVersion":"1.0.0","name":"float","ipam":{}}`)}
		if err := testutils.CmdDelWithArgs(a, func() error { return p.Del(a) }); err != nil {
			t.Fatalf("DEL with a bad config and args: %v", err)
		}
	})
	t.Run("STATUS without an API server", func(t *testing.T) {
		a := &skel.CmdArgs{StdinData: netConf("1.1.0", "")}
		uninstalled := &cniipam.Plugin{Kubeconfig: "/nonexistent/kubeconfig"}
		expectCode(t, testutils.CmdStatus(func() error { return uninstalled.Status(a) }), types.ErrPluginNotAvailable, "PluginNotAvailable")
	})
}

// TestAddWaitsForTheAllocation: ADD for a pod whose allocation is not
// written yet keeps looking and, once the extender writes it within
// waitTimeout, succeeds with that IP; its FloatIPAssigned Event says it
// waited. The allocation is written only after the API server has answered
// the plugin's FloatIP list for the pod (a proxy sees its requests), so the
// first look always finds nothing: an ADD that did not look again would
// fail with FloatIPNotAllocated.
func TestAddWaitsForTheAllocation(t *testing.T) {
	ns := newNamespace(t, "cni-wait")
	pod := newPod(t, ns, "late", true, nil)
	looked := make(chan struct{})
	var once sync.Once
	kc := observedKubeconfig(t, func(r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/floatips") &&
			strings.Contains(r.URL.Query().Get("fieldSelector"), string(pod.UID)) {
			once.Do(func() { close(looked) })
		}
	})
	p := &cniipam.Plugin{Kubeconfig: kc, PollInterval: 100 * time.Millisecond}
	args := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(pod),
		StdinData: netConf("1.0.0", `,"waitTimeout":"1m"`)}
	type added struct {
		res types.Result
		err error
	}
	done := make(chan added, 1)
	go func() {
		r, _, err := testutils.CmdAddWithArgs(args, func() error { return p.Add(args) })
		done <- added{r, err}
	}()
	select {
	case <-looked:
	case a := <-done:
		t.Fatalf("ADD returned before the allocation was written: %v, %v", a.res, a.err)
	}
	ips := allocate(t, pod)
	a := <-done // ADD itself gives up after waitTimeout
	if a.err != nil {
		t.Fatalf("ADD with the allocation written while it waited: %v", a.err)
	}
	res, err := types100.NewResultFromResult(a.res)
	must(t, err)
	if len(res.IPs) != 1 || res.IPs[0].Address.String() != ips[0]+"/24" || res.IPs[0].Gateway.String() != "198.51.100.1" {
		t.Fatalf("ADD IPs = %v, want %s/24 via 198.51.100.1", res.IPs, ips[0])
	}
	events := podEvents(t, pod)
	if !slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, string(cniipam.ReasonAssigned)+": ") && strings.Contains(e, ips[0]) && strings.Contains(e, "(waited ")
	}) {
		t.Errorf("no %s Event saying the plugin waited for %s: %v", cniipam.ReasonAssigned, ips[0], events)
	}
}

// TestBinaryVersionsAndStatus drives the built binary through pkg/invoke,
// so skel's own version handling is part of the test: VERSION lists the
// supported versions, STATUS answers for 1.1.0 and is refused for 1.0.0,
// and a refusal reaches the runtime as the plugin's code. The binary reads
// the kubeconfig its build names (linked here to the test's) and no other:
// a network config naming another is refused, and the shipped build reads
// only cniipam.KubeconfigPath.
func TestBinaryVersionsAndStatus(t *testing.T) {
	ns := newNamespace(t, "cni-binary")
	kc := kubeconfig(t)
	bin := testbin.BuildWithVars(t, t.TempDir(), map[string]string{"main.kubeconfigPath": kc}, "edgeplane-cni-ipam")[0]
	ctx := context.Background()
	info, err := invoke.GetVersionInfo(ctx, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.SupportedVersions(); !slices.Equal(got, []string{"0.4.0", "1.0.0", "1.1.0"}) {
		t.Fatalf("VERSION = %v", got)
	}
	status := func(ver string) error {
		return invoke.ExecPluginWithoutResult(ctx, bin, netConf(ver, ""), &invoke.Args{Command: "STATUS", Path: "/nonexistent"}, nil)
	}
	if err := status("1.1.0"); err != nil {
		t.Fatalf("STATUS 1.1.0: %v", err)
	}
	expectCode(t, status("1.0.0"), types.ErrIncompatibleCNIVersion, "does not allow STATUS")

	// The plugin never enters the namespace: skip skel's check of it.
	t.Setenv("CNI_NETNS_OVERRIDE", "1")
	pod := newPod(t, ns, "web", true, nil)
	ips := allocate(t, pod)
	addArgs := &invoke.Args{Command: "ADD", ContainerID: "c", NetNS: "/var/run/netns/unused", IfName: "eth0", PluginArgsStr: cniArgs(pod), Path: "/nonexistent"}
	for _, ver := range cniipam.SupportedVersions.SupportedVersions() {
		r, err := invoke.ExecPluginWithResult(ctx, bin, netConf(ver, ""), addArgs, nil)
		if err != nil {
			t.Fatalf("ADD %s: %v", ver, err)
		}
		res, err := types100.NewResultFromResult(r)
		if err != nil || len(res.IPs) != 1 || res.IPs[0].Address.IP.String() != ips[0] {
			t.Fatalf("ADD %s = %v, %v; want %s", ver, r, err, ips[0])
		}
	}
	_, err = invoke.ExecPluginWithResult(ctx, bin, netConf("1.0.0", ""), &invoke.Args{Command: "ADD", ContainerID: "c", NetNS: "/var/run/netns/unused",
		IfName: "eth0", PluginArgsStr: "K8S_POD_NAMESPACE=" + ns + ";K8S_POD_NAME=nobody;K8S_POD_UID=u", Path: "/nonexistent"}, nil)
	expectCode(t, err, cniipam.CodePodNotFound, "PodNotFound: pod cni-binary/nobody does not exist")

	_, err = invoke.ExecPluginWithResult(ctx, bin, netConf("1.0.0", `,"kubeconfig":"/etc/kubernetes/admin.conf"`), addArgs, nil)
	expectCode(t, err, types.ErrInvalidNetworkConfig, `ipam.kubeconfig "/etc/kubernetes/admin.conf" is refused: the plugin reads only its installer's kubeconfig, `+kc)
	shipped := testbin.Build(t, t.TempDir(), "edgeplane-cni-ipam")[0]
	_, err = invoke.ExecPluginWithResult(ctx, shipped, netConf("1.0.0", fmt.Sprintf(`,"kubeconfig":%q`, kc)), addArgs, nil)
	expectCode(t, err, types.ErrInvalidNetworkConfig, "the plugin reads only its installer's kubeconfig, "+cniipam.KubeconfigPath+";")
}

// expectEvent checks that the plugin wrote an Event with reason on pod.
func expectEvent(t *testing.T, pod *corev1.Pod, reason cniipam.Reason) {
	t.Helper()
	if events := podEvents(t, pod); !hasEvent(events, reason) {
		t.Errorf("no %s Event on pod %s/%s: %v", reason, pod.Namespace, pod.Name, events)
	}
}

// expectCode checks a CNI error's code and message.
func expectCode(t *testing.T, err error, code uint, msg string) {
	t.Helper()
	var e *types.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a CNI error with code %d", err, err, code)
	}
	if e.Code != code || !strings.Contains(e.Msg, msg) {
		t.Fatalf("CNI error %d %q, want code %d and a message containing %q", e.Code, e.Msg, code, msg)
	}
}
