package burstpolicy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// Event reasons and actions on pods and policies (the NotBurstable* reasons
// of the API package are used as they are).
const (
	// EventReasonBurst: a pod got the virtual-node tolerations.
	EventReasonBurst = "Burst"
	actionBurst      = "Burst"
)

// podStates turns the governed pods into decide.PodStates, skipping pods
// that are terminating or finished. It returns the live pods by name too,
// and whether each node a live pod is bound to is virtual (a missing node
// is local).
func (r *Reconciler) podStates(ctx context.Context, p *schedulingv1alpha1.BurstPolicy, pods []*corev1.Pod, restr decide.Restrictions) (states []decide.PodState, live map[string]*corev1.Pod, virtualNodes map[string]bool, err error) {
	virtualSel := decide.VirtualNodeSelector(p.Spec.VirtualNodes)
	tolerations := decide.VirtualNodeTolerations(p.Spec.VirtualNodes)
	nodes := map[string]bool{} // node name → virtual
	claims := map[string]decide.Claim{}
	states = make([]decide.PodState, 0, len(pods))
	live = make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		if !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		live[pod.Name] = pod
		s := decide.PodState{
			Name:               pod.Name,
			Revision:           revision(pod),
			Created:            pod.CreationTimestamp.Time,
			Burst:              len(decide.MissingTolerations(pod.Spec.Tolerations, tolerations)) == 0,
			UnschedulableSince: unschedulableSince(pod),
			Gated:              hasGate(pod),
		}
		switch {
		case pod.Spec.NodeName == "":
			s.Placement = decide.Pending
		default:
			virtual, ok := nodes[pod.Spec.NodeName]
			if !ok {
				node := &corev1.Node{}
				err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node)
				switch {
				case err == nil:
					virtual = decide.IsVirtualNode(node.Labels, virtualSel)
				case !apierrors.IsNotFound(err):
					return nil, nil, nil, fmt.Errorf("getting node %s: %w", pod.Spec.NodeName, err)
				}
				nodes[pod.Spec.NodeName] = virtual
			}
			s.Placement = decide.Local
			if virtual {
				s.Placement = decide.Virtual
			}
		}
		if s.Placement == decide.Pending && !s.Burst {
			if err := loadClaims(ctx, r.Reader, pod, claims); err != nil {
				return nil, nil, nil, err
			}
			s.Refusal = decide.MayBurst(pod, restr, claims)
		}
		states = append(states, s)
	}
	return states, live, nodes, nil
}

// revision returns the pod's template revision label.
func revision(pod *corev1.Pod) string {
	if h := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
		return h
	}
	return pod.Labels[appsv1.ControllerRevisionHashLabelKey]
}

// unschedulableSince returns when the scheduler reported the pod
// unschedulable, or the zero time.
func unschedulableSince(pod *corev1.Pod) (since time.Time) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time
		}
	}
	return since
}

// loadClaims reads what MayBurst needs about the pod's claims into claims.
// Claims, volumes and classes are read uncached and only for pending pods
// that use claims, so the manager does not cache every claim of the cluster.
func loadClaims(ctx context.Context, reader client.Reader, pod *corev1.Pod, claims map[string]decide.Claim) error {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		if _, done := claims[name]; done {
			continue
		}
		var c decide.Claim
		pvc := &corev1.PersistentVolumeClaim{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, pvc)
		switch {
		case apierrors.IsNotFound(err):
			claims[name] = c
			continue
		case err != nil:
			return fmt.Errorf("getting claim %s/%s: %w", pod.Namespace, name, err)
		}
		if pvc.Spec.VolumeName != "" {
			pv := &corev1.PersistentVolume{}
			switch err := reader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); {
			case err == nil:
				c.PV = pv
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("getting volume %s: %w", pvc.Spec.VolumeName, err)
			}
		}
		if c.PV == nil && pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName != "" {
			sc := &storagev1.StorageClass{}
			switch err := reader.Get(ctx, client.ObjectKey{Name: *pvc.Spec.StorageClassName}, sc); {
			case err == nil:
				c.Provisioner = sc.Provisioner
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("getting storage class %s: %w", *pvc.Spec.StorageClassName, err)
			}
		}
		claims[name] = c
	}
	return nil
}

