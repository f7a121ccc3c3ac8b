package ingressdaemonset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/decide"
)

// scope is what one pass knows about one IngressDaemonSet.
type scope struct {
	ids *appsv1alpha1.IngressDaemonSet
	// revision is the update revision (set by observe).
	revision string
	// nodes are all nodes by name (set by observe).
	nodes map[string]*corev1.Node
	// matching are the names of the nodes that should run replicas (set by observe).
	matching []string
	// deployments are the owned Deployments of matching nodes by node name;
	// updated as the pass writes them.
	deployments map[string]*appsv1.Deployment
	// stray are owned Deployments whose node is gone or no longer matches (set by observe).
	stray []*appsv1.Deployment
	// plan is the pass's plan (set by reconcileNodes).
	plan decide.Plan
	// reattached are the nodes this pass reattached (shown as Reattaching
	// in this pass's status).
	reattached map[string]bool
	// stale is set by observe when the cache does not show this process's
	// own latest writes to the Deployments yet: nothing may be planned.
	stale bool
	// requeueAt is when the plan's earliest wait ends (zero: none).
	requeueAt time.Time
	// problems and degradedReason feed the Degraded condition.
	problems       []string
	degradedReason string
}

func (s *scope) problem(reason, msg string) {
	if s.degradedReason == "" {
		s.degradedReason = reason
	}
	s.problems = append(s.problems, msg)
}

func (s *scope) observation() observation {
	return observation{revision: s.revision, nodes: s.matching, deployments: s.deployments, plan: s.plan,
		reattached: s.reattached, problems: s.problems, degradedReason: s.degradedReason}
}

// observe reads the nodes and the owned Deployments (from the cache), and
// checks that the cache shows this process's own writes: the rollout budget
// must never be computed from a stale view of the phases it just wrote.
func (r *Reconciler) observe(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) (*scope, error) {
	s := &scope{ids: ids, revision: Revision(ids.Spec.Template), nodes: map[string]*corev1.Node{},
		deployments: map[string]*appsv1.Deployment{}, reattached: map[string]bool{}}
	// Only the nodes the selectors match (those are all the rollout reads:
	// a Deployment on any other node is stray, as on a missing one). A copy
	// of every node per pass was 15 MB at 5,000 nodes, read on every status
	// change of every per-node Deployment.
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: nodeSelector(ids)}); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		s.nodes[n.Name] = n
		if NodeMatches(ids, n) {
			s.matching = append(s.matching, n.Name)
		}
	}
	slices.Sort(s.matching)
	deps, err := r.ownedDeployments(ctx, ids)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*appsv1.Deployment, len(deps))
	for _, d := range deps {
		byName[d.Name] = d
	}
	if !r.expectations().satisfied(ids.Namespace, ids.Name, byName) {
		s.stale = true
		return s, nil
	}
	for _, d := range deps {
		node := d.Annotations[appsv1alpha1.AnnotationNode]
		if n, ok := s.nodes[node]; !ok || !NodeMatches(ids, n) || s.deployments[node] != nil {
			s.stray = append(s.stray, d)
			continue
		}
		s.deployments[node] = r.settled(d)
	}
	return s, nil
}

// plannerNodes turns the observed nodes into the planner's input.
func (s *scope) plannerNodes() []decide.Node {
	ru := s.ids.Spec.UpdateStrategy.RollingUpdate
	var tsKey string
	if ru != nil && ru.WaitForDetachmentByAnnotatedTimestamp != nil {
		tsKey = ru.WaitForDetachmentByAnnotatedTimestamp.Key
	}
	out := make([]decide.Node, 0, len(s.matching))
	for _, name := range s.matching {
		n := decide.Node{Name: name}
		if d, ok := s.deployments[name]; ok {
			n.HasDeployment = true
			n.Revision = d.Annotations[appsv1alpha1.AnnotationRevision]
			n.Phase = phaseOf(d)
			n.Available = DeploymentAvailable(d)
			n.RolledOut = DeploymentRolledOut(d)
			n.StatusStale = !DeploymentStatusCurrent(d)
			n.PartlyReady = DeploymentPartlyReady(d)
			if t, err := decide.ParseMillis(d.Labels[appsv1alpha1.LabelDetachStartedAt]); err == nil {
				n.DetachStartedAt = t
			}
		}
		if tsKey != "" {
			n.DetachmentTimestamp, n.HasDetachmentTimestamp = s.nodes[name].Annotations[tsKey]
		}
		out = append(out, n)
	}
	return out
}

func setPhase(d *appsv1.Deployment, phase appsv1alpha1.NodePhase) {
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if phase == appsv1alpha1.NodePhaseReady {
		delete(d.Labels, appsv1alpha1.LabelPhase)
		delete(d.Labels, appsv1alpha1.LabelDetachStartedAt)
		return
	}
	d.Labels[appsv1alpha1.LabelPhase] = string(phase)
}

