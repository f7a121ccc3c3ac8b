package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/testutils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cniipam"
)

// recorder is an HTTPS server standing in for a server of an attacker's
// choosing: it records the credentials of each request it gets (client-go
// sends credentials only over TLS).
type recorder struct {
	mu    sync.Mutex
	auths []string
	url   string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auths...)
}

// hostileKubeconfig writes a kubeconfig whose user runs an exec credential
// plugin (which creates marker when run) against server.
func hostileKubeconfig(t *testing.T, server, marker string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["evil"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["evil"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		Args: []string{"-c", fmt.Sprintf(`touch %q; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"node-secret"}}'`, marker)},
	}}
	cfg.Contexts["evil"] = &clientcmdapi.Context{Cluster: "evil", AuthInfo: "evil"}
	cfg.CurrentContext = "evil"
	path := filepath.Join(t.TempDir(), "evil.kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// TestNetworkConfigCannotChooseTheKubeconfig: a network config (a Multus
// NetworkAttachmentDefinition a tenant may write) that names a kubeconfig
// of its own is refused before that file is read: its exec credential
// plugin never runs as root on the node and its server never hears from
// the plugin, for every command that reads the config. The refusal still
// reaches the pod, through the plugin's own kubeconfig.
func TestNetworkConfigCannotChooseTheKubeconfig(t *testing.T) {
	ns := newNamespace(t, "cni-trust-conf")
	pod := newPod(t, ns, "web", true, nil)
	allocate(t, pod)
	p := &cniipam.Plugin{Kubeconfig: kubeconfig(t), PollInterval: 100e6}
	for _, cmd := range []string{"ADD", "CHECK", "STATUS"} {
		t.Run(cmd, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "exec-plugin-ran")
			rec := newRecorder(t)
			evil := hostileKubeconfig(t, rec.url, marker)
			args := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(pod),
				StdinData: netConf("1.1.0", fmt.Sprintf(`,"kubeconfig":%q`, evil))}
			var err error
			switch cmd {
			case "ADD":
				_, _, err = testutils.CmdAddWithArgs(args, func() error { return p.Add(args) })
			case "CHECK":
				err = testutils.CmdCheckWithArgs(args, func() error { return p.Check(args) })
			case "STATUS":
				err = testutils.CmdStatus(func() error { return p.Status(args) })
			}
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Errorf("the network config's exec credential plugin ran (err %v)", err)
			}
			if got := rec.requests(); len(got) > 0 {
				t.Errorf("the network config's server got %d requests, credentials %q", len(got), got)
			}
			expectCode(t, err, types.ErrInvalidNetworkConfig, fmt.Sprintf("InvalidNetworkConfig: ipam.kubeconfig %q is refused", evil))
		})
	}
	expectEvent(t, pod, cniipam.ReasonInvalidConfig)
}

// TestInstalledKubeconfigRefusesExternalCredentials: the plugin's own
// kubeconfig is used only with its credentials embedded, as the installer
// writes them. One that runs an exec credential plugin, names an auth
// provider or refers to a token, certificate or key file is refused by
// name before any request: nothing runs, nothing is sent.
func TestInstalledKubeconfigRefusesExternalCredentials(t *testing.T) {
	ns := newNamespace(t, "cni-trust-kc")
	pod := newPod(t, ns, "web", true, nil)
	allocate(t, pod)
	dir := t.TempDir()
	marker := filepath.Join(dir, "exec-ran")
	tokenFile := filepath.Join(dir, "token")
	must(t, os.WriteFile(tokenFile, []byte("node-secret-from-file"), 0o600))
	caFile := filepath.Join(dir, "ca.crt")
	must(t, os.WriteFile(caFile, env.Config.CAData, 0o600))
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	must(t, os.WriteFile(certFile, env.Config.CertData, 0o600))
	must(t, os.WriteFile(keyFile, env.Config.KeyData, 0o600))
	for name, tc := range map[string]struct {
		user    *clientcmdapi.AuthInfo
		caFile  string
		refused string
	}{
		"exec": {user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh",
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			Args:            []string{"-c", "touch " + marker + `; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'`}}},
			refused: `exec credential plugin "/bin/sh" is refused`},
		"auth provider": {user: &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"id-token": "x"}}},
			refused: `auth-provider "oidc" is refused`},
		"token file":                 {user: &clientcmdapi.AuthInfo{TokenFile: tokenFile}, refused: "tokenFile " + fmt.Sprintf("%q", tokenFile) + " is refused"},
		"client certificate files":   {user: &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}, refused: "client-certificate " + fmt.Sprintf("%q", certFile) + " is refused"},
		"certificate authority file": {user: &clientcmdapi.AuthInfo{Token: "t"}, caFile: caFile, refused: "certificate-authority " + fmt.Sprintf("%q", caFile) + " is refused"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t)
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: rec.url, InsecureSkipTLSVerify: tc.caFile == "", CertificateAuthority: tc.caFile}
			cfg.AuthInfos["u"] = tc.user
			cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
			cfg.CurrentContext = "x"
			path := filepath.Join(t.TempDir(), "kubeconfig")
			must(t, clientcmd.WriteToFile(*cfg, path))
			args := &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", Args: cniArgs(pod), StdinData: netConf("1.0.0", `,"waitTimeout":"0s"`)}
			_, _, err := testutils.CmdAddWithArgs(args, func() error { return (&cniipam.Plugin{Kubeconfig: path}).Add(args) })
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Errorf("the kubeconfig's exec plugin ran")
			}
			if got := rec.requests(); len(got) > 0 {
				t.Errorf("the plugin sent %d requests with credentials %q", len(got), got)
			}
			expectCode(t, err, types.ErrPluginNotAvailable, tc.refused)
		})
	}
}

