//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

// setUpTimeout only keeps a broken set-up from hanging the run.
const setUpTimeout = 5 * time.Minute

// Namespaces and names of the workloads.
const (
	nsEIP     = "chaos-eip"
	nsFloat   = "chaos-fip"
	nsIngress = "chaos-ingress"
	nsBurst   = "chaos-burst"
	idsName   = "edge"
	perNode   = 2
	// idsBudget is the IngressDaemonSet's maxDegradedNodes.
	idsBudget = 1

	labelIngress = "chaos.edgeplane.io/ingress"
	taintAIA     = "chaos.edgeplane.io/aia" // keeps workloads off the churned AIA nodes
	aiaInstances = 400                      // CVM instances seeded in the emulator, one per AIA node ever created
	managerNS    = "edgeplane-system"
	leaseName    = "edgeplane-manager.edgeplane.io"
)

var (
	workers     = []string{"w1", "w2", "w3"}
	virtualNode = "virtual-1"
	floatDeps   = []string{"fip-a", "fip-b", "fip-shared"}
	burstDeps   = map[string]int{"burst-a": 1, "burst-b": 2} // name → LOCAL_REPLICAS
)

func (r *run) setUp() {
	t := r.t
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r.art = os.Getenv("CHAOS_ARTIFACTS")
	if r.art == "" {
		if r.art, err = os.MkdirTemp("", "edgeplane-chaos-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(r.art, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() && os.Getenv("CHAOS_KEEP") == "" {
			_ = os.RemoveAll(r.art)
		}
	})
	if r.events, err = os.Create(filepath.Join(r.art, "events.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.events.Close() })
	r.logf("artifacts in %s", r.art)
	if r.scheme, err = edgescheme.New(); err != nil {
		t.Fatal(err)
	}

	// The binaries under test, built from this tree.
	bins := testbin.Build(t, filepath.Join(r.art, "bin"), "edgeplane-manager", "edgeplane-cloudsim")
	r.startEmulator(bins[1])

	// Every replica serves the webhooks and the float-IP extender; the API
	// server and the scheduler reach whichever is alive through a proxy.
	slots := []string{"a", "b"}
	var webhookAddrs, extenderAddrs []string
	for _, s := range slots {
		rep := &replica{run: r, slot: s, bin: bins[0],
			probe: testbin.FreeAddr(t), metrics: testbin.FreeAddr(t), webhook: testbin.FreeAddr(t), extender: testbin.FreeAddr(t)}
		r.replicas = append(r.replicas, rep)
		webhookAddrs, extenderAddrs = append(webhookAddrs, rep.webhook), append(extenderAddrs, rep.extender)
	}
	if r.webhookProxy, err = NewProxy(webhookAddrs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.webhookProxy.Close() })
	if r.extenderProxy, err = NewProxy(extenderAddrs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.extenderProxy.Close() })

	clusterDir := filepath.Join(r.art, "cluster")
	r.extenderCerts = floatippooltest.Write(t, filepath.Join(r.art, "floatip-certs"))
	schedCfg := r.writeSchedulerConfig(clusterDir, "https://"+r.extenderProxy.Addr())
	nodes := []localcluster.NodeSpec{{Name: virtualNode, Labels: map[string]string{corev1.LabelInstanceTypeStable: "eklet", "type": "virtual-kubelet"},
		Taints: []corev1.Taint{{Key: "eks.tke.cloud.tencent.com/eklet", Effect: corev1.TaintEffectNoSchedule}}}}
	for _, w := range workers {
		nodes = append(nodes, localcluster.NodeSpec{Name: w, Labels: map[string]string{labelIngress: "true"}})
	}
	ctx, cancel := context.WithTimeout(r.ctx, setUpTimeout)
	defer cancel()
	r.cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: clusterDir, Scheme: r.scheme, Log: testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
		Nodes: nodes, SchedulerFlags: []string{"--config=" + schedCfg}, StartTimeout: setUpTimeout})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := r.cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	r.c = r.cluster.Client()
	if _, err := envtest.InstallCRDs(r.cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}
	for _, ns := range []string{managerNS, nsEIP, nsFloat, nsIngress, nsBurst, nsProbe} {
		if err := r.cluster.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	r.installWebhooks(ctx, root)
	r.apply(ctx, fmt.Sprintf(providerConfigs, r.emuURL, clusterIdentity, r.emuURL, clusterIdentity))

	// Two replicas, the first alone until it leads, so the roles are known.
	r.replicas[0].start()
	r.waitFor(ctx, "replica a to take the Lease", func() (bool, string) {
		h := r.leaseHolder(ctx)
		return h != "", "holder " + h
	})
	r.replicas[1].start()
	for _, rep := range r.replicas {
		rep.waitReady(ctx)
	}
	r.waitFor(ctx, "both ClusterProviderConfigs Ready", func() (bool, string) {
		var list unstructured.UnstructuredList
		list.SetAPIVersion("cloud.edgeplane.io/v1alpha1")
		list.SetKind("ClusterProviderConfigList")
		if err := r.c.List(ctx, &list); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, o := range list.Items {
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Ready" && m["status"] == "True" {
					ready++
				}
			}
		}
		return ready == 2, fmt.Sprintf("%d of 2 Ready", ready)
	})

	// The workloads: created once the webhooks (the pool validator fails
	// closed) are served.
	r.apply(ctx, workloads)
	r.waitFor(ctx, "the IngressDaemonSet rolled out", func() (bool, string) { return r.ingressSteady(ctx) })
	r.waitFor(ctx, "the float-IP and burst workloads ready", func() (bool, string) {
		ok1, s1 := r.deploymentsSteady(ctx, nsFloat)
		ok2, s2 := r.deploymentsSteady(ctx, nsBurst)
		return ok1 && ok2, s1 + "; " + s2
	})
	// The failover probe works before it is relied on.
	gen, err := r.bumpProbe(ctx)
	if err != nil {
		t.Fatalf("changing the failover probe: %v", err)
	}
	r.waitFor(ctx, "the failover probe reconciled", func() (bool, string) {
		observed, err := r.probeObserved(ctx)
		return observed >= gen, fmt.Sprintf("generation %d observed %d (%v)", gen, observed, err)
	})
	r.logf("set-up done: cluster, emulator %s, replicas a and b, workloads ready", r.emuURL)
}

