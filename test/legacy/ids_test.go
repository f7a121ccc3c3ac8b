package legacy_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/importer"
	"github.com/edgeplane/edgeplane/internal/healthcheck"
)

// mumoshu/ingress-daemonset-controller. From its README: the kind
// IngressDaemonSet of ingressdaemonsets.mumoshu.github.io/v1alpha1, the
// fields podsPerNode, healthCheckNodePorts, maxUnavailableNodes,
// maxUnavaiablePodsPerNode, maxSurgedPodsPerNode, maxDegradedNodes,
// annotateDeploymentToDetach (key ingressdaemonsets.mumoshu.github.com/to-be-updated),
// annotateNodeToDetach (key node-detacher.variant.run/detached, value
// "true") and waitForDetachmentByAnnotatedTimestamp (key
// node-detacher.variant.run/detachment-timestamp, format RFC3339); the
// per-node Deployment <INGRESS_DS_NAME>-<NODE_NAME> and a health DaemonSet
// per port. (That DaemonSet is now the platform's, in its namespace:
// <NAMESPACE>.<INGRESS_DS_NAME>-<PORT NUMBER>, docs/ingressdaemonset.md.)
//
// legacyIngressDaemonSet is the README's example with its keys verbatim
// (comments, most of the pod template and maxDegradedNodes, which detach
// mode drops, left out). The annotateDeploymentToDetach block the README has
// commented out is in, without its key: the key it shows is the legacy
// controller's default.
const legacyIngressDaemonSet = `
kind: IngressDaemonSet
apiVersion: ingressdaemonsets.mumoshu.github.io/v1alpha1
metadata:
  name: nginx-ingress
  namespace: ingress-nginx
spec:
  podsPerNode: 2
  healthCheckNodePorts:
  - 10080
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailableNodes: 2
      maxUnavaiablePodsPerNode: 3
      maxSurgedPodsPerNode: 1
      annotateDeploymentToDetach:
        gracePeriodSeconds: 10
      annotateNodeToDetach:
        key: "node-detacher.variant.run/detached"
        value: "true"
        gracePeriodSeconds: 10
      waitForDetachmentByAnnotatedTimestamp:
        key: "node-detacher.variant.run/detachment-timestamp"
        format: RFC3339
        gracePeriodSeconds: 30
  template:
    metadata:
      labels:
        app: ingress-nginx
    spec:
      nodeSelector:
        ingress-controller-node: "true"
      containers:
        - name: nginx-ingress-controller
          image: quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.26.1
`

func ingressDaemonSetController() project {
	return project{
		name: "ingress-daemonset-controller",
		setup: func(w *world) {
			w.namespace("ingress-nginx")
			w.namespace(ingressdaemonset.DefaultHealthCheckNamespace)
			w.node("ids-node-1", "", map[string]string{"ingress-controller-node": "true"})
		},
		test: testIngressDaemonSet,
	}
}

func testIngressDaemonSet(t *testing.T, w *world) {
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(legacyIngressDaemonSet), &doc); err != nil {
		t.Fatal(err)
	}
	ids, warnings, err := importer.Convert(doc)
	if err != nil {
		t.Fatalf("converting the README's IngressDaemonSet: %v", err)
	}
	t.Logf("conversion warnings: %q", warnings)
	w.create(ids)

	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	r := &ingressdaemonset.Reconciler{Client: env.Client, HealthChecker: ingressdaemonset.HealthChecker{Image: "example.com/edgeplane:test"}, Clock: clk}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
	}
	deployment := func() *appsv1.Deployment {
		t.Helper()
		d := &appsv1.Deployment{}
		if err := env.Client.Get(w.ctx, client.ObjectKey{Namespace: "ingress-nginx", Name: "nginx-ingress-ids-node-1"}, d); err != nil {
			t.Fatalf("the per-node Deployment <INGRESS_DS_NAME>-<NODE_NAME>: %v", err)
		}
		return d
	}
	node := func() *corev1.Node {
		t.Helper()
		n := &corev1.Node{}
		if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "ids-node-1"}, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// observe plays the Deployment controller: status current, and with
	// rolledOut every replica updated and ready.
	observe := func(rolledOut bool) {
		t.Helper()
		d := deployment()
		d.Status.ObservedGeneration = d.Generation
		if rolledOut {
			n := *d.Spec.Replicas
			d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = n, n, n, n
		}
		if err := env.Client.Status().Update(w.ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	reconcile()
	if d := deployment(); *d.Spec.Replicas != 2 {
		t.Errorf("podsPerNode 2 gave %d replicas", *d.Spec.Replicas)
	}
	ds := &appsv1.DaemonSet{}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Namespace: ingressdaemonset.DefaultHealthCheckNamespace, Name: "ingress-nginx.nginx-ingress-10080"}, ds); err != nil {
		t.Fatalf("the health DaemonSet of port 10080: %v", err)
	}
	if p := ds.Spec.Template.Spec.Containers[0].Ports; len(p) != 1 || p[0].HostPort != 10080 {
		t.Errorf("health DaemonSet ports %v, want host port 10080", p)
	}
	observe(true)
	reconcile()

	// A template change detaches the node: the node and the Deployment get
	// the README's annotations, and the health endpoint fails.
	cur := ids.DeepCopy()
	if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(ids), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Template.Spec.Containers[0].Image = "quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.27.0"
	if err := env.Client.Update(w.ctx, cur); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if v, ok := node().Annotations["node-detacher.variant.run/detached"]; !ok || v != "true" {
		t.Errorf("node annotations %v, want node-detacher.variant.run/detached: \"true\"", node().Annotations)
	}
	if _, ok := deployment().Annotations["ingressdaemonsets.mumoshu.github.com/to-be-updated"]; !ok {
		t.Errorf("Deployment annotations %v, want ingressdaemonsets.mumoshu.github.com/to-be-updated", deployment().Annotations)
	}
	if ok, reason := healthcheck.Evaluate(deployment()); ok {
		t.Errorf("health endpoint healthy (%s) on a detached node", reason)
	}
	observe(false)

	// After the grace periods the node waits for node-detacher's timestamp.
	clk.Step(11 * time.Second)
	reconcile()
	if img := deployment().Spec.Template.Spec.Containers[0].Image; img != "quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.26.1" {
		t.Fatalf("pods updated (%s) before the node carried node-detacher.variant.run/detachment-timestamp", img)
	}
	n := node()
	n.Annotations["node-detacher.variant.run/detachment-timestamp"] = clk.Now().Add(-31 * time.Second).Format(time.RFC3339)
	if err := env.Client.Update(w.ctx, n); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if img := deployment().Spec.Template.Spec.Containers[0].Image; img != "quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.27.0" {
		t.Fatalf("pods not updated (%s) 30s after the detachment timestamp", img)
	}

	// Updated and ready: both annotations go, the node serves again.
	observe(true)
	reconcile()
	if _, ok := node().Annotations["node-detacher.variant.run/detached"]; ok {
		t.Errorf("node still annotated after the update: %v", node().Annotations)
	}
	if _, ok := deployment().Annotations["ingressdaemonsets.mumoshu.github.com/to-be-updated"]; ok {
		t.Errorf("Deployment still annotated after the update: %v", deployment().Annotations)
	}
	if ok, reason := healthcheck.Evaluate(deployment()); !ok {
		t.Errorf("health endpoint unhealthy (%s) after the update", reason)
	}
}