// TestAnnotationDoesNotGrantIPs: a pod that asked for no float IP writes
// galaxy's args annotation itself, naming IPs that are not its own: a free
// IP, a Deployment's reserved IP, a StatefulSet pod's retained IP, a
// migrated galaxy pod's IP recorded without a UID, and another pod's
// allocated IP. Each ADD is refused with the IP and why; the pods the IPs
// belong to still get them.
func TestAnnotationDoesNotGrantIPs(t *testing.T) {
	ns := newNamespace(t, "cni-trust-ann")
	kc := kubeconfig(t)
	ctx := context.Background()
	p := &cniipam.Plugin{Kubeconfig: kc, PollInterval: 100e6}
	conf := netConf("1.0.0", `,"waitTimeout":"0s"`)
	galaxyArgs := func(ip string) map[string]string {
		return map[string]string{networkingv1alpha1.AnnotationCNIArgs: fmt.Sprintf(`{"common":{"ipinfos":[{"ip":"%s/24","vlan":0,"gateway":"198.51.100.1"}]}}`, ip)}
	}
	// fip stores a FloatIP as the galaxy migration writes one: a key, a
	// phase, no holder UID.
	fip := func(ip, key string, phase networkingv1alpha1.FloatIPPhase) {
		t.Helper()
		f := &networkingv1alpha1.FloatIP{ObjectMeta: metav1.ObjectMeta{Name: fipName(ip), Labels: map[string]string{networkingv1alpha1.LabelFloatIPPool: poolPublic}},
			Spec:   networkingv1alpha1.FloatIPSpec{IP: ip, Pool: poolPublic, Key: key, ReleasePolicy: networkingv1alpha1.ReleasePolicyImmutable},
			Status: networkingv1alpha1.FloatIPStatus{Phase: phase}}
		must(t, env.Client.Create(ctx, f))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), f) })
	}
	add := func(pod string, args string) (types.Result, error) {
		a := &skel.CmdArgs{ContainerID: "c-" + pod, Netns: "/var/run/netns/unused", IfName: "eth0", Args: args, StdinData: conf}
		r, _, err := testutils.CmdAddWithArgs(a, func() error { return p.Add(a) })
		return r, err
	}

	// The rightful holders: a pod the extender allocated to, a migrated
	// galaxy pod whose FloatIP has its key but no UID, the retained IP of a
	// StatefulSet pod that is gone, and a Deployment's reservation.
	owner := newPod(t, ns, "owner", true, nil)
	ownerIP := allocate(t, owner)[0]
	const migratedIP, retainedIP, reservedIP, freeIP = "198.51.100.56", "198.51.100.57", "198.51.100.58", "198.51.100.59"
	migrated := newPod(t, ns, "migrated", true, galaxyArgs(migratedIP))
	fip(migratedIP, "NULL_"+ns+"_NULL_migrated", networkingv1alpha1.FloatIPReserved)
	fip(retainedIP, "sts_"+ns+"_db_db-0", networkingv1alpha1.FloatIPReserved)
	fip(reservedIP, "dp_"+ns+"_web_", networkingv1alpha1.FloatIPReserved)

	for _, tc := range []struct {
		ip, why string
		reason  cniipam.Reason
	}{
		{freeIP, "has no FloatIP", cniipam.ReasonIPNotAllocatedToPod},
		{reservedIP, "is reserved for dp_" + ns + "_web_", cniipam.ReasonIPNotAllocatedToPod},
		{retainedIP, "is recorded for pod " + ns + "/db-0", cniipam.ReasonIPHeldByOtherPod},
		{migratedIP, "is recorded for pod " + ns + "/migrated", cniipam.ReasonIPHeldByOtherPod},
		{ownerIP, "is held by pod " + ns + "/owner", cniipam.ReasonIPHeldByOtherPod},
	} {
		t.Run("thief takes "+tc.ip, func(t *testing.T) {
			thief := newPod(t, ns, "thief-"+fipName(tc.ip), false, galaxyArgs(tc.ip))
			r, err := add(thief.Name, cniArgs(thief))
			if err == nil {
				t.Fatalf("a pod that wrote %s into its own annotation got %v", tc.ip, r)
			}
			expectCode(t, err, tc.reason.Code(), string(tc.reason)+": pod "+ns+"/"+thief.Name+": IP "+tc.ip+" of its "+networkingv1alpha1.AnnotationCNIArgs+" annotation "+tc.why)
			expectEvent(t, thief, tc.reason)
		})
	}
	for _, tc := range []struct {
		name, ip string
		args     string
	}{
		{"extender-allocated pod", ownerIP, cniArgs(owner)},
		{"migrated galaxy pod", migratedIP, cniArgs(migrated)},
	} {
		t.Run(tc.name+" keeps its IP", func(t *testing.T) {
			r, err := add(tc.name, tc.args)
			if err != nil {
				t.Fatalf("ADD: %v", err)
			}
			res, err := types100.NewResultFromResult(r)
			must(t, err)
			if len(res.IPs) != 1 || res.IPs[0].Address.IP.String() != tc.ip {
				t.Fatalf("ADD IPs = %v, want %s", res.IPs, tc.ip)
			}
		})
	}
}

func fipName(ip string) string { return strings.ReplaceAll(ip, ".", "-") }