// reconcileNodes removes Deployments of nodes that left, plans the rollout
// and executes the plan. Every node is attempted; errors are joined.
func (r *Reconciler) reconcileNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	var errs []error
	for _, d := range s.stray {
		errs = append(errs, r.removeNode(ctx, s, d))
	}
	now := r.now()
	s.plan = decide.Compute(s.plannerNodes(), decide.ParamsFrom(s.ids.Spec.UpdateStrategy.RollingUpdate, s.revision, now))
	for node, msg := range s.plan.InvalidTimestamps {
		s.problem(appsv1alpha1.ReasonInvalidDetachmentTimestamp, "node "+node+": "+msg)
	}
	if s.plan.RequeueAfter > 0 {
		s.requeueAt = now.Add(s.plan.RequeueAfter)
	}
	stepped := map[string]bool{}
	for _, step := range executionOrder(s.plan.Steps) {
		stepped[step.Node] = true
		if err := r.execute(ctx, s, step); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %s: %w", step.Node, step.Action, err))
		}
	}
	// Nodes without a step: keep replicas, strategy and labels in sync (this
	// is not a rollout), and keep a detaching node's annotation in place
	// (it may have failed, or the manager restarted, after the phase was written).
	for _, name := range s.matching {
		d, ok := s.deployments[name]
		if !ok || stepped[name] {
			continue
		}
		if phaseOf(d) == appsv1alpha1.NodePhaseDetaching {
			if err := r.annotateNode(ctx, s, name, d); err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", name, err))
			}
		}
		if r.synced.known(s.ids, d) {
			continue
		}
		nd := d.DeepCopy()
		if syncDeployment(s.ids, nd, name, s.revision, false) {
			errs = append(errs, r.updateDeployment(ctx, s, name, nd))
		} else {
			r.synced.remember(s.ids, d)
		}
	}
	return ctrl.Result{RequeueAfter: s.plan.RequeueAfter}, errors.Join(errs...)
}

// executionOrder orders a pass's steps so that the nodes leaving the
// rollout leave it before others enter it: reattachments first, then
// updates, creations and, last, detachments (each group in node-name
// order). The planner may free a node's place in the budget and give it to
// another node in the same pass; were the newcomer written first, for a
// moment one node more than the budget would be detached.
func executionOrder(steps []decide.Step) []decide.Step {
	rank := map[decide.Action]int{decide.Reattach: 0, decide.Finish: 0, decide.Update: 1, decide.Create: 2, decide.Detach: 3}
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(a, b decide.Step) int { return rank[a.Action] - rank[b.Action] })
	return out
}

// updateDeployment applies the owned fields of d, node's Deployment as this
// pass wants it.
func (r *Reconciler) updateDeployment(ctx context.Context, s *scope, node string, d *appsv1.Deployment) error {
	prev := s.deployments[node]
	var existing client.Object
	if prev != nil {
		existing = prev
	}
	live := ownedDeployment(s.ids, d)
	if err := r.applyObject(ctx, s.ids, live, existing); err != nil {
		return err
	}
	r.wroteMetadata(prev, live)
	r.expectations().wrote(s.ids.Name, d)
	s.deployments[node] = d
	return nil
}

