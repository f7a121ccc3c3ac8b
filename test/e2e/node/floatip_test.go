//go:build e2e

package node_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// floatPool creates a FloatIPPool of the float node's share of its pod
// range, for that node only (nodeSubnets: its address), with the Default
// release policy, and waits until it is Ready.
func (e *env) floatPool(name string) (first, last netip.Addr) {
	e.t.Helper()
	var node corev1.Node
	if err := e.c.Get(e.ctx, client.ObjectKey{Name: floatNode}, &node); err != nil {
		e.t.Fatal(err)
	}
	podCIDR, err := netip.ParsePrefix(node.Spec.PodCIDR)
	if err != nil {
		e.t.Fatalf("node %s's pod range %q: %v", floatNode, node.Spec.PodCIDR, err)
	}
	first, last, err = localcluster.FloatIPRange(podCIDR)
	if err != nil {
		e.t.Fatal(err)
	}
	nodeIP := e.nodeIPs()[floatNode]
	pool := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges:        []string{first.String() + "~" + last.String()},
			Subnet:        podCIDR.String(),
			Gateway:       podCIDR.Addr().Next().String(),
			NodeSubnets:   []string{nodeIP + "/32"},
			ReleasePolicy: networkingv1alpha1.ReleasePolicyDefault,
		},
	}
	if err := e.c.Create(e.ctx, pool); err != nil {
		e.t.Fatal(err)
	}
	eventually.That(e.ctx, e.t, "pool "+name+" Ready", func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return false, err.Error()
		}
		for _, c := range pool.Status.Conditions {
			if c.Type == "Ready" {
				return c.Status == metav1.ConditionTrue, c.Reason + ": " + c.Message
			}
		}
		return false, "no Ready condition"
	})
	return first, last
}

// floatPodTemplate is a pod of the nodetest image that requests one float
// IP and runs on the nodes' float-IP network.
func floatPodTemplate(labels, annotations map[string]string) corev1.PodTemplateSpec {
	one := resource.MustParse("1")
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RuntimeClassName:              ptr.To(localcluster.FloatIPRuntimeClass),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name:            "web",
				Image:           localcluster.NodetestRef,
				ImagePullPolicy: corev1.PullNever,
				Args:            []string{"serve"},
				Ports:           []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{resourceENIIP: one},
					Limits:   corev1.ResourceList{resourceENIIP: one},
				},
			}},
		},
	}
}

// checkFloatIPOnEth0 checks that pod holds a float IP of [first, last] on
// its own eth0, handed out by the chart's plugin.
func (e *env) checkFloatIPOnEth0(pod corev1.Pod, first, last netip.Addr) netip.Addr {
	e.t.Helper()
	if pod.Spec.NodeName != floatNode {
		e.t.Errorf("pod %s runs on %s; the pool serves only %s", pod.Name, pod.Spec.NodeName, floatNode)
	}
	ip, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil {
		e.t.Fatalf("pod %s's IP %q: %v", pod.Name, pod.Status.PodIP, err)
	}
	if ip.Less(first) || last.Less(ip) {
		e.t.Errorf("pod %s has %s, outside the pool's %s~%s", pod.Name, ip, first, last)
	}
	// The FloatIP the extender wrote names this pod.
	var fip networkingv1alpha1.FloatIP
	if err := e.c.Get(e.ctx, client.ObjectKey{Name: strings.ReplaceAll(ip.String(), ".", "-")}, &fip); err != nil {
		e.t.Fatalf("the FloatIP of %s: %v", ip, err)
	}
	if fip.Status.PodUID != string(pod.UID) {
		e.t.Errorf("FloatIP %s names pod UID %q, the pod is %s", fip.Name, fip.Status.PodUID, pod.UID)
	}
	// The pod's own view, through the API server's exec.
	addrs, err := e.cluster.Kubectl(e.ctx, "exec", "-n", workloads, pod.Name, "--", "/nodetest", "addrs")
	if err != nil {
		e.t.Fatal(err)
	}
	if want := fmt.Sprintf("eth0 %s/24", ip); !slices.Contains(strings.Split(addrs, "\n"), want) {
		e.t.Errorf("pod %s's interfaces, as it sees them:\n%s\nwant a line %q", pod.Name, addrs, want)
	}
	e.t.Logf("pod %s's interfaces (kubectl exec):\n%s", pod.Name, addrs)
	// edgeplane-cni-ipam, and nothing else, records what it handed out.
	var list eventsv1.EventList
	if err := e.c.List(e.ctx, &list, client.InNamespace(workloads)); err != nil {
		e.t.Fatal(err)
	}
	found := false
	for _, ev := range list.Items {
		if ev.Regarding.UID == pod.UID && ev.Reason == "FloatIPAssigned" && ev.ReportingController == "edgeplane.io/cni-ipam" {
			found = strings.Contains(ev.Note, ip.String())
		}
	}
	if !found {
		e.t.Errorf("pod %s has no FloatIPAssigned event of edgeplane-cni-ipam naming %s", pod.Name, ip)
	}
	return ip
}