// startEmulator runs the emulator on a free port with room for the run's
// addresses, the ENI that holds every kwok pod IP, and the CVM instances
// of the AIA nodes and the probe nodes.
func (r *run) startEmulator(bin string) {
	t := r.t
	addrFile := filepath.Join(r.art, "cloudsim.addr")
	token := make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		t.Fatal(err)
	}
	r.emuToken = hex.EncodeToString(token)
	p, err := localcluster.StartProcess("cloudsim", bin, []string{"--addr=127.0.0.1:0", "--addr-file=" + addrFile,
		"--seed=" + strconv.FormatUint(r.seed, 10), "--ec2-address-quota=" + strconv.Itoa(runQuota), "--tencent-address-quota=" + strconv.Itoa(runQuota), "--task-duration=1s"},
		[]string{cloudsim.AdminTokenEnv + "=" + r.emuToken}, filepath.Join(r.art, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	r.emu = p
	t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
	r.waitFor(r.ctx, "the emulator's address", func() (bool, string) {
		b, err := os.ReadFile(addrFile) //nolint:gosec // our own file
		r.emuURL = strings.TrimSpace(string(b))
		return err == nil && r.emuURL != "", fmt.Sprint(err, p.ExitError())
	})
	root, _ := k8sbin.RepoRoot()
	eni, err := os.ReadFile(filepath.Join(root, "examples", "podelasticip", "cloudsim-fixtures.json")) //nolint:gosec // a checked-in file
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.emulatorCall(http.MethodPost, "/admin/fixtures", string(eni)); err != nil {
		t.Fatal(err)
	}
	type instance struct {
		InstanceID         string   `json:"instanceId"`
		InstanceName       string   `json:"instanceName"`
		PrivateIPAddresses []string `json:"privateIpAddresses"`
	}
	var instances []instance
	for i := 1; i <= aiaInstances+probeInstances; i++ {
		instances = append(instances, instance{InstanceID: instanceID(i), InstanceName: fmt.Sprintf("aia-%d", i),
			PrivateIPAddresses: []string{fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250)}})
	}
	fx, _ := json.Marshal(map[string]any{"tencent": map[string]any{"instances": instances}})
	if _, err := r.emulatorCall(http.MethodPost, "/admin/fixtures", string(fx)); err != nil {
		t.Fatal(err)
	}
}

func instanceID(i int) string { return fmt.Sprintf("ins-ch%06d", i) }

// tencentProviderID is the spec.providerID of a node on CVM instance id,
// from which AnycastIPBinding reads the instance.
func tencentProviderID(id string) string { return "qcloud:///800002/" + id }

// emulator calls the emulator's admin API and returns the body; a failure
// is a problem of the run (the admin API is never faulty).
func (r *run) emulator(method, path, body string) []byte {
	out, err := r.emulatorCall(method, path, body)
	if err != nil {
		r.problem("%v", err)
	}
	return out
}

