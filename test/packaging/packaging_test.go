// Package packaging_test checks what users install: the Helm chart (lint,
// template, the values schema) and every kustomize base and overlay, each
// applied with a server-side dry run to a real API server (envtest) that has
// edgeplane's CRDs and stand-ins for cert-manager's and prometheus-operator's.
package packaging_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/cniipam/install"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// tools runs the repository's pinned tools and the local kubectl.
type tools struct {
	root, kubectl, kubeconfig string
}

func newTools(t *testing.T) tools {
	t.Helper()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := k8sbin.Path("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("testdata", "standin-crds.yaml")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("installing the stand-in CRDs: %v", err)
	}
	return tools{root: root, kubectl: kubectl, kubeconfig: kubeconfig}
}

// run runs a command in the repository root and returns stdout; a failure
// returns stderr in the error.
func (tl tools) run(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = tl.root
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &cmdError{err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ": " + e.stderr }

func (tl tools) goTool(tool string, args ...string) ([]byte, error) {
	return gotool.Output(append([]string{tool}, args...)...)
}

// dryRun applies manifests server-side with dryRun=All, after creating the
// namespaces they use (a dry-run Namespace is not there for the objects in it).
func (tl tools) dryRun(t *testing.T, manifests []byte) {
	t.Helper()
	objs := decode(t, manifests)
	if len(objs) == 0 {
		t.Fatal("nothing to apply")
	}
	for _, u := range objs {
		ns := u.GetNamespace()
		if u.GetKind() == "Namespace" {
			ns = u.GetName()
		}
		if ns != "" {
			ensureNamespace(t, ns)
		}
	}
	out, err := tl.run(manifests, tl.kubectl, "--kubeconfig", tl.kubeconfig, "apply", "--server-side",
		"--dry-run=server", "--field-manager=edgeplane-packaging-test", "-f", "-")
	if err != nil {
		t.Fatalf("server-side dry run: %v\n%s", err, out)
	}
	if got := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; got != len(objs) {
		t.Errorf("the dry run reported %d objects, the manifests have %d:\n%s", got, len(objs), out)
	}
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func decode(t *testing.T, manifests []byte) []*unstructured.Unstructured {
	t.Helper()
	return gotool.Decode(t, "manifests", manifests)
}

func TestKustomizeBasesAndOverlaysApply(t *testing.T) {
	tl := newTools(t)
	for _, dir := range []string{
		"config/crd", "config/rbac", "config/manager", "config/webhook", "config/samples",
		"config/certmanager", "config/prometheus",
		"config/default", "config/overlays/aws", "config/overlays/tencentcloud", "config/overlays/local",
	} {
		t.Run(dir, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(tl.root, dir, "kustomization.yaml")); err != nil {
				t.Fatalf("%s has no kustomization.yaml: %v", dir, err)
			}
			out, err := tl.goTool("kustomize", "build", dir)
			if err != nil {
				t.Fatalf("kustomize build %s: %v", dir, err)
			}
			tl.dryRun(t, out)
		})
	}
}

