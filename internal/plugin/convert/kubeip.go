package convert

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	neip "github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/translate"
)

// doitintl/kubeip v2: a DaemonSet of kubeip-agent on the nodes its
// nodeSelector picks, configured by its container's environment (FILTER,
// ORDER_BY, TAINT_KEY). Its job is the NodeElasticIP translator's: the
// DaemonSet becomes the manager's --nodeelasticip-* settings (printed as a
// warning), and every node in the input it serves a NodeElasticIP.

// KubeIPAgent is one kubeip DaemonSet's settings.
type KubeIPAgent struct {
	Name       string
	Selector   labels.Selector
	Allocation networkingv1alpha1.NodeElasticIPAllocation
	TaintKey   string
}

func isKubeIPDaemonSet(u *unstructured.Unstructured) bool {
	if !isKind(u, appsv1.GroupName, "DaemonSet") {
		return false
	}
	_, ok := kubeIPContainer(u)
	return ok
}

// kubeIPContainer is the DaemonSet's kubeip-agent container.
func kubeIPContainer(u *unstructured.Unstructured) (corev1.Container, bool) {
	ds := &appsv1.DaemonSet{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ds) != nil {
		return corev1.Container{}, false
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if strings.Contains(c.Image, "kubeip") {
			return c, true
		}
	}
	return corev1.Container{}, false
}

func convertKubeIPDaemonSet(c *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	ctr, _ := kubeIPContainer(u)
	env := map[string]string{}
	var warns []string
	for _, e := range ctr.Env {
		if e.ValueFrom != nil && (e.Name == neip.EnvFilter || e.Name == neip.EnvOrderBy || e.Name == neip.EnvTaintKey) {
			warns = append(warns, fmt.Sprintf("%s comes from elsewhere (valueFrom): set it by hand", e.Name))
			continue
		}
		env[e.Name] = e.Value
	}
	alloc, err := neip.Pool(env[neip.EnvFilter], env[neip.EnvOrderBy])
	if err != nil {
		return nil, nil, fmt.Errorf("kubeip's %s/%s: %w", neip.EnvFilter, neip.EnvOrderBy, err)
	}
	sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "spec", "nodeSelector")
	if len(sel) == 0 {
		return nil, nil, fmt.Errorf("the DaemonSet has no nodeSelector: edgeplane gives addresses only to the nodes a selector picks")
	}
	c.KubeIP = append(c.KubeIP, KubeIPAgent{Name: u.GetNamespace() + "/" + u.GetName(), Selector: labels.SelectorFromSet(sel),
		Allocation: alloc, TaintKey: env[neip.EnvTaintKey]})
	flags := []string{"--nodeelasticip-node-selector=" + labels.SelectorFromSet(sel).String()}
	if alloc.Pool != nil {
		flags = append(flags, fmt.Sprintf("--nodeelasticip-pool-filter='%s'", neip.FormatFilter(alloc.Pool.Filters)),
			"--nodeelasticip-pool-order-by="+alloc.Pool.OrderBy)
	}
	flags = append(flags, "--nodeelasticip-taint-key="+env[neip.EnvTaintKey])
	warns = append(warns, "edgeplane's NodeElasticIP translator does this DaemonSet's job: run the manager with "+strings.Join(flags, " ")+
		" (chart values nodeElasticIP.*), then remove the DaemonSet; see docs/migration/kubeip.md")
	if env["RELEASE_ON_EXIT"] == "false" {
		warns = append(warns, "RELEASE_ON_EXIT=false has no equivalent: a NodeElasticIP keeps its address while the node exists, whatever happens to the manager")
	}
	return nil, warns, nil
}

// isAWSNode: a node on an EC2 instance (its providerID is aws:///...).
func isAWSNode(u *unstructured.Unstructured) bool {
	if !isKind(u, "", "Node") {
		return false
	}
	id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID")
	return strings.HasPrefix(id, "aws://")
}

// convertKubeIPNode gives a node a kubeip DaemonSet of the input serves a
// NodeElasticIP named after it, as the translator would with the settings
// printed for that DaemonSet (an address kubeip put on the node is adopted
// when it matches the pool's filters).
func convertKubeIPNode(c *Context, u *unstructured.Unstructured) ([]client.Object, []string, error) {
	for _, a := range c.KubeIP {
		if !a.Selector.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		n := &networkingv1alpha1.NodeElasticIP{
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName()},
			Spec:       networkingv1alpha1.NodeElasticIPSpec{NodeName: u.GetName(), Allocation: *a.Allocation.DeepCopy(), TaintKey: a.TaintKey},
		}
		return []client.Object{n}, nil, nil
	}
	return nil, []string{"no kubeip DaemonSet in the input serves this node: nothing to convert"}, nil
}