// podEvent is an Event to emit on a pod once its change is written.
type podEvent struct{ eventType, reason, note string }

// podWrite is every change one pass makes to one pod, written as one patch.
type podWrite struct {
	pod    *corev1.Pod
	steps  []func(*corev1.Pod)
	events []podEvent
}

// applyPlan writes the plan to the pods: bursts (tolerations, and for gated
// pods the virtual-node selector and the gate's removal), ungating,
// not-burstable marks and deletion costs. A switched-off policy reverts the
// deletion costs and burst marks it wrote. virtualNodes is podStates'
// answer.
func (r *Reconciler) applyPlan(ctx context.Context, p *schedulingv1alpha1.BurstPolicy, live map[string]*corev1.Pod, virtualNodes map[string]bool, plan decide.Plan, switchedOff bool) error {
	tolerations := decide.VirtualNodeTolerations(p.Spec.VirtualNodes)
	virtualSel := decide.VirtualNodeSelector(p.Spec.VirtualNodes)
	writes := map[string]*podWrite{}
	add := func(pod *corev1.Pod, step func(*corev1.Pod), ev *podEvent) {
		w := writes[pod.Name]
		if w == nil {
			w = &podWrite{pod: pod}
			writes[pod.Name] = w
		}
		w.steps = append(w.steps, step)
		if ev != nil {
			w.events = append(w.events, *ev)
		}
	}

	burst := map[string]bool{}
	for _, name := range plan.Burst {
		pod := live[name]
		if pod == nil {
			continue
		}
		burst[name] = true
		note := fmt.Sprintf("Added the virtual-node tolerations: BurstPolicy %s keeps %d replicas local", p.Name, p.Spec.LocalReplicas)
		if hasGate(pod) && decide.CanPin(pod.Spec.NodeSelector, virtualSel) {
			note = fmt.Sprintf("Pinned to virtual nodes: BurstPolicy %s keeps %d replicas local", p.Name, p.Spec.LocalReplicas)
		}
		add(pod, func(q *corev1.Pod) {
			q.Spec.Tolerations = append(q.Spec.Tolerations, decide.MissingTolerations(q.Spec.Tolerations, tolerations)...)
			if hasGate(q) {
				// A gated pod's node selector may still be extended.
				if decide.CanPin(q.Spec.NodeSelector, virtualSel) {
					if q.Spec.NodeSelector == nil {
						q.Spec.NodeSelector = map[string]string{}
					}
					maps.Copy(q.Spec.NodeSelector, virtualSel)
				}
				removeGate(q)
			}
			setLabel(q, schedulingv1alpha1.LabelBurst, "true")
			setAnnotation(q, schedulingv1alpha1.AnnotationBurstPolicy, p.Name)
			delete(q.Annotations, schedulingv1alpha1.AnnotationNotBurstable)
		}, &podEvent{corev1.EventTypeNormal, EventReasonBurst, note})
	}
	for _, name := range plan.Ungate {
		if pod := live[name]; pod != nil {
			add(pod, removeGate, nil)
		}
	}

	refused := map[string]schedulingv1alpha1.NonBurstablePod{}
	for _, nb := range plan.NonBurstable {
		refused[nb.Name] = nb
	}
	for name, pod := range live {
		if burst[name] {
			continue
		}
		nb, isRefused := refused[name]
		current, marked := pod.Annotations[schedulingv1alpha1.AnnotationNotBurstable]
		switch {
		case isRefused && current != nb.Reason:
			add(pod, func(q *corev1.Pod) { setAnnotation(q, schedulingv1alpha1.AnnotationNotBurstable, nb.Reason) },
				&podEvent{corev1.EventTypeWarning, nb.Reason, fmt.Sprintf("May not burst to virtual nodes (BurstPolicy %s): %s", p.Name, nb.Message)})
		case !isRefused && marked:
			add(pod, func(q *corev1.Pod) { delete(q.Annotations, schedulingv1alpha1.AnnotationNotBurstable) }, nil)
		}
		if switchedOff {
			// Back to plain behaviour: no deletion cost, no burst marks; the
			// not-burstable reason of a pending pod stays (it says why).
			if m := decide.RevertMarks(pod.Labels, pod.Annotations, true); !m.Empty() {
				add(pod, func(q *corev1.Pod) { removeMarks(q, m) }, nil)
			}
			continue
		}
		if pod.Spec.NodeName == "" {
			continue
		}
		placement := decide.Local
		if virtualNodes[pod.Spec.NodeName] {
			placement = decide.Virtual
		}
		cur, has := pod.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]
		// A cost the cluster-wide mode wrote before this policy selected
		// the pod is adopted.
		setBy := pod.Annotations[schedulingv1alpha1.AnnotationDeletionCostSetBy]
		ours := setBy == p.Name || setBy == schedulingv1alpha1.ClusterWideBurstMark
		want, write, remove := decide.DeletionCost(placement, p.Spec.ScaleIn, cur, has, ours)
		switch {
		case write:
			add(pod, func(q *corev1.Pod) {
				setAnnotation(q, schedulingv1alpha1.AnnotationPodDeletionCost, want)
				setAnnotation(q, schedulingv1alpha1.AnnotationDeletionCostSetBy, p.Name)
			}, nil)
		case remove:
			add(pod, func(q *corev1.Pod) {
				delete(q.Annotations, schedulingv1alpha1.AnnotationPodDeletionCost)
				delete(q.Annotations, schedulingv1alpha1.AnnotationDeletionCostSetBy)
			}, nil)
		}
	}

	list := make([]*podWrite, 0, len(writes))
	for _, w := range writes {
		list = append(list, w)
	}
	err := r.writePods(ctx, client.ObjectKeyFromObject(p), list)
	if len(plan.Burst) > 0 && r.Recorder != nil {
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, EventReasonBurst, actionBurst, "Burst %d pods to virtual nodes: %s", len(plan.Burst), strings.Join(plan.Burst, ", "))
	}
	return err
}