func TestHelmChart(t *testing.T) {
	tl := newTools(t)
	const chart = "charts/edgeplane"
	if out, err := tl.goTool("helm", "lint", "--strict", chart); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	for name, set := range map[string][]string{
		"defaults": nil,
		"cert-manager, ServiceMonitor, both clouds, credential namespaces": {
			"webhook.certMode=cert-manager", "serviceMonitor.enabled=true",
			"providerConfigs.aws.enabled=true", "providerConfigs.tencentcloud.enabled=true",
			"providerConfigs.aws.credentials.source=Secret", "providerConfigs.aws.credentials.secretRef.name=aws-creds",
			"credentialNamespaces={team-a}", "tenantEndpoints={http://cloudsim.edgeplane-system:8600,https://ec2.vpce.example}",
			`serviceAccount.annotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::123456789012:role/edgeplane`,
			"manager.extraArgs={--burstpolicy-max-concurrent-reconciles=4}",
			"anycastIP.addressType=HighQualityEIP", "anycastIP.anycastZone=ANYCAST_ZONE_GLOBAL",
			"anycastIP.bandwidth=100", "anycastIP.internetChargeType=TRAFFIC_POSTPAID_BY_HOUR",
			"anycastIP.tags.team=edge", "anycastIP.orphan.mode=report",
			"podElasticIP.legacyClusterName=prod", "podElasticIP.awsRateLimitScale=3",
			"podElasticIP.claimableTags[0]=pec-ip-pool", "podElasticIP.claimableTags[1]=tenant={namespace}",
			"podElasticIP.tencentRateLimitScale=2", "podElasticIP.taskPollInterval=500ms",
			"podElasticIP.orphan.mode=off",
			"burstPolicy.legacySwitchTable=LocalOverride", "burstPolicy.rewriteTKEScheduler=false",
			"burstPolicy.scaleWorkloads[0].apiGroup=apps.kruise.io", "burstPolicy.scaleWorkloads[0].resource=clonesets",
			"ingressDaemonSet.healthCheck.bindAddress=0.0.0.0", "ingressDaemonSet.healthCheck.resources.limits.memory=128Mi",
			"ingressDaemonSet.healthCheck.allowedTolerations[0].key=dedicated", "ingressDaemonSet.healthCheck.allowedTolerations[0].operator=Equal",
			"ingressDaemonSet.healthCheck.allowedTolerations[0].value=ingress", "ingressDaemonSet.healthCheck.allowedTolerations[0].effect=NoSchedule",
		},
		"the CNI IPAM plugin on every node": {
			"floatIP.cni.enabled=true", "floatIP.cni.apiServer=https://10.96.0.1:443",
			"floatIP.cni.binDir=/var/lib/cni/bin", "floatIP.cni.tokenRefreshInterval=30s",
			"floatIP.cni.nodeSelector.kubernetes\\.io/os=linux",
		},
		"one replica, some controllers off, no scheduler config": {
			"replicas=1", "podDisruptionBudget.enabled=false", "manager.controllers={*,-burstpolicy}",
			"floatIP.schedulerConfig.enabled=false", "manager.leaderElection.enabled=false",
			"anycastIP.nodeWebhook=false", "anycastIP.translateNodes=false", "podElasticIP.translateAnnotations=false",
		},
		"node taints by MutatingAdmissionPolicy": {"webhook.nodeTaints=policy"},
		"the galaxy API on for one namespace's scripts, scheduler on the host network": {
			"floatIP.api.enabled=true", "floatIP.api.port=9141",
			"networkPolicy.apiFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=ops",
			"networkPolicy.extenderFrom[0].ipBlock.cidr=10.0.0.0/24",
			"floatIP.schedulerConfig.urlPrefix=https://10.96.0.40:9040/v1",
		},
		"cert-manager, galaxy API on, no NetworkPolicy": {"webhook.certMode=cert-manager", "floatIP.api.enabled=true", "networkPolicy.enabled=false"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", "edgeplane", chart, "--namespace", "edgeplane-system"}
			for _, s := range set {
				args = append(args, "--set", s)
			}
			out, err := tl.goTool("helm", args...)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			tl.dryRun(t, out)
			checkManagerArgs(t, out)
			checkCNIInstallArgs(t, out, slices.Contains(set, "floatIP.cni.enabled=true"))
			checkNodeTaints(t, out, slices.Contains(set, "webhook.nodeTaints=policy"))
			checkFloatIPServers(t, out)
			checkNetworkPolicy(t, out, !slices.Contains(set, "networkPolicy.enabled=false"))
		})
	}
}

