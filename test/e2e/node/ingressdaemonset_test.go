//go:build e2e

package node_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/images"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// Ports of the IngressDaemonSet test: its pods' (on the nodes' host
// network) and its health checker's.
const (
	ingressPort = 18080
	healthPort  = 10080
)

// ingressDaemonSet is an IngressDaemonSet of one podreport pod on each
// real node's host network, detached for 5 s before its pod is replaced.
func ingressDaemonSet() *appsv1alpha1.IngressDaemonSet {
	labels := map[string]string{"app": "edge"}
	return &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: workloads},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			ReplicasPerNode:      1,
			NodeSelector:         map[string]string{localcluster.RealNodeLabel: "true"},
			Selector:             &metav1.LabelSelector{MatchLabels: labels},
			HealthCheckNodePorts: []int32{healthPort},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{
				Type: appsv1alpha1.RollingUpdateStrategyType,
				RollingUpdate: &appsv1alpha1.RollingUpdate{
					MaxUnavailableNodes:  ptr.To[int32](1),
					MaxSurgedPodsPerNode: ptr.To(intstr.FromInt32(0)),
					// The health endpoint fails from here; a load balancer
					// checking every second stops sending before the pod goes.
					AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{
						Key: "apps.edgeplane.io/to-be-updated", Value: "true", GracePeriodSeconds: 5,
					},
				},
			},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:                   true,
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					Containers: []corev1.Container{{
						Name:            "edge",
						Image:           images.PodReportRef,
						ImagePullPolicy: corev1.PullNever,
						Args:            []string{"-listen", fmt.Sprintf(":%d", ingressPort)},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
						},
						Ports: []corev1.ContainerPort{{ContainerPort: ingressPort, HostPort: ingressPort}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(ingressPort)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

// clusterHTTP is an HTTP client inside the cluster's network, as a load
// balancer in front of the nodes is: it dials from the control-plane host.
func (e *env) clusterHTTP() *http.Client {
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			Proxy:             nil,
			DialContext:       e.cluster.DialClusterNetwork,
			DisableKeepAlives: true,
		},
	}
}

// getStatus GETs url and returns the status code and body.
func getStatus(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// servedBy is the pod name a podreport answer names.
func servedBy(body string) string {
	var rep struct {
		Pod struct {
			Name string `json:"name"`
		} `json:"pod"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		return ""
	}
	return rep.Pod.Name
}

// nodeTrace is what the load balancer saw of one node during the rollout.
type nodeTrace struct {
	served, failed int
	failures       []string
	// sawUnhealthy: the health port answered 503 at some point;
	// oldPodAtUnhealthy: and the pod serving before the rollout still
	// answered at that moment (detached before it was replaced).
	sawUnhealthy, oldPodAtUnhealthy bool
	pods                            []string
}

// testIngressDaemonSetRollout: the health port of each node answers 200,
// 503 once the node is detached and before its pod is replaced, and 200
// after; a client sending only to the nodes the health endpoint calls
// healthy sees no failed request through the whole rollout.
func (base *env) testIngressDaemonSetRollout(t *testing.T) {
	e := base.with(t)
	ids := ingressDaemonSet()
	if err := e.c.Create(e.ctx, ids); err != nil {
		t.Fatal(err)
	}
	ips := e.nodeIPs()
	hc := e.clusterHTTP()
	healthURL := func(node string) string {
		return "http://" + net.JoinHostPort(ips[node], fmt.Sprint(healthPort)) + "/ok"
	}
	appURL := func(node string) string {
		return "http://" + net.JoinHostPort(ips[node], fmt.Sprint(ingressPort)) + "/"
	}
	before := map[string]string{}
	for _, node := range e.cluster.RealNodes() {
		eventually.That(e.ctx, t, node+"'s health port to answer 200 and its pod to serve", func() (bool, string) {
			code, body, err := getStatus(hc, healthURL(node))
			if err != nil || code != http.StatusOK {
				return false, fmt.Sprintf("health %d %q %v", code, body, err)
			}
			code, body, err = getStatus(hc, appURL(node))
			before[node] = servedBy(body)
			return err == nil && code == http.StatusOK && before[node] != "", fmt.Sprintf("app %d %q %v", code, body, err)
		})
	}

	// The load balancer: every 100 ms, each node whose health port says
	// 200 gets a request.
	traces := map[string]*nodeTrace{}
	for node := range ips {
		traces[node] = &nodeTrace{}
	}
	var mu sync.Mutex // guards traces
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for node, tr := range traces {
				code, _, err := getStatus(hc, healthURL(node))
				if err != nil || code != http.StatusOK {
					mu.Lock()
					first := code == http.StatusServiceUnavailable && !tr.sawUnhealthy
					tr.sawUnhealthy = tr.sawUnhealthy || code == http.StatusServiceUnavailable
					mu.Unlock()
					if first {
						_, body, err := getStatus(hc, appURL(node))
						mu.Lock()
						tr.oldPodAtUnhealthy = err == nil && servedBy(body) == before[node]
						mu.Unlock()
					}
					continue
				}
				code, body, err := getStatus(hc, appURL(node))
				mu.Lock()
				if err != nil || code != http.StatusOK {
					tr.failed++
					tr.failures = append(tr.failures, fmt.Sprintf("%s: %d %v", time.Now().Format(time.StampMilli), code, err))
				} else {
					tr.served++
					if pod := servedBy(body); !slices.Contains(tr.pods, pod) {
						tr.pods = append(tr.pods, pod)
					}
				}
				mu.Unlock()
			}
		}
	}()

	eventually.That(e.ctx, t, "the load balancer to send each node a request", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		var served []string
		for node, tr := range traces {
			if tr.served == 0 {
				return false, fmt.Sprintf("none to %s yet; served: %v", node, served)
			}
			served = append(served, fmt.Sprintf("%s %d", node, tr.served))
		}
		return true, ""
	})
	patch := client.MergeFrom(ids.DeepCopy())
	ids.Spec.Template.Metadata.Annotations = map[string]string{"e2e-node/rollout": "1"}
	if err := e.c.Patch(e.ctx, ids, patch); err != nil {
		close(stop)
		t.Fatal(err)
	}
	eventually.That(e.ctx, t, "the rollout to finish on both nodes", func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(ids), ids); err != nil {
			return false, err.Error()
		}
		st := ids.Status
		done := st.ObservedGeneration == ids.Generation && st.UpdatedNodes == 2 && st.ReadyNodes == 2
		for node := range ips {
			code, _, _ := getStatus(hc, healthURL(node))
			mu.Lock()
			done = done && code == http.StatusOK && traces[node].sawUnhealthy
			mu.Unlock()
		}
		return done, fmt.Sprintf("%+v", st.Nodes)
	})
	// A few more rounds on the new pods.
	time.Sleep(time.Second)
	close(stop)
	<-done
	for node, tr := range traces {
		t.Logf("%s: %d requests served by %v, %d failed", node, tr.served, tr.pods, tr.failed)
		if tr.failed > 0 {
			t.Errorf("%s: %d requests to a node its health port called healthy failed: %v", node, tr.failed, tr.failures)
		}
		if !tr.oldPodAtUnhealthy {
			t.Errorf("%s: the health port did not answer 503 while the old pod %s still served (detach before replace)", node, before[node])
		}
		if len(tr.pods) < 2 || tr.pods[0] != before[node] {
			t.Errorf("%s: requests were served by %v, want the old pod %s, then its replacement", node, tr.pods, before[node])
		}
	}
}
