package localcluster

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeSpec describes a fake node that kwok runs pods on.
type NodeSpec struct {
	Name string
	// Labels are added to the defaults (kubernetes.io/hostname=<Name>,
	// kubernetes.io/os=linux, kubernetes.io/arch=amd64, type=kwok) and win
	// over them.
	Labels map[string]string
	// Annotations; kwok.x-k8s.io/node=fake is always added so kwok manages
	// the node.
	Annotations map[string]string
	Taints      []corev1.Taint
	// Capacity, also used as allocatable. Zero values mean 8 CPUs, 32Gi of
	// memory and 110 pods.
	CPU    resource.Quantity
	Memory resource.Quantity
	Pods   int64
	// ExtendedResources adds further capacity, e.g. "nvidia.com/gpu": 1.
	ExtendedResources corev1.ResourceList
	ProviderID        string
}

// pollInterval paces every wait in this package: short enough that waits end
// promptly, long enough not to load a busy API server.
const pollInterval = 250 * time.Millisecond

// Object returns the Node that AddNode creates for spec, for callers that
// create many nodes at once with their own (faster) client.
func (spec NodeSpec) Object() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   spec.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		"type":                 "kwok",
	}
	maps.Copy(labels, spec.Labels)
	annotations := maps.Clone(spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[KwokNodeAnnotation] = KwokNodeValue

	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    orDefault(spec.CPU, "8"),
		corev1.ResourceMemory: orDefault(spec.Memory, "32Gi"),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	if spec.Pods > 0 {
		capacity[corev1.ResourcePods] = *resource.NewQuantity(spec.Pods, resource.DecimalSI)
	}
	maps.Copy(capacity, spec.ExtendedResources)

	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: labels, Annotations: annotations},
		Spec:       corev1.NodeSpec{Taints: spec.Taints, ProviderID: spec.ProviderID},
		// Nodes are the one kind whose status is kept on create, so capacity
		// is in place before kwok initialises the node (kwok keeps what it
		// finds and would otherwise fill in 1000 CPUs).
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}
}

func orDefault(q resource.Quantity, def string) resource.Quantity {
	if q.IsZero() {
		return resource.MustParse(def)
	}
	return q
}

// AddNode creates a node for kwok to manage. It does not wait for the node to
// be Ready; see WaitNodeReady.
func (c *Cluster) AddNode(ctx context.Context, spec NodeSpec) error {
	if spec.Name == "" {
		return fmt.Errorf("adding node: NodeSpec.Name is empty")
	}
	if err := c.client.Create(ctx, spec.Object()); err != nil {
		return fmt.Errorf("creating node %s: %w", spec.Name, err)
	}
	c.log.Info("node added", "node", spec.Name)
	return nil
}

// WaitNodeReady waits until the node reports Ready and the controller
// manager has removed the node.kubernetes.io/not-ready taint the API server
// put on it, i.e. until the scheduler will place pods there. Without the
// controller manager nothing removes that taint, so only the Ready condition
// is waited for.
func (c *Cluster) WaitNodeReady(ctx context.Context, name string) error {
	untaintRequired := !c.opts.DisableControllerManager
	var state string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		var node corev1.Node
		if err := c.client.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			state = err.Error()
			return false, nil
		}
		ready, tainted := nodeReadiness(&node)
		state = fmt.Sprintf("Ready=%v, not-ready taint present=%v", ready, tainted)
		return ready && !(tainted && untaintRequired), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be ready (%s): %w", name, state, err)
	}
	return nil
}

// nodeReadiness reports whether the node's Ready condition is True and
// whether it still carries the not-ready taint.
func nodeReadiness(node *corev1.Node) (ready, notReadyTaint bool) {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			notReadyTaint = true
		}
	}
	return ready, notReadyTaint
}

// DeleteNode deletes a node and waits until it is gone, so a node of the same
// name can be added again right away. Deleting a missing node is not an
// error. Pods bound to it are cleaned up by the controller manager.
func (c *Cluster) DeleteNode(ctx context.Context, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.client.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting node %s: %w", name, err)
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		err := c.client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be deleted: %w", name, err)
	}
	return nil
}
