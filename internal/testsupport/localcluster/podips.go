package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// warmupPodName names the pod warmPodIPs runs and deletes.
const warmupPodName = "localcluster-pod-ip-warmup"

// warmPodIPs gives one pod an IP, and deletes it, before any test pod
// exists. kwok (v0.8) creates its pod IP pool on first use without a lock
// (ipPool: Load, then Store): two pods rendered at the same moment each
// create a pool and both get the pool's first address. Real clusters never
// hand one IP to two pods, and the clouds (and their emulator) refuse a
// second address on one private IP, so the tests must not see that either.
// After one pod has drawn an IP, every later pod uses the stored pool.
// The deleted pod's IP goes back to the pool.
func (c *Cluster) warmPodIPs(ctx context.Context, node string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: warmupPodName},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:                   []corev1.Container{{Name: "warmup", Image: "warmup"}},
		},
	}
	if err := c.client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating the pod-IP warm-up pod: %w", err)
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, nil
		}
		return pod.Status.PodIP != "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the pod-IP warm-up pod on %s to get an IP: %w", node, err)
	}
	if err := c.client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pod-IP warm-up pod: %w", err)
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		err := c.client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the pod-IP warm-up pod to be deleted: %w", err)
	}
	return nil
}