func (r *run) emulatorCall(method, path, body string) ([]byte, error) {
	req, err := cloudsim.NewAdminRequest(r.ctx, method, r.emuURL+path, r.emuToken, body)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("emulator %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("emulator %s %s: %s: %s", method, path, resp.Status, out)
	}
	return out, nil
}

// writeSchedulerConfig sends float-IP pods to the extender (the shape of
// examples/floatippool/kube-scheduler-config.yaml).
func (r *run) writeSchedulerConfig(clusterDir, extenderURL string) string {
	cfg := wire.SchedulerConfig{
		Kubeconfig: localcluster.ComponentKubeconfig(clusterDir, localcluster.Scheduler), URLPrefix: extenderURL,
		Resource: networkingv1alpha1.ResourceENIIP, CertDir: r.extenderCerts.ClientDir,
	}.YAML()
	path := filepath.Join(r.art, "kube-scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// installWebhooks installs the generated webhook configurations
// (config/webhook/manifests.yaml under root) with each webhook calling the
// proxy, rewritten by hack/demowebhooks as for the demo; the replicas inject
// the CA bundle.
func (r *run) installWebhooks(ctx context.Context, root string) {
	manifests, err := os.Open(filepath.Join(root, "config", "webhook", "manifests.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	defer func() { _ = manifests.Close() }()
	var stderr bytes.Buffer
	rewrite := exec.CommandContext(ctx, "go", "run", "./hack/demowebhooks", "--url", "https://"+r.webhookProxy.Addr())
	rewrite.Dir, rewrite.Stdin, rewrite.Stderr = root, manifests, &stderr
	out, err := rewrite.Output()
	if err != nil {
		r.t.Fatalf("rewriting the webhook configurations: %v\n%s", err, stderr.Bytes())
	}
	r.apply(ctx, string(out))
}

// apply creates every object of a multi-document YAML text.
func (r *run) apply(ctx context.Context, text string) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			r.t.Fatalf("decoding objects: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := r.c.Create(ctx, u); err != nil {
			r.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// waitFor polls cond every second until it holds; the timeout only keeps a
// broken set-up from hanging.
func (r *run) waitFor(ctx context.Context, what string, cond func() (bool, string)) {
	r.t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(ctx, time.Second, setUpTimeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		r.t.Fatalf("waiting for %s: %v; last state: %s; artifacts in %s", what, err, last, r.art)
	}
}

// deploymentsSteady: every Deployment of ns has all its replicas updated
// and ready, and no others.
func (r *run) deploymentsSteady(ctx context.Context, ns string) (bool, string) {
	var deps appsv1.DeploymentList
	if err := r.c.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		return false, err.Error()
	}
	var waiting []string
	for _, d := range deps.Items {
		want := *d.Spec.Replicas
		if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != want || d.Status.ReadyReplicas != want || d.Status.Replicas != want {
			waiting = append(waiting, fmt.Sprintf("%s %d/%d ready, %d updated, %d total", d.Name, d.Status.ReadyReplicas, want, d.Status.UpdatedReplicas, d.Status.Replicas))
		}
	}
	return len(waiting) == 0, ns + ": " + strings.Join(waiting, ", ")
}

// ingressSteady: the IngressDaemonSet has rolled out its current template
// and every selected node serves at full strength.
func (r *run) ingressSteady(ctx context.Context) (bool, string) {
	ids := &appsv1alpha1.IngressDaemonSet{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: nsIngress, Name: idsName}, ids); err != nil {
		return false, err.Error()
	}
	c := meta.FindStatusCondition(ids.Status.Conditions, appsv1alpha1.TypeProgressing)
	if c == nil || c.Reason != appsv1alpha1.ReasonRolloutComplete || ids.Status.ObservedGeneration != ids.Generation {
		return false, fmt.Sprintf("IngressDaemonSet progressing %+v, generation %d observed %d", c, ids.Generation, ids.Status.ObservedGeneration)
	}
	nodes, pods, err := r.ingressView(ctx)
	if err != nil {
		return false, err.Error()
	}
	if bad := DegradedNodes(nodes, pods, perNode); len(bad) > 0 {
		return false, fmt.Sprintf("IngressDaemonSet nodes not at full strength: %v", bad)
	}
	return true, ""
}

// ingressView lists the nodes the IngressDaemonSet selects (not being
// deleted) and its pods.
func (r *run) ingressView(ctx context.Context) ([]string, []corev1.Pod, error) {
	var nodes corev1.NodeList
	if err := r.c.List(ctx, &nodes, client.MatchingLabels{labelIngress: "true"}); err != nil {
		return nil, nil, err
	}
	var names []string
	for _, n := range nodes.Items {
		if n.DeletionTimestamp == nil {
			names = append(names, n.Name)
		}
	}
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace(nsIngress), client.MatchingLabels{"app": idsName}); err != nil {
		return nil, nil, err
	}
	return names, pods.Items, nil
}

// providerConfigs: the AWS account (PodElasticIP) and the Tencent Cloud
// account (AnycastIPBinding), both on the emulator.
const providerConfigs = `
apiVersion: cloud.edgeplane.io/v1alpha1
kind: ClusterProviderConfig
metadata: {name: default}
spec: {provider: aws, region: us-east-1, endpoint: "%s", clusterIdentity: %s, credentials: {source: None}}
---
apiVersion: cloud.edgeplane.io/v1alpha1
kind: ClusterProviderConfig
metadata: {name: tencentcloud}
spec: {provider: tencentcloud, region: ap-guangzhou, endpoint: "%s", clusterIdentity: %s, credentials: {source: None}}
`

// workloads are the long-lived objects the churn changes.
const workloads = `
apiVersion: scheduling.edgeplane.io/v1alpha1
kind: ClusterBurstPolicy
metadata: {name: default}
spec: {enabled: true}
---
apiVersion: networking.edgeplane.io/v1alpha1
kind: FloatIPPool
metadata: {name: chaos}
spec:
  ranges: ["172.20.0.10~172.20.0.120"]
  subnet: 172.20.0.0/24
  gateway: 172.20.0.1
  nodeSubnets: ["10.0.0.0/8"]
  releasePolicy: Default
---
apiVersion: networking.edgeplane.io/v1alpha1
kind: FloatIPPool
metadata: {name: chaos-shared}
spec: {size: 3, preAllocate: true}
---
apiVersion: apps.edgeplane.io/v1alpha1
kind: IngressDaemonSet
metadata: {name: edge, namespace: chaos-ingress}
spec:
  replicasPerNode: 2
  nodeSelector: {chaos.edgeplane.io/ingress: "true"}
  selector: {matchLabels: {app: edge}}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {maxDegradedNodes: 1, maxUnavailablePodsPerNode: 1, maxSurgedPodsPerNode: 0}
  template:
    metadata: {labels: {app: edge}}
    spec:
      terminationGracePeriodSeconds: 5
      containers: [{name: proxy, image: "proxy:1"}]
---
apiVersion: apps.edgeplane.io/v1alpha1
kind: IngressDaemonSet
metadata: {name: failover-probe, namespace: chaos-probe}
spec:
  replicasPerNode: 1
  nodeSelector: {chaos.edgeplane.io/probe: "none"}
  selector: {matchLabels: {app: failover-probe}}
  template:
    metadata: {labels: {app: failover-probe}}
    spec:
      containers: [{name: probe, image: "probe:1"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fip-a, namespace: chaos-fip}
spec:
  replicas: 2
  selector: {matchLabels: {app: fip-a}}
  template:
    metadata: {labels: {app: fip-a}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: nginx
        resources: {requests: {tke.cloud.tencent.com/eni-ip: "1"}, limits: {tke.cloud.tencent.com/eni-ip: "1"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fip-b, namespace: chaos-fip}
spec:
  replicas: 1
  selector: {matchLabels: {app: fip-b}}
  template:
    metadata: {labels: {app: fip-b}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: nginx
        resources: {requests: {tke.cloud.tencent.com/eni-ip: "1"}, limits: {tke.cloud.tencent.com/eni-ip: "1"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fip-shared, namespace: chaos-fip}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
  selector: {matchLabels: {app: fip-shared}}
  template:
    metadata:
      labels: {app: fip-shared}
      annotations: {tke.cloud.tencent.com/eni-ip-pool: chaos-shared}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: nginx
        resources: {requests: {tke.cloud.tencent.com/eni-ip: "1"}, limits: {tke.cloud.tencent.com/eni-ip: "1"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: burst-a, namespace: chaos-burst}
spec:
  replicas: 3
  selector: {matchLabels: {app: burst-a}}
  template:
    metadata:
      labels: {app: burst-a}
      annotations: {AUTO_SCALE_EKS: "true", LOCAL_REPLICAS: "1"}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: burst-b, namespace: chaos-burst}
spec:
  replicas: 3
  selector: {matchLabels: {app: burst-b}}
  template:
    metadata:
      labels: {app: burst-b}
      annotations: {AUTO_SCALE_EKS: "true", LOCAL_REPLICAS: "2"}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
`
