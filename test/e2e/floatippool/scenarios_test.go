//go:build e2e

package floatippool_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

// env is a local cluster whose kube-scheduler uses the float-IP extender
// served by a manager running the float-IP controllers.
type env struct {
	t       *testing.T
	ctx     context.Context
	c       client.Client
	cluster *localcluster.Cluster
}

func startEnv(t *testing.T) *env {
	return startEnvWith(t, []localcluster.NodeSpec{{Name: "w1"}, {Name: "w2"}}, 1)
}

// startEnvWith starts the cluster with these nodes and `replicas` managers,
// each serving its own extender; with more than one, the scheduler's
// extender URL round-robins between them, so two allocators with separate
// caches race for the same IPs.
func startEnvWith(t *testing.T, nodes []localcluster.NodeSpec, replicas int) *env {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var extAddrs []string
	for range replicas {
		extAddrs = append(extAddrs, testbin.FreeAddr(t))
	}
	certs := floatippooltest.Write(t, "")
	extAddr := extAddrs[0]
	if replicas > 1 {
		extAddr = roundRobin(t, certs, extAddrs)
	}
	cfgPath := writeSchedulerConfig(t, dir, certs, "https://"+extAddr, true, 0)
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir: dir, Scheme: scheme,
		SchedulerFlags: []string{"--config=" + cfgPath},
		Nodes:          nodes,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	installFloatIPCRDs(t, cluster.RESTConfig())
	for i, addr := range extAddrs {
		restCfg := cluster.RESTConfig()
		restCfg.QPS, restCfg.Burst = 500, 1000 // galaxy-ipam runs with 1000/2000
		mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
			Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			// The manager's own cache, transforms included.
			Cache: manager.CacheOptions(""),
			// Two managers in one process register the same controller names.
			Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
		})
		if err != nil {
			t.Fatal(err)
		}
		opts := floatippool.Options{ExtenderAddress: addr, CertDir: certs.ServerDir, Certs: floatippool.CertsProvided,
			SweepInterval: 5 * time.Second, MigrateGalaxy: i == 0, MigrateInterval: 2 * time.Second}
		if err := opts.Setup()(ctx, mgr, setup.Config{}); err != nil {
			t.Fatal(err)
		}
		mctx, mcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := mgr.Start(mctx); err != nil {
				t.Errorf("manager: %v", err)
			}
		}()
		t.Cleanup(func() { mcancel(); <-done })
	}
	return &env{t: t, ctx: ctx, c: cluster.Client(), cluster: cluster}
}

// roundRobin serves a proxy that sends each request to the next address:
// it takes the scheduler's TLS as an extender would (the scheduler's client
// certificate required) and calls the extenders with that certificate.
func roundRobin(t *testing.T, certs floatippooltest.Certs, addrs []string) string {
	var n atomic.Uint64
	proxies := make([]*httputil.ReverseProxy, len(addrs))
	for i, a := range addrs {
		proxies[i] = httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "https", Host: a})
		proxies[i].Transport = certs.Client(t).Transport
		proxies[i].ErrorLog = log.New(io.Discard, "", 0) // the scheduler cancels requests at shutdown
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_ = floatippool.ExtenderServer(ln, certs.ServerDir, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxies[n.Add(1)%uint64(len(proxies))].ServeHTTP(w, r)
		})).Start(ctx)
	}()
	return ln.Addr().String()
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitFor polls cond until it is true; what describes the state on timeout.
func (e *env) waitFor(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; last state: %s\nscheduler log tail:\n%s", what, err, last, tail(e.cluster.LogPath(localcluster.Scheduler), 30))
	}
}

// namespace creates a namespace and a pool that serves only it.
func (e *env) namespace(name string, ranges []string, mutate func(*networkingv1alpha1.FloatIPPool)) {
	e.t.Helper()
	e.must(e.c.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	p := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges: ranges, Subnet: "172.16.0.0/12", Gateway: "172.16.0.1",
			NodeSubnets:       []string{"0.0.0.0/0", "::/0"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: name}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	e.must(e.c.Create(e.ctx, p))
}

func fipTemplate(labels, annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		}}}},
	}
}

// podIPs returns the float IPs of the running pods with these labels, by pod name.
func (e *env) podIPs(ns string, labels map[string]string) (map[string]string, string) {
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return nil, err.Error()
	}
	out := map[string]string{}
	var states []string
	for _, p := range pods.Items {
		a := p.Annotations[networkingv1alpha1.AnnotationCNIArgs]
		args, _ := ipam.ParseCNIArgs(a)
		var ips []string
		for _, ip := range args.IPs() {
			ips = append(ips, ip.String())
		}
		states = append(states, fmt.Sprintf("%s(%s,%s,%s)", p.Name, p.Status.Phase, strings.Join(ips, "+"), p.Spec.NodeName))
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && len(ips) > 0 {
			out[p.Name] = strings.Join(ips, "+")
		}
	}
	sort.Strings(states)
	return out, strings.Join(states, " ")
}