// checkManagerArgs parses the rendered manager container's arguments with the
// manager's own flag set, so a chart value that renders a flag the binary
// does not know, or a value it rejects, fails here and not in a crash loop.
func checkManagerArgs(t *testing.T, manifests []byte) {
	t.Helper()
	objs, err := manifest.Read("helm template", bytes.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.Object.GetKind() != "Deployment" {
			continue
		}
		dep := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object.Object, dep); err != nil {
			t.Fatal(err)
		}
		for _, c := range dep.Spec.Template.Spec.Containers {
			if c.Name != "manager" {
				continue
			}
			found = true
			all := manager.Controllers()
			opts := manager.DefaultOptions()
			zapOpts := zap.Options{}
			fs := manager.FlagSet("edgeplane-manager", &opts, all, &zapOpts)
			var warnings strings.Builder
			fs.SetOutput(&warnings)
			if err := fs.Parse(c.Args); err != nil {
				t.Fatalf("the manager rejects the chart's arguments %q: %v", c.Args, err)
			}
			if fs.NArg() != 0 {
				t.Errorf("the manager ignores the chart's positional arguments %q", fs.Args())
			}
			if err := opts.Validate(); err != nil {
				t.Errorf("the manager's options from the chart are invalid: %v", err)
			}
			if warnings.Len() > 0 {
				t.Errorf("the chart passes deprecated manager flags: %s", warnings.String())
			}
		}
	}
	if !found {
		t.Fatal("the chart rendered no Deployment with a manager container")
	}
}

// checkNodeTaints checks that selected nodes are tainted at admission by
// either the MutatingAdmissionPolicies (each with its binding) or the Node
// webhooks, never both. Helm's own API versions (helm template without a
// cluster) have no MutatingAdmissionPolicy, so "auto" renders the webhooks.
func checkNodeTaints(t *testing.T, manifests []byte, policies bool) {
	t.Helper()
	count := map[string]int{}
	for _, o := range decode(t, manifests) {
		switch o.GetKind() {
		case "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
			count[o.GetKind()]++
		case "MutatingWebhookConfiguration":
			hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hooks {
				if name, _ := h.(map[string]any)["name"].(string); strings.HasSuffix(name, ".nodes.networking.edgeplane.io") {
					count["node webhook"]++
				}
			}
		}
	}
	if count["MutatingAdmissionPolicy"] != count["MutatingAdmissionPolicyBinding"] {
		t.Errorf("%d MutatingAdmissionPolicies but %d bindings", count["MutatingAdmissionPolicy"], count["MutatingAdmissionPolicyBinding"])
	}
	if policies && (count["MutatingAdmissionPolicy"] != 2 || count["node webhook"] != 0) {
		t.Errorf("webhook.nodeTaints=policy rendered %d node-taint policies and %d Node webhooks, want 2 and 0", count["MutatingAdmissionPolicy"], count["node webhook"])
	}
	if !policies && (count["MutatingAdmissionPolicy"] != 0 || count["node webhook"] == 0) {
		t.Errorf("without MutatingAdmissionPolicy in the cluster the chart rendered %d node-taint policies and %d Node webhooks, want none and the webhooks", count["MutatingAdmissionPolicy"], count["node webhook"])
	}
}

// checkCNIInstallArgs parses the CNI DaemonSet's arguments with the
// install command's own flag set, and checks it runs only when enabled.
func checkCNIInstallArgs(t *testing.T, manifests []byte, enabled bool) {
	t.Helper()
	objs, err := manifest.Read("helm template", bytes.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.Object.GetKind() != "DaemonSet" || !strings.HasSuffix(o.Object.GetName(), "-cni-ipam") {
			continue
		}
		found = true
		ds := &appsv1.DaemonSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object.Object, ds); err != nil {
			t.Fatal(err)
		}
		c := ds.Spec.Template.Spec.Containers[0]
		if len(c.Command) != 2 || c.Command[0] != "/edgeplane-cni-ipam" || c.Command[1] != "install" {
			t.Fatalf("the CNI DaemonSet runs %q, want /edgeplane-cni-ipam install", c.Command)
		}
		var opts install.Options
		fs := flag.NewFlagSet("install", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		opts.BindFlags(fs)
		if err := fs.Parse(c.Args); err != nil || fs.NArg() != 0 {
			t.Fatalf("the installer rejects the chart's arguments %q: %v %v", c.Args, err, fs.Args())
		}
		if err := opts.Complete(func(string) string { return "" }); err != nil {
			t.Errorf("the installer's options from the chart are invalid: %v", err)
		}
		// Each directory the installer writes is a mount; the kubeconfig's
		// is the node's directory of the one path the plugin reads.
		hostPaths := map[string]string{}
		for _, v := range ds.Spec.Template.Spec.Volumes {
			if v.HostPath != nil {
				hostPaths[v.Name] = v.HostPath.Path
			}
		}
		mounted := map[string]string{} // mount path -> host path
		for _, m := range c.VolumeMounts {
			mounted[m.MountPath] = hostPaths[m.Name]
		}
		kubeconfigDir := filepath.Dir(opts.KubeconfigFile())
		if _, ok := mounted[opts.BinDir]; !ok {
			t.Errorf("the installer writes to %s, but the DaemonSet mounts %v", opts.BinDir, c.VolumeMounts)
		}
		if got, want := mounted[kubeconfigDir], filepath.Dir(cniipam.KubeconfigPath); got != want {
			t.Errorf("the installer writes the kubeconfig into %s, which the DaemonSet mounts from the node's %q, want %s (the plugin reads only %s)",
				kubeconfigDir, got, want, cniipam.KubeconfigPath)
		}
	}
	if found != enabled {
		t.Fatalf("CNI DaemonSet rendered: %v, want %v", found, enabled)
	}
}

