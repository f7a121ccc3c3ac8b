package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateNamespace creates a namespace (an existing one is fine) and, when the
// controller manager runs, waits for its default ServiceAccount: until that
// exists the API server rejects pods created directly in the namespace.
// Controllers retry, so Deployments would get there anyway; tests that create
// bare pods would not.
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	if c.opts.DisableControllerManager {
		return nil
	}
	return c.WaitServiceAccount(ctx, name, "default")
}

// WaitServiceAccount waits until the ServiceAccount namespace/name exists.
func (c *Cluster) WaitServiceAccount(ctx context.Context, namespace, name string) error {
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		lastErr = c.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ServiceAccount{})
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for ServiceAccount %s/%s (last error: %w): %w", namespace, name, lastErr, err)
	}
	return nil
}
