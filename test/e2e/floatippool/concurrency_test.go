//go:build e2e

package floatippool_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// TestTwoExtendersFiveHundredPods: two extender replicas (separate managers
// and caches, the scheduler's requests alternating between them) allocate
// for 500 pods at once from a pool of 300 IPs. No IP is ever held by two
// pods, checked from the FloatIPs and the pod annotations, and the surplus
// pods stay Pending with NoFIPLeft.
func TestTwoExtendersFiveHundredPods(t *testing.T) {
	var nodes []localcluster.NodeSpec
	for i := range 6 {
		nodes = append(nodes, localcluster.NodeSpec{Name: fmt.Sprintf("w%d", i), Pods: 110})
	}
	e := startEnvWith(t, nodes, 2)
	e.namespace("race", []string{"172.22.0.0/24", "172.22.1.0~172.22.1.43"}, nil) // 300 IPs
	labels := map[string]string{"app": "many"}
	e.must(e.c.Create(e.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "many", Namespace: "race"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](500), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: fipTemplate(labels, nil)},
	}))

	e.waitFor("300 pods running with IPs, 200 pending with NoFIPLeft", func() (bool, string) {
		var pods corev1.PodList
		if err := e.c.List(e.ctx, &pods, client.InNamespace("race"), client.MatchingLabels(labels)); err != nil {
			return false, err.Error()
		}
		running, pending := 0, 0
		for _, p := range pods.Items {
			switch {
			case p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning:
				running++
			case p.Spec.NodeName == "":
				pending++
			}
		}
		var evs corev1.EventList
		_ = e.c.List(e.ctx, &evs, client.InNamespace("race"))
		noIP := 0
		for _, ev := range evs.Items {
			if ev.Reason == "FailedScheduling" && strings.Contains(ev.Message, "NoFIPLeft") {
				noIP++
			}
		}
		return running == 300 && pending == 200 && noIP > 0, fmt.Sprintf("running=%d pending=%d NoFIPLeft events=%d", running, pending, noIP)
	})

	// No IP held twice: by the FloatIPs (one object per IP by construction)
	// and by the pods' annotations, and the two agree.
	var pods corev1.PodList
	e.must(e.c.List(e.ctx, &pods, client.InNamespace("race"), client.MatchingLabels(labels)))
	holder := map[string]string{}
	for _, p := range pods.Items {
		args, err := ipam.ParseCNIArgs(p.Annotations[networkingv1alpha1.AnnotationCNIArgs])
		if err != nil {
			t.Fatalf("pod %s: %v", p.Name, err)
		}
		ips := args.IPs()
		if p.Spec.NodeName == "" {
			if len(ips) != 0 {
				t.Errorf("pending pod %s has IPs %v", p.Name, ips)
			}
			continue
		}
		if len(ips) != 1 {
			t.Fatalf("bound pod %s has %d IPs", p.Name, len(ips))
		}
		ip := ips[0].String()
		if other, dup := holder[ip]; dup {
			t.Errorf("IP %s held by pods %s and %s", ip, other, p.Name)
		}
		holder[ip] = p.Name
	}
	fips := e.fips("race")
	if len(fips) != 300 {
		t.Errorf("%d FloatIPs, want 300", len(fips))
	}
	for ip, f := range fips {
		if holder[ip] != f.Status.PodName || !strings.HasSuffix(f.Spec.Key, "_"+f.Status.PodName) {
			t.Errorf("FloatIP %s records pod %q (key %s), the annotations say %q", ip, f.Status.PodName, f.Spec.Key, holder[ip])
		}
	}
}