// cachedResults are containerd's cached CNI results of the float-IP
// network on the float node that hold ip: one per sandbox from its ADD
// until its DEL.
func (e *env) cachedResults(ip netip.Addr) []string {
	e.t.Helper()
	dir, err := e.cluster.RealNodePath(floatNode, "/var/lib/cni/results")
	if err != nil {
		e.t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, localcluster.FloatIPNetwork+"-*"))
	if err != nil {
		e.t.Fatal(err)
	}
	var holding []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), `"`+ip.String()+`/`) {
			holding = append(holding, filepath.Base(f))
		}
	}
	return holding
}

// testFloatIPOnEth0: a Deployment's pod gets a float IP on its eth0 from
// the chart's plugin; deleting it runs CNI DEL, and the Default release
// policy gives the IP back.
func (base *env) testFloatIPOnEth0(t *testing.T) {
	e := base.with(t)
	first, last := e.first, e.last
	labels := map[string]string{"app": "float-web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "float-web", Namespace: workloads},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: floatPodTemplate(labels, nil),
		},
	}
	if err := e.c.Create(e.ctx, dep); err != nil {
		t.Fatal(err)
	}
	pod := e.readyPod(labels, "")
	ip := e.checkFloatIPOnEth0(pod, first, last)
	if got := e.cachedResults(ip); len(got) != 1 {
		t.Errorf("containerd's cached float-IP results holding %s: %v, want one", ip, got)
	}

	if err := e.c.Delete(e.ctx, dep, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	eventually.That(e.ctx, t, "the pod to be gone", func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	eventually.That(e.ctx, t, "CNI DEL to drop the cached result holding "+ip.String(), func() (bool, string) {
		got := e.cachedResults(ip)
		return len(got) == 0, fmt.Sprint(got)
	})
	eventually.That(e.ctx, t, "the Default policy to release "+ip.String(), func() (bool, string) {
		var fip networkingv1alpha1.FloatIP
		err := e.c.Get(e.ctx, client.ObjectKey{Name: strings.ReplaceAll(ip.String(), ".", "-")}, &fip)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("%v phase=%s pod=%s", err, fip.Status.Phase, fip.Status.PodName)
	})
}

// testStatefulSetKeepsItsFloatIP: a StatefulSet's pod (release policy
// immutable, over the pool's Default) deleted and recreated comes back
// with the same IP on eth0.
func (base *env) testStatefulSetKeepsItsFloatIP(t *testing.T) {
	e := base.with(t)
	first, last := e.first, e.last
	labels := map[string]string{"app": "float-db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "float-db", Namespace: workloads},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: "float-db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template:    floatPodTemplate(labels, map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "immutable"}),
		},
	}
	if err := e.c.Create(e.ctx, sts); err != nil {
		t.Fatal(err)
	}
	pod := e.readyPod(labels, "")
	ip := e.checkFloatIPOnEth0(pod, first, last)
	if err := e.c.Delete(e.ctx, &pod); err != nil {
		t.Fatal(err)
	}
	again := e.readyPod(labels, string(pod.UID))
	if again.Name != pod.Name {
		t.Fatalf("the recreated pod is %s, want %s", again.Name, pod.Name)
	}
	if got := e.checkFloatIPOnEth0(again, first, last); got != ip {
		t.Errorf("the recreated %s has %s, want its IP %s back", again.Name, got, ip)
	}
}