// execute runs one planned step.
func (r *Reconciler) execute(ctx context.Context, s *scope, step decide.Step) error {
	ru := s.ids.Spec.UpdateStrategy.RollingUpdate
	if ru == nil {
		ru = &appsv1alpha1.RollingUpdate{}
	}
	if step.Action == decide.Create {
		d := newDeployment(s.ids, step.Node, s.revision)
		// Apply would take over a Deployment someone else made: only one
		// the cache does not know is created. (The node's own Deployment is
		// never planned for creation: observe found it.)
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})
		switch {
		case err == nil:
			msg := fmt.Sprintf("Deployment %s for node %s exists and is not controlled by this IngressDaemonSet", d.Name, step.Node)
			s.problem(appsv1alpha1.ReasonDeploymentConflict, msg)
			r.event(s.ids, nil, corev1.EventTypeWarning, appsv1alpha1.EventDeploymentConflict, "Create", msg)
			return nil
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("getting Deployment %s: %w", d.Name, err)
		}
		if err := r.applyObject(ctx, s.ids, ownedDeployment(s.ids, d), nil); err != nil {
			return err
		}
		r.expectations().wrote(s.ids.Name, d)
		s.deployments[step.Node] = d
		r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeAdded, "Create",
			fmt.Sprintf("Created Deployment %s for node %s at revision %s", d.Name, step.Node, s.revision))
		return nil
	}

	d := s.deployments[step.Node].DeepCopy()
	switch step.Action {
	case decide.Detach:
		setPhase(d, appsv1alpha1.NodePhaseDetaching)
		// The grace period runs from this write, not from the start of the
		// pass: the steps before it (other nodes' writes) take time, and the
		// node only fails its health check once this write lands.
		d.Labels[appsv1alpha1.LabelDetachStartedAt] = strconv.FormatInt(r.now().UnixMilli(), 10)
		if a := ru.AnnotateDeploymentToDetach; a != nil {
			d.Annotations[a.Key] = a.Value
			d.Annotations[appsv1alpha1.AnnotationDeploymentDetachKey] = a.Key
		}
		if a := ru.AnnotateNodeToDetach; a != nil {
			d.Annotations[appsv1alpha1.AnnotationNodeDetachKeys] = a.Key
		}
		syncDeployment(s.ids, d, step.Node, s.revision, false)
		if err := r.updateDeployment(ctx, s, step.Node, d); err != nil {
			return err
		}
		if err := r.annotateNode(ctx, s, step.Node, d); err != nil {
			return err
		}
		r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeDetaching, "Detach",
			fmt.Sprintf("Detaching node %s before updating it to revision %s", step.Node, s.revision))
	case decide.Update:
		setPhase(d, appsv1alpha1.NodePhaseUpdating)
		syncDeployment(s.ids, d, step.Node, s.revision, true)
		if err := r.updateDeployment(ctx, s, step.Node, d); err != nil {
			return err
		}
		r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeUpdating, "Update",
			fmt.Sprintf("Updating node %s to revision %s", step.Node, s.revision))
	case decide.Reattach:
		if err := r.removeNodeDetachAnnotations(ctx, d); err != nil {
			return err
		}
		if key := d.Annotations[appsv1alpha1.AnnotationDeploymentDetachKey]; key != "" {
			delete(d.Annotations, key)
		}
		delete(d.Annotations, appsv1alpha1.AnnotationDeploymentDetachKey)
		delete(d.Annotations, appsv1alpha1.AnnotationNodeDetachKeys)
		// Every replica is updated and ready: the node serves again as
		// soon as the phase is gone, so both go in one write.
		setPhase(d, appsv1alpha1.NodePhaseReady)
		syncDeployment(s.ids, d, step.Node, s.revision, false)
		if err := r.updateDeployment(ctx, s, step.Node, d); err != nil {
			return err
		}
		s.reattached[step.Node] = true
		r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeReattached, "Reattach",
			fmt.Sprintf("Node %s runs revision %s with every replica ready; reattached", step.Node, d.Annotations[appsv1alpha1.AnnotationRevision]))
	case decide.Finish:
		setPhase(d, appsv1alpha1.NodePhaseReady)
		syncDeployment(s.ids, d, step.Node, s.revision, false)
		if err := r.updateDeployment(ctx, s, step.Node, d); err != nil {
			return err
		}
		r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeReattached, "Reattach",
			fmt.Sprintf("Node %s is reattached", step.Node))
	}
	return nil
}

// annotateNode puts annotateNodeToDetach on node, if configured and missing.
func (r *Reconciler) annotateNode(ctx context.Context, s *scope, name string, d *appsv1.Deployment) error {
	ru := s.ids.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.AnnotateNodeToDetach == nil || d.Annotations[appsv1alpha1.AnnotationNodeDetachKeys] == "" {
		return nil
	}
	a := ru.AnnotateNodeToDetach
	node, ok := s.nodes[name]
	if !ok {
		return nil
	}
	if v, ok := node.Annotations[a.Key]; ok && v == a.Value {
		return nil
	}
	patch := client.MergeFrom(node.DeepCopy())
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[a.Key] = a.Value
	if err := r.Client.Patch(ctx, node, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("annotating node %s: %w", name, err))
	}
	return nil
}

// removeNodeDetachAnnotations removes from d's node the annotations the rollout put there.
func (r *Reconciler) removeNodeDetachAnnotations(ctx context.Context, d *appsv1.Deployment) error {
	keys := d.Annotations[appsv1alpha1.AnnotationNodeDetachKeys]
	name := d.Annotations[appsv1alpha1.AnnotationNode]
	if keys == "" || name == "" {
		return nil
	}
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("getting node %s: %w", name, err))
	}
	patch := client.MergeFrom(node.DeepCopy())
	changed := false
	for _, k := range strings.Split(keys, ",") {
		if _, ok := node.Annotations[k]; ok {
			delete(node.Annotations, k)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := r.Client.Patch(ctx, node, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing detach annotations from node %s: %w", name, err))
	}
	return nil
}

// removeNode deletes the Deployment of a node that left or no longer matches.
func (r *Reconciler) removeNode(ctx context.Context, s *scope, d *appsv1.Deployment) error {
	if err := r.removeNodeDetachAnnotations(ctx, d); err != nil {
		return err
	}
	if err := r.Client.Delete(ctx, d); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Deployment %s: %w", d.Name, err)
	}
	r.expectations().deleted(s.ids.Name, client.ObjectKeyFromObject(d))
	r.event(s.ids, d, corev1.EventTypeNormal, appsv1alpha1.EventNodeRemoved, "Delete",
		fmt.Sprintf("Deleted Deployment %s: node %s is gone or no longer matches", d.Name, d.Annotations[appsv1alpha1.AnnotationNode]))
	return nil
}

func (r *Reconciler) event(regarding, related client.Object, eventType, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(regarding, related, eventType, reason, action, "%s", note)
}