func (e *env) fips(pool string) map[string]networkingv1alpha1.FloatIP {
	var list networkingv1alpha1.FloatIPList
	_ = e.c.List(e.ctx, &list, client.MatchingFields{"spec.pool": pool})
	out := map[string]networkingv1alpha1.FloatIP{}
	for _, f := range list.Items {
		out[f.Spec.IP] = f
	}
	return out
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func distinct(m map[string]string) bool {
	seen := map[string]bool{}
	for _, v := range m {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func TestScenarios(t *testing.T) {
	e := startEnv(t)

	t.Run("StatefulSet scale down and up keeps IPs", func(t *testing.T) {
		e.t = t
		e.namespace("sts", []string{"172.20.1.10~172.20.1.20"}, nil)
		labels := map[string]string{"app": "db"}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "sts"},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: fipTemplate(labels, map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"})},
		}
		e.must(e.c.Create(e.ctx, sts))
		var first map[string]string
		e.waitFor("3 pods with distinct IPs", func() (bool, string) {
			m, s := e.podIPs("sts", labels)
			first = m
			return len(m) == 3 && distinct(m), s
		})
		e.must(e.c.Get(e.ctx, client.ObjectKeyFromObject(sts), sts))
		sts.Spec.Replicas = ptr.To[int32](1)
		e.must(e.c.Update(e.ctx, sts))
		e.waitFor("scale down to 1, IPs of db-1 and db-2 kept as Reserved", func() (bool, string) {
			m, s := e.podIPs("sts", labels)
			f := e.fips("sts")
			reserved := 0
			for _, x := range f {
				if x.Status.Phase == networkingv1alpha1.FloatIPReserved {
					reserved++
				}
			}
			return len(m) == 1 && reserved == 2 && len(f) == 3, fmt.Sprintf("%s; %d FloatIPs, %d reserved", s, len(f), reserved)
		})
		e.must(e.c.Get(e.ctx, client.ObjectKeyFromObject(sts), sts))
		sts.Spec.Replicas = ptr.To[int32](3)
		e.must(e.c.Update(e.ctx, sts))
		e.waitFor("scale up to 3 with the same IPs", func() (bool, string) {
			m, s := e.podIPs("sts", labels)
			return len(m) == 3 && fmt.Sprint(m) == fmt.Sprint(first), s + " want " + fmt.Sprint(first)
		})
		// A deleted pod comes back with its IP.
		e.must(e.c.Delete(e.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: "sts"}}))
		time.Sleep(2 * time.Second)
		e.waitFor("db-1 recreated with its IP", func() (bool, string) {
			m, s := e.podIPs("sts", labels)
			return m["db-1"] == first["db-1"] && len(m) == 3, s
		})
	})

	t.Run("immutable Deployment keeps its IPs across a rollout", func(t *testing.T) {
		e.t = t
		e.namespace("dep", []string{"172.20.2.10~172.20.2.20"}, nil)
		labels := map[string]string{"app": "api"}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "dep"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
				Template: fipTemplate(labels, map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"})},
		}
		e.must(e.c.Create(e.ctx, dep))
		var before []string
		e.waitFor("2 pods with IPs", func() (bool, string) {
			m, s := e.podIPs("dep", labels)
			before = values(m)
			return len(m) == 2 && distinct(m), s
		})
		e.must(e.c.Get(e.ctx, client.ObjectKeyFromObject(dep), dep))
		dep.Spec.Template.Annotations["rollout"] = "2"
		e.must(e.c.Update(e.ctx, dep))
		e.waitFor("the new ReplicaSet's pods with the old IPs", func() (bool, string) {
			var pods corev1.PodList
			_ = e.c.List(e.ctx, &pods, client.InNamespace("dep"), client.MatchingLabels(labels))
			rolled := 0
			for _, p := range pods.Items {
				if p.Annotations["rollout"] == "2" && p.Status.Phase == corev1.PodRunning {
					rolled++
				}
			}
			m, s := e.podIPs("dep", labels)
			for ip, f := range e.fips("dep") {
				s += fmt.Sprintf(" [%s %s %s]", ip, f.Spec.Key, f.Status.Phase)
			}
			return rolled == 2 && len(m) == 2 && fmt.Sprint(values(m)) == fmt.Sprint(before), s + " want " + fmt.Sprint(before)
		})
		if n := len(e.fips("dep")); n != 2 {
			t.Fatalf("%d FloatIPs after the rollout, want 2", n)
		}
	})

	t.Run("pool size, preAllocate and surplus pods pending with a reason", func(t *testing.T) {
		e.t = t
		e.namespace("group", []string{"172.20.3.10~172.20.3.20"}, nil)
		e.must(e.c.Create(e.ctx, &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: "shared"},
			Spec: networkingv1alpha1.FloatIPPoolSpec{Size: ptr.To[int32](2), PreAllocate: true,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "group"}}},
		}))
		e.waitFor("2 pre-allocated IPs", func() (bool, string) {
			f := e.fips("group")
			return len(f) == 2, fmt.Sprint(len(f))
		})
		pre := map[string]bool{}
		for ip := range e.fips("group") {
			pre[ip] = true
		}
		labels := map[string]string{"app": "web"}
		e.must(e.c.Create(e.ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "group"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: fipTemplate(labels, map[string]string{networkingv1alpha1.AnnotationENIIPPool: "shared"})},
		}))
		e.waitFor("2 pods on the pre-allocated IPs and 1 pending for the pool size", func() (bool, string) {
			m, s := e.podIPs("group", labels)
			for _, ip := range m {
				if !pre[ip] {
					return false, s + " (an IP outside the pre-allocation)"
				}
			}
			var evs corev1.EventList
			_ = e.c.List(e.ctx, &evs, client.InNamespace("group"))
			reason := false
			for _, ev := range evs.Items {
				if ev.Reason == "FailedScheduling" && strings.Contains(ev.Message, "reached pool shared size limit of 2") {
					reason = true
				}
			}
			return len(m) == 2 && reason, s + fmt.Sprintf(" size-limit event=%v", reason)
		})
	})

	t.Run("multi-IP request_ip_range", func(t *testing.T) {
		e.t = t
		e.namespace("multi", []string{"172.20.4.10~172.20.4.20", "172.20.5.10~172.20.5.20"}, nil)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "multi", Labels: map[string]string{"app": "m"},
			Annotations: map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["172.20.4.15~172.20.4.20"],["172.20.5.12"]]}`}},
			Spec: fipTemplate(nil, nil).Spec}
		e.must(e.c.Create(e.ctx, pod))
		e.waitFor("a pod with two IPs", func() (bool, string) {
			m, s := e.podIPs("multi", map[string]string{"app": "m"})
			return m["m"] == "172.20.4.15+172.20.5.12", s
		})
	})

	t.Run("small Deployment deadlock warning", func(t *testing.T) {
		e.t = t
		e.namespace("dl", []string{"172.20.6.10~172.20.6.20"}, nil)
		labels := map[string]string{"app": "small"}
		e.must(e.c.Create(e.ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: "dl"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: fipTemplate(labels, map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"})},
		}))
		e.waitFor("RolloutDeadlock=True on the pool", func() (bool, string) {
			var p networkingv1alpha1.FloatIPPool
			if err := e.c.Get(e.ctx, client.ObjectKey{Name: "dl"}, &p); err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(p.Status.Conditions, networkingv1alpha1.FloatIPTypeRolloutDeadlock)
			return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "dl/small"), fmt.Sprintf("%+v", p.Status)
		})
	})

	t.Run("migration from galaxy's ConfigMap", func(t *testing.T) {
		e.t = t
		e.must(e.c.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mig"}}))
		e.must(e.c.Create(e.ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "floatingip-config"},
			Data:       map[string]string{"floatingips": `[{"nodeSubnets":["0.0.0.0/0"],"ips":["172.21.0.5~172.21.0.9"],"subnet":"172.21.0.0/24","gateway":"172.21.0.1","vlan":3}]`},
		}))
		e.waitFor("the translated pool", func() (bool, string) {
			var p networkingv1alpha1.FloatIPPool
			err := e.c.Get(e.ctx, client.ObjectKey{Name: "galaxy-172-21-0-0-24-172-21-0-5"}, &p)
			return err == nil, fmt.Sprint(err)
		})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "solo", Namespace: "mig", Labels: map[string]string{"app": "solo"}}, Spec: fipTemplate(nil, nil).Spec}
		e.must(e.c.Create(e.ctx, pod))
		e.waitFor("the pod with an IP of the migrated pool and vlan 3", func() (bool, string) {
			var got corev1.Pod
			if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(pod), &got); err != nil {
				return false, err.Error()
			}
			a := got.Annotations[networkingv1alpha1.AnnotationCNIArgs]
			return strings.Contains(a, `"ip":"172.21.0.`) && strings.Contains(a, `"vlan":3`), a
		})
	})
}
