package rbac_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/testutils"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/cniipam/install"
)

// The chart is rendered with the CNI plugin as release cniRelease into
// cniNS: the plugin runs as system:serviceaccount:cni-system:cni-cni-ipam.
// The pods it serves live in cniAppNS.
const (
	cniRelease = "cni"
	cniNS      = "cni-system"
	cniAppNS   = "cni-apps"
	cniPool    = "cni-rbac-pool"
)

// grant is one verb on one resource of a role.
type grant struct{ group, resource, verb string }

func (g grant) String() string {
	if g.group == "" {
		return g.resource + "/" + g.verb
	}
	return g.resource + "." + g.group + "/" + g.verb
}

func grantsOf(rules []rbacv1.PolicyRule) []grant {
	var out []grant
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, grant{g, res, v})
				}
			}
		}
	}
	return out
}

// without is rules less one grant.
func without(rules []rbacv1.PolicyRule, drop grant) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range grantsOf(rules) {
		if g != drop {
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{g.group}, Resources: []string{g.resource}, Verbs: []string{g.verb}})
		}
	}
	return out
}

// TestCNIPluginUnderChartRBAC runs edgeplane-cni-ipam as the ServiceAccount
// the chart gives it, holding exactly the chart's ClusterRole, with the
// kubeconfig its installer renders (a token from the TokenRequest API):
// the role passes the same review as every shipped role, docs/operations.md
// names exactly its grants, ADD (a pod bound by UID and a migrated galaxy
// pod), CHECK and STATUS succeed under it, and each grant is needed: with
// any one removed, the same commands fail.
func TestCNIPluginUnderChartRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := env.Client
	var role *rbacv1.ClusterRole
	var sa *corev1.ServiceAccount
	var shipped []*unstructured.Unstructured
	for _, u := range helmTemplate(t, cniRelease, cniNS, "floatIP.cni.enabled=true") {
		if !strings.HasSuffix(u.GetName(), "-cni-ipam") {
			continue
		}
		switch u.GetKind() {
		case "ServiceAccount":
			sa = convert[corev1.ServiceAccount](t, u)
		case "ClusterRole":
			role = convert[rbacv1.ClusterRole](t, u)
		case "ClusterRoleBinding":
		default:
			continue
		}
		shipped = append(shipped, u)
	}
	if role == nil || sa == nil || len(shipped) != 3 {
		t.Fatalf("the chart renders %d of the plugin's ServiceAccount, ClusterRole and ClusterRoleBinding", len(shipped))
	}
	// The plugin is not the manager: none of its exemptions apply.
	if n := review(t, "chart floatIP.cni", shipped, rbacv1.Subject{}); n != 1 {
		t.Fatalf("reviewed %d roles, want the plugin's", n)
	}
	checkDocumentedCNIGrants(t, grantsOf(role.Rules))

	for _, ns := range []string{cniNS, cniAppNS} {
		must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	for _, u := range shipped {
		must(t, c.Create(ctx, u))
	}
	w := newCNIWorld(t, ctx)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	must(t, c.SubResource("token").Create(ctx, sa, tr))
	kc, err := install.Kubeconfig(env.Config.Host, env.Config.CAData, []byte(tr.Status.Token))
	must(t, err)
	path := filepath.Join(t.TempDir(), "edgeplane-cni-ipam.kubeconfig")
	must(t, os.WriteFile(path, kc, 0o600))
	p := &cniipam.Plugin{Kubeconfig: path, PollInterval: 100 * time.Millisecond}
	user := "system:serviceaccount:" + cniNS + ":" + sa.Name

	if err := w.run(ctx, p); err != nil {
		t.Fatalf("the plugin fails under the chart's role: %v", err)
	}
	for _, g := range grantsOf(role.Rules) {
		t.Run("without "+g.String(), func(t *testing.T) {
			setRules(t, ctx, role.Name, without(role.Rules, g))
			waitAllowed(t, ctx, user, g, false)
			defer func() {
				setRules(t, ctx, role.Name, role.Rules)
				waitAllowed(t, ctx, user, g, true)
			}()
			if err := w.run(ctx, p); err == nil {
				t.Errorf("the plugin did everything without %s: the chart grants what it does not need", g)
			} else {
				t.Logf("without %s: %v", g, err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// cniWorld is what the plugin serves: a pool, a pod the extender bound
// (a FloatIP naming its UID) and a pod galaxy-ipam bound before migration
// (its args annotation, a FloatIP with its key and no UID).
type cniWorld struct {
	bound, migrated     *corev1.Pod
	boundIP, migratedIP string
}

func newCNIWorld(t *testing.T, ctx context.Context) *cniWorld {
	t.Helper()
	c := env.Client
	must(t, c.Create(ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: cniPool},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"198.18.0.10~198.18.0.20"}, Subnet: "198.18.0.0/24", Gateway: "198.18.0.1",
			NodeSubnets: []string{"192.0.2.0/24"}}}))
	w := &cniWorld{boundIP: "198.18.0.10", migratedIP: "198.18.0.11"}
	pod := func(name string, annotations map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: cniAppNS, Name: name, Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		must(t, c.Create(ctx, p))
		return p
	}
	w.bound = pod("bound", nil)
	w.migrated = pod("migrated", map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"` + w.migratedIP + `/24","vlan":0,"gateway":"198.18.0.1"}]}}`})
	fip := func(ip, key string, status networkingv1alpha1.FloatIPStatus) {
		f := &networkingv1alpha1.FloatIP{ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(ip, ".", "-"), Labels: map[string]string{networkingv1alpha1.LabelFloatIPPool: cniPool}},
			Spec: networkingv1alpha1.FloatIPSpec{IP: ip, Pool: cniPool, Key: key}, Status: status}
		must(t, c.Create(ctx, f))
	}
	fip(w.boundIP, "NULL_"+cniAppNS+"_NULL_bound", networkingv1alpha1.FloatIPStatus{Phase: networkingv1alpha1.FloatIPAllocated,
		PodNamespace: cniAppNS, PodName: "bound", PodUID: string(w.bound.UID)})
	fip(w.migratedIP, "NULL_"+cniAppNS+"_NULL_migrated", networkingv1alpha1.FloatIPStatus{Phase: networkingv1alpha1.FloatIPReserved})
	return w
}

// run does what a runtime asks of the plugin for the world's pods: ADD for
// each (each must return the pod's IP and leave a FloatIPAssigned Event),
// CHECK with the bound pod's result, and STATUS. The first failure is the
// error.
func (w *cniWorld) run(ctx context.Context, p *cniipam.Plugin) error {
	conf := func(prev string) []byte {
		return fmt.Appendf(nil, `{"cniVersion":"1.1.0","name":"float","type":"bridge","ipam":{"type":"edgeplane-cni-ipam","waitTimeout":"0s"}%s}`, prev)
	}
	args := func(pod *corev1.Pod, stdin []byte) *skel.CmdArgs {
		return &skel.CmdArgs{ContainerID: "c", Netns: "/var/run/netns/unused", IfName: "eth0", StdinData: stdin,
			Args: fmt.Sprintf("K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;K8S_POD_UID=%s", pod.Namespace, pod.Name, pod.UID)}
	}
	var boundResult []byte
	for _, pc := range []struct {
		pod *corev1.Pod
		ip  string
	}{{w.bound, w.boundIP}, {w.migrated, w.migratedIP}} {
		before, err := assignedEvents(ctx, pc.pod)
		if err != nil {
			return err
		}
		a := args(pc.pod, conf(""))
		r, raw, err := testutils.CmdAddWithArgs(a, func() error { return p.Add(a) })
		if err != nil {
			return fmt.Errorf("ADD %s: %w", pc.pod.Name, err)
		}
		res, err := types100.NewResultFromResult(r)
		if err != nil {
			return fmt.Errorf("ADD %s: reading the result: %w", pc.pod.Name, err)
		}
		if len(res.IPs) != 1 || res.IPs[0].Address.IP.String() != pc.ip {
			return fmt.Errorf("ADD %s = %v, want %s", pc.pod.Name, r, pc.ip)
		}
		if pc.pod == w.bound {
			boundResult = raw
		}
		after, err := assignedEvents(ctx, pc.pod)
		if err != nil {
			return err
		}
		if after <= before {
			return fmt.Errorf("ADD %s wrote no %s Event", pc.pod.Name, cniipam.ReasonAssigned)
		}
	}
	check := args(w.bound, conf(`,"prevResult":`+string(boundResult)))
	if err := testutils.CmdCheckWithArgs(check, func() error { return p.Check(check) }); err != nil {
		return fmt.Errorf("CHECK %s: %w", w.bound.Name, err)
	}
	status := args(w.bound, conf(""))
	if err := testutils.CmdStatus(func() error { return p.Status(status) }); err != nil {
		return fmt.Errorf("STATUS: %w", err)
	}
	return nil
}

// assignedEvents counts the plugin's FloatIPAssigned Events on pod.
func assignedEvents(ctx context.Context, pod *corev1.Pod) (int, error) {
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(pod.Namespace)); err != nil {
		return 0, fmt.Errorf("listing Events: %w", err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.UID == pod.UID && e.Reason == string(cniipam.ReasonAssigned) && e.ReportingController == cniipam.ReportingController {
			n++
		}
	}
	return n, nil
}

func setRules(t *testing.T, ctx context.Context, name string, rules []rbacv1.PolicyRule) {
	t.Helper()
	var r rbacv1.ClusterRole
	must(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, &r))
	r.Rules = rules
	must(t, env.Client.Update(ctx, &r))
}

// waitAllowed waits until the API server's authorizer, which follows role
// changes through its informers, says whether user may use g.
func waitAllowed(t *testing.T, ctx context.Context, user string, g grant, want bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + cniNS, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: cniAppNS, Group: g.group, Resource: g.resource, Verb: g.verb}}}
		if err := env.Client.Create(ctx, sar); err != nil {
			return false, err
		}
		return sar.Status.Allowed == want, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s on %s to be allowed=%v: %v", user, g, want, err)
	}
}

// checkDocumentedCNIGrants: the table of docs/operations.md's "What the
// CNI IPAM plugin may do" lists exactly the role's grants, one row per
// resource (`resource` | `verb`, `verb` | why).
func checkDocumentedCNIGrants(t *testing.T, grants []grant) {
	t.Helper()
	section := operationsSection(t, "### What the CNI IPAM plugin may do")
	code := regexp.MustCompile("`([^`]+)`")
	var documented []string
	for _, l := range strings.Split(section, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4 || !strings.HasPrefix(l, "| `") {
			continue
		}
		res := code.FindStringSubmatch(cells[1])
		for _, v := range code.FindAllStringSubmatch(cells[2], -1) {
			documented = append(documented, res[1]+"/"+v[1])
		}
	}
	var granted []string
	for _, g := range grants {
		granted = append(granted, g.resource+"/"+g.verb)
	}
	slices.Sort(documented)
	slices.Sort(granted)
	if !slices.Equal(documented, granted) {
		t.Errorf("docs/operations.md documents the plugin's grants %q; the chart's role grants %q", documented, granted)
	}
	if len(granted) == 0 {
		t.Error("the plugin's role grants nothing")
	}
}
