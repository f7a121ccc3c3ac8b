//go:build e2e

package floatippool_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// TestRealSchedulerUsesExtender runs the local cluster's kube-scheduler with
// a KubeSchedulerConfiguration whose extender is edgeplane's float-IP
// extender, and checks that a StatefulSet's pods are bound with distinct IPs
// in galaxy's annotation format.
func TestRealSchedulerUsesExtender(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	// The extender is served before the cluster starts, so the scheduler
	// config can name its address; its client is set once the cluster is up.
	// The scheduler calls it with its client certificate, as in a cluster.
	ext := &floatippool.Extender{}
	certs := floatippooltest.Write(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = floatippool.ExtenderServer(ln, certs.ServerDir, ext).Start(ctx) }()
	cfgPath := writeSchedulerConfig(t, dir, certs, "https://"+ln.Addr().String(), false, 0)

	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:            dir,
		Scheme:         scheme,
		SchedulerFlags: []string{"--config=" + cfgPath},
		Nodes:          []localcluster.NodeSpec{{Name: "w1"}, {Name: "w2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Stop() }()
	installFloatIPCRDs(t, cluster.RESTConfig())
	c := cluster.Client()
	ext.Allocator = &floatippool.Allocator{Reader: c, Live: c, Client: c}
	ext.Nodes = c

	pool := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges: []string{"172.20.0.10~172.20.0.12"}, Subnet: "172.20.0.0/24", Gateway: "172.20.0.1",
			NodeSubnets: []string{"0.0.0.0/0", "::/0"},
		},
	}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// This test serves the extender alone: admit the pool into the
	// FloatIPPoolLedger as the manager's pool reconciler does (its first
	// pass adds the finalizer, the second admits).
	pr := &floatippool.PoolReconciler{Client: c}
	for range 2 {
		if _, err := pr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pool)}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "fip"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fip", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
					Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
				}}}},
			},
		},
	}
	if err := c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels(labels)); err != nil {
			return false, nil
		}
		ips := map[string]bool{}
		var states []string
		for _, p := range pods.Items {
			a := p.Annotations[networkingv1alpha1.AnnotationCNIArgs]
			states = append(states, fmt.Sprintf("%s node=%q phase=%s args=%s", p.Name, p.Spec.NodeName, p.Status.Phase, a))
			if p.Spec.NodeName != "" && strings.HasPrefix(a, `{"common":{"ipinfos":[{"ip":"172.20.0.1`) {
				ips[a] = true
			}
		}
		last = strings.Join(states, "; ")
		return len(ips) == 2, nil
	})
	if err != nil {
		var nodes corev1.NodeList
		_ = c.List(ctx, &nodes)
		var addrs []string
		for _, n := range nodes.Items {
			addrs = append(addrs, fmt.Sprintf("%s=%v", n.Name, n.Status.Addresses))
		}
		t.Fatalf("pods not bound with distinct float IPs: %s (nodes %v): %v", last, addrs, err)
	}
	var fips networkingv1alpha1.FloatIPList
	if err := c.List(ctx, &fips); err != nil || len(fips.Items) != 2 {
		t.Fatalf("FloatIPs = %d (%v), want 2", len(fips.Items), err)
	}
}