// hasGate reports whether the pod carries the burst-decision gate.
func hasGate(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == schedulingv1alpha1.SchedulingGateBurst })
}

// removeGate removes the burst-decision gate.
func removeGate(p *corev1.Pod) {
	p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == schedulingv1alpha1.SchedulingGateBurst })
}

// writePods hands the writes to the background writer, oldest
// unschedulable pod first, and returns at once; each is a merge patch with
// optimistic locking and an expectation from the moment it is planned (see
// freshPods). The writer reconciles the policy again when the last write of
// it lands or one fails.
func (r *Reconciler) writePods(ctx context.Context, policy types.NamespacedName, writes []*podWrite) error {
	if len(writes) == 0 {
		return nil
	}
	slices.SortFunc(writes, func(a, b *podWrite) int {
		if c := unschedulableSince(a.pod).Compare(unschedulableSince(b.pod)); c != 0 {
			return c
		}
		return strings.Compare(a.pod.Name, b.pod.Name)
	})
	jobs := make([]writeJob, 0, len(writes))
	for _, w := range writes {
		q := w.pod.DeepCopy()
		for _, step := range w.steps {
			step(q)
		}
		jobs = append(jobs, writeJob{policy: policy, w: w, want: q, exp: r.freshPods().expect(w.pod, q)})
	}
	r.writer.queued(policy, len(jobs))
	for i, j := range jobs {
		select {
		case r.writer.jobs <- j:
		case <-ctx.Done():
			r.writer.queued(policy, -len(jobs[i:]))
			for _, rest := range jobs[i:] {
				r.freshPods().failed(rest.w.pod.UID, rest.exp)
			}
			return fmt.Errorf("queueing pod writes: %w", ctx.Err())
		}
	}
	return nil
}

func setLabel(p *corev1.Pod, k, v string) {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
}

func setAnnotation(p *corev1.Pod, k, v string) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
}