func TestHelmValuesSchemaRejectsBadValues(t *testing.T) {
	tl := newTools(t)
	for _, set := range []string{
		"manager.logLevel=verbose",
		"manager.controllers={}",
		"manager.kubeAPIQPS=0",
		"webhook.certMode=manual",
		"webhook.nodeTaints=sometimes",
		"floatIP.extenderPort=0",
		"floatIP.schedulerConfig.urlPrefix=edgeplane:9040",
		// The extender serves TLS only.
		"floatIP.schedulerConfig.urlPrefix=http://edgeplane-floatip.edgeplane-system.svc:9040/v1",
		"floatIP.schedulerConfig.certDir=certs",
		"floatIP.apiPort=9041",
		"floatIP.api.enabled=yes",
		"networkPolicy.enabled=maybe",
		"networkPolicy.metricsFrom[0].namespace=monitoring",
		"networkPolicy.apiFrom[0].ipBlock.except[0]=10.0.0.0/8",
		"providerConfigs.aws.credentials.source=Password",
		"notAValue=1",
		"manager.extraArgs={rm -rf /}",
		"anycastIP.addressType=Anycast",
		"anycastIP.nodeSelector=null",
		"anycastIP.orphan.mode=purge",
		"anycastIP.bandwidth=-1",
		"podElasticIP.awsRateLimitScale=0",
		"podElasticIP.tencentRateLimitScale=0",
		"podElasticIP.taskPollInterval=soon",
		"podElasticIP.orphan.interval=5 minutes",
		"podElasticIP.claimableTags[0]==edge",
		"podElasticIP.claimableTags={pool,pool}",
		"tenantEndpoints={ftp://cloudsim:8600}",
		"tenantEndpoints={cloudsim:8600}",
		"tenantEndpoints={http://user@cloudsim:8600}",
		"floatIP.cni.enabled=yes",
		"floatIP.cni.binDir=opt/cni/bin",
		"floatIP.cni.confDir=/etc/cni/net.d",
		"floatIP.cni.apiServer=http://10.96.0.1",
		"floatIP.cni.tokenRefreshInterval=soon",
		"burstPolicy.legacySwitchTable=ChartV1",
		"ingressDaemonSet.healthCheck.bindAddress=anywhere",
		"ingressDaemonSet.healthCheck.allowedTolerations[0].operator=Gt",
		"ingressDaemonSet.healthCheck.allowedTolerations[0].effect=Never",
		"ingressDaemonSet.healthCheck.image=attacker/shell:1",
		"crds.enabled=yes",
		"crds.keep=null",
	} {
		t.Run(set, func(t *testing.T) {
			_, err := tl.goTool("helm", "template", "edgeplane", "charts/edgeplane", "--set", set)
			if err == nil {
				t.Fatalf("helm template --set %s succeeded; the values schema must reject it", set)
			}
			if !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
				t.Errorf("helm template --set %s failed, but not on the schema: %v", set, err)
			}
		})
	}
}
