package podelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// podMarks are what the pod carries while its address is associated: the
// legacy controller's labels, edgeplane's public-ip annotation and, when
// the pod lists the readiness gate, the pod condition.
type podMarks struct {
	labels     map[string]string
	annotation string
	ready      bool
}

// equal reports whether m and o put the same marks on a pod.
func (m podMarks) equal(o podMarks) bool {
	return maps.Equal(m.labels, o.labels) && m.annotation == o.annotation && m.ready == o.ready
}

// wantMarks computes the marks for an address (associated with the pod's
// IP, or not).
func wantMarks(cr *networkingv1alpha1.PodElasticIP, a decide.Address, podIP string) podMarks {
	if !a.Associated() || podIP == "" || a.PrivateIPAddress != podIP {
		return podMarks{}
	}
	return podMarks{labels: translate.Labels(cr.Spec.Allocation, a.PublicIP), annotation: a.PublicIP, ready: true}
}

// syncPod brings the pod's marks in line with the address.
func (e *external) syncPod(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a decide.Address) error {
	if e.pod == nil || e.pod.DeletionTimestamp != nil {
		return nil
	}
	return e.conn.markPod(ctx, e.pod, cr, wantMarks(cr, a, e.ps.IP))
}

// unlabelPod removes the marks (the address is going away).
func (e *external) unlabelPod(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) error {
	if e.pod == nil {
		return nil
	}
	return e.conn.markPod(ctx, e.pod, cr, podMarks{})
}

// markPod patches labels and annotation (one merge patch, only when they
// differ) and the readiness condition (status patch, only for pods that
// list the gate). It emits the legacy controller's pod events on change.
func (c *connector) markPod(ctx context.Context, pod *corev1.Pod, cr *networkingv1alpha1.PodElasticIP, want podMarks) error {
	if done, verdict := c.marked.Check(pod.UID, pod.ResourceVersion); verdict == expect.Behind && done.equal(want) {
		// The cached pod predates this process's own write of these marks.
		return nil
	}
	// Every version this pass saw or wrote before the last: a cached copy
	// at any of them predates the marks.
	versions := []string{pod.ResourceVersion}
	defer func() {
		if pod.ResourceVersion != versions[0] {
			c.marked.Record(pod.UID, want, pod.ResourceVersion, versions...)
		}
	}()
	before := pod.DeepCopy()
	labels := maps.Clone(pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range translate.AllLabels {
		if v, ok := want.labels[k]; ok {
			labels[k] = v
		} else {
			delete(labels, k)
		}
	}
	anns := maps.Clone(pod.Annotations)
	if anns == nil {
		anns = map[string]string{}
	}
	if want.annotation != "" {
		anns[networkingv1alpha1.AnnotationPodPublicIP] = want.annotation
	} else {
		delete(anns, networkingv1alpha1.AnnotationPodPublicIP)
	}
	hadIP := pod.Annotations[networkingv1alpha1.AnnotationPodPublicIP]
	if !maps.Equal(labels, nonNil(pod.Labels)) || !maps.Equal(anns, nonNil(pod.Annotations)) {
		pod.Labels, pod.Annotations = labels, anns
		if err := c.kube.Patch(ctx, pod, client.MergeFrom(before)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("labelling pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		versions = append(versions, pod.ResourceVersion)
		switch {
		case want.annotation != "" && hadIP != want.annotation:
			c.podEvent(pod, cr, corev1.EventTypeNormal, reasonLegacyAssoc, fmt.Sprintf("Associated Elastic IP %s", want.annotation))
		case want.annotation == "" && hadIP != "":
			c.podEvent(pod, cr, corev1.EventTypeNormal, reasonLegacyDisassoc, fmt.Sprintf("Disassociated Elastic IP %s", hadIP))
		}
	}
	if !slices.ContainsFunc(pod.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool {
		return g.ConditionType == networkingv1alpha1.PodConditionElasticIPReady
	}) {
		return nil
	}
	status, reason, msg := corev1.ConditionFalse, "NotAssociated", "the pod's Elastic IP is not associated"
	if want.ready {
		status, reason, msg = corev1.ConditionTrue, "Associated", "Elastic IP "+want.annotation+" is associated"
	}
	i := slices.IndexFunc(pod.Status.Conditions, func(pc corev1.PodCondition) bool {
		return pc.Type == networkingv1alpha1.PodConditionElasticIPReady
	})
	if i >= 0 && pod.Status.Conditions[i].Status == status && pod.Status.Conditions[i].Reason == reason {
		return nil
	}
	beforeStatus := pod.DeepCopy()
	cond := corev1.PodCondition{Type: networkingv1alpha1.PodConditionElasticIPReady, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.Now()}
	if i >= 0 {
		pod.Status.Conditions[i] = cond
	} else {
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
	}
	// A strategic merge patch names only this condition (conditions merge
	// by type): a JSON merge patch would replace the whole list with the
	// cached pod's, which keeps no condition but the readiness gates'
	// (internal/manager/cache.go), and drop the kubelet's.
	if err := c.kube.Status().Patch(ctx, pod, client.StrategicMergeFrom(beforeStatus)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("setting the %s condition of pod %s/%s: %w", networkingv1alpha1.PodConditionElasticIPReady, pod.Namespace, pod.Name, err)
	}
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// event records an event on the PodElasticIP (related: the pod).
func (c *connector) event(cr *networkingv1alpha1.PodElasticIP, pod *corev1.Pod, typ, reason, action, note string, args ...any) {
	if c.rec == nil {
		return
	}
	var related runtime.Object
	if pod != nil {
		related = pod
	}
	c.rec.Eventf(cr, related, typ, reason, action, note, args...)
}

// podEvent records an event on the pod (related: the PodElasticIP).
func (c *connector) podEvent(pod *corev1.Pod, cr *networkingv1alpha1.PodElasticIP, typ, reason, note string) {
	if c.rec == nil || pod == nil {
		return
	}
	c.rec.Eventf(pod, cr, typ, reason, "Associate", "%s", note)
}
