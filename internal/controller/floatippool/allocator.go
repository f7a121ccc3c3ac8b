package floatippool

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// Filter failure messages; the first words match galaxy's, so scripts that
// grep scheduler events keep working.
const (
	msgUnknownNode  = "FloatIPPlugin:UnknowNode: node has no InternalIP"
	msgNoConfigNode = "FloatIPPlugin:NoFIPConfigNode: no FloatIPPool lists this node's subnet"
	msgNoIPLeft     = "FloatIPPlugin:NoFIPLeft: no free float IP for this pod in the node's subnet"
	msgWrongSubnet  = "FloatIPPlugin:NotAllowedSubnet: the pod's IPs cannot live on this node's subnet"
)

// Allocator decides which nodes can host a pod's float IPs and allocates
// them. Allocation is creating FloatIP objects, whose names derive from the
// IPs, so two allocators (or two replicas of the manager) can never hand out
// the same IP: the API server refuses the second create.
type Allocator struct {
	// Reader serves pools, FloatIPs, nodes, namespaces and workloads; the
	// manager's cache is fine (stale reads only cost a retry).
	Reader client.Reader
	// Live reads the FloatIPs of one key before binding, and pods.
	Live client.Reader
	// Client writes FloatIPs and pod bindings.
	Client client.Client
	// Index answers which IPs are taken and which FloatIPs a key holds from
	// the manager's FloatIP informer; nil lists every FloatIP through
	// Reader on each call instead (tests over a direct client).
	Index *FloatIPIndex
	// Clock is the time of status updates and of recent; nil means the
	// real clock (tests pin it).
	Clock clock.PassiveClock

	// recent remembers the IPs this allocator created lately, which its
	// cache may not show yet; skipping them saves doomed creates. It is an
	// optimisation only: the API server's AlreadyExists is what guarantees
	// exclusivity.
	recent expect.Lazy[netip.Addr, struct{}]
	// pools is the last parse of the pools, reused while they are unchanged.
	pools poolMemo
	// refusals are the pods the filter refused for want of a free IP, which
	// the informer's next free nudges; nil when nothing nudges them.
	refusals *refusedPods
}

// recentTTL bounds how long a created IP is remembered.
const recentTTL = 5 * time.Second

// maxRecent bounds the IPs remembered: far above what one allocator
// creates within recentTTL. Beyond it the least recently used go first,
// which costs at most a create refused with AlreadyExists.
const maxRecent = 1 << 14

// tryReserve marks ip as being created by this allocator; it reports false
// when another bind of this process is creating (or lately created) it, so
// concurrent binds of one replica never race each other for an IP.
func (a *Allocator) tryReserve(ip netip.Addr) bool {
	return a.reservations().Claim(ip, struct{}{})
}

// unreserve forgets ip after a create that failed for another reason than
// the IP being taken, or after the FloatIP was rolled back: the IP is free.
// A pool's low-water mark may have moved past it (reservations count as
// taken), so the marks are dropped.
func (a *Allocator) unreserve(ip netip.Addr) {
	a.reservations().Forget(ip)
	if a.Index != nil {
		a.Index.deleted()
	}
}

func (a *Allocator) reservations() *expect.Writes[netip.Addr, struct{}] {
	return a.recent.Get(recentTTL, maxRecent, a.Clock)
}

func (a *Allocator) clock() clock.PassiveClock {
	if a.Clock != nil {
		return a.Clock
	}
	return clock.RealClock{}
}

func (a *Allocator) now() metav1.Time { return metav1.NewTime(a.clock().Now()) }

// podPlan is what a pod needs, worked out once per request.
type podPlan struct {
	pod      *corev1.Pod
	req      ipam.Request
	key      ipam.Key
	nsLabels map[string]string
	pools    []*poolView
	fips     fipLookup // the FloatIPs the reader shows
	own      []*networkingv1alpha1.FloatIP
	reserved []*networkingv1alpha1.FloatIP // reservation keys this pod may claim
	group    *poolView                     // the sharing pool named by the pod, if any
	workload string                        // AnnotationWorkload of a custom owner
}

// retaining reports whether a Deployment pod keeps IPs across pods.
func (p *podPlan) deploymentRetains() bool {
	if p.key.AppType() != ipam.AppDeployment {
		return false
	}
	return p.key.Pool != "" || p.req.Policy == networkingv1alpha1.ReleasePolicyImmutable || p.req.Policy == networkingv1alpha1.ReleasePolicyNever
}

// retains reports whether the pod's IPs may outlive it (a pool, Immutable
// or Never), so that a later pod with its key must get them back.
func (p *podPlan) retains() bool {
	if p.key.Pool != "" || p.req.Policy == networkingv1alpha1.ReleasePolicyImmutable || p.req.Policy == networkingv1alpha1.ReleasePolicyNever {
		return true
	}
	// No annotation: the policy comes from the pool the IP is taken from.
	for _, v := range p.pools {
		if d := v.pool.Spec.ReleasePolicy; d != "" && d != networkingv1alpha1.ReleasePolicyDefault {
			return true
		}
	}
	return false
}

// errNotFloatIP: the pod asks for no float IP; the extender lets it through.
var errNotFloatIP = errors.New("pod requests no float IP")

// Warning Event reasons on a pod whose float-IP request cannot be met as
// written.
const (
	// ReasonInvalidAnnotation: a galaxy annotation is malformed or has an
	// unknown value (galaxy silently took an unknown release policy for the
	// default and lost the IP with the pod).
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonUnsupportedRequest: the request is well formed but cannot be
	// served: a retaining policy the pod's workload cannot use (galaxy's
	// NotStatefulWorkload, NoReplicas), request_ip_range with a retaining
	// Deployment, a pool that does not serve the pod's namespace, or any
	// other refusal of the filter that is not a failure to read the cluster.
	ReasonUnsupportedRequest = "UnsupportedFloatIPRequest"
)

// RequestError is a problem with a pod's own float-IP request, with the
// Event reason that names it: no node and no retry can meet it until the
// pod (or the pool it names) changes. The extender reports it, like any
// other filter error that did not come from reading the cluster, as
// unresolvable and as a Warning Event on the pod.
type RequestError struct {
	// Reason is the Event reason.
	Reason string
	Err    error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func requestError(reason string, err error) error { return &RequestError{Reason: reason, Err: err} }

// plan reads what the decision needs.
func (a *Allocator) plan(ctx context.Context, pod *corev1.Pod, live bool) (*podPlan, error) {
	req, err := ipam.ParseRequest(pod)
	if errors.Is(err, ipam.ErrNotRequested) {
		return nil, errNotFloatIP
	}
	if err != nil {
		return nil, requestError(ReasonInvalidAnnotation, err)
	}
	p := &podPlan{pod: pod, req: req}
	owner := ipam.PodOwner(pod)
	p.key = ipam.KeyFor(pod.Namespace, pod.Name, owner, req.Pool)
	p.workload = workloadOf(owner)
	hasScale := false
	if p.workload != "" && req.Policy == networkingv1alpha1.ReleasePolicyImmutable && a.Client != nil {
		w, err := customWorkload(ctx, a.Live, a.Client.RESTMapper(), p.workload, pod.Namespace, owner.Name)
		if err != nil {
			return nil, err
		}
		hasScale = w.HasScale
	}
	if ok, reason := ipam.Supported(p.key, req.Policy, hasScale); !ok {
		return nil, requestError(ReasonUnsupportedRequest, errors.New(reason))
	}
	if p.deploymentRetains() && len(req.Ranges) > 0 {
		return nil, requestError(ReasonUnsupportedRequest, fmt.Errorf("%s is not supported for a Deployment with a retaining release policy or a pool", networkingv1alpha1.AnnotationCNIArgs+" request_ip_range"))
	}
	if p.deploymentRetains() && len(req.Interfaces) > 0 {
		return nil, requestError(ReasonUnsupportedRequest, fmt.Errorf("%s is not supported for a Deployment with a retaining release policy", networkingv1alpha1.AnnotationFloatIPInterfaces))
	}
	var ns corev1.Namespace
	if err := a.Reader.Get(ctx, client.ObjectKey{Name: pod.Namespace}, &ns); err != nil {
		return nil, fmt.Errorf("getting namespace %s: %w", pod.Namespace, err)
	}
	p.nsLabels = ns.Labels
	if p.pools, err = a.pools.load(ctx, a.Reader); err != nil {
		return nil, err
	}
	if err := p.checkInterfacePools(); err != nil {
		return nil, err
	}
	if req.Pool != "" {
		for _, v := range p.pools {
			if v.name() == req.Pool {
				p.group = v
			}
		}
		if p.group != nil && !p.group.allowsNamespace(p.nsLabels) {
			return nil, requestError(ReasonUnsupportedRequest, fmt.Errorf("FloatIPPool %s does not serve namespace %s", req.Pool, pod.Namespace))
		}
	}
	if p.fips, err = a.lookup(ctx); err != nil {
		return nil, err
	}
	var ownList []networkingv1alpha1.FloatIP
	if live && p.retains() {
		// The FloatIPs a retaining key keeps across pods are read from the
		// API server, so that a lagging cache never makes a pod allocate a
		// second set. A Default-policy key can only hold IPs of its own
		// earlier bind attempts, which the cache shows (and which are
		// rolled back on failure), so it saves the round trip.
		var l networkingv1alpha1.FloatIPList
		if err := a.Live.List(ctx, &l, client.MatchingFields{fieldKey: p.key.String()}); err != nil {
			return nil, fmt.Errorf("listing FloatIPs of key %s: %w", p.key, err)
		}
		ownList = l.Items
	} else {
		// Copies: a bind records the holder on its own IPs.
		for _, f := range p.fips.withKey(p.key.String()) {
			ownList = append(ownList, *f.DeepCopy())
		}
	}
	for i := range ownList {
		if ownList[i].DeletionTimestamp == nil {
			p.own = append(p.own, &ownList[i])
		}
	}
	if p.deploymentRetains() {
		for _, f := range p.fips.withKey(p.key.ReservationKey()) {
			if f.DeletionTimestamp != nil || isAdminReserved(f) {
				continue
			}
			if v := p.poolByName(f.Spec.Pool); v == nil || !v.allowsNamespace(p.nsLabels) {
				continue
			}
			p.reserved = append(p.reserved, f) // shared: claim copies it
		}
	}
	return p, nil
}

// lookup is the allocator's view of the FloatIPs: the index, or one list of
// them all, plus the IPs this allocator is creating or lately created
// (which its cache may not show yet).
func (a *Allocator) lookup(ctx context.Context) (fipLookup, error) {
	if a.Index != nil {
		return withOwn{a.Index, a}, nil
	}
	l, err := listFIPs(ctx, a.Reader)
	if err != nil {
		return nil, err
	}
	return withOwn{l, a}, nil
}

// withOwn also counts as taken the IPs of a's reservations: being created
// by one of its binds, or created lately. Scans skip them without asking
// the API server, and a pool's low-water mark moves past them.
type withOwn struct {
	fipLookup
	a *Allocator
}

func (w withOwn) taken(ip netip.Addr) bool {
	if w.fipLookup.taken(ip) {
		return true
	}
	_, ours := w.a.reservations().Get(ip)
	return ours
}

// checkInterfacePools refuses an interface request naming a pool that
// cannot serve the pod, so the pod reads why instead of "no IP left". It is
// a request error: bind reports it on the pod as the filter does.
func (p *podPlan) checkInterfacePools() error {
	for _, r := range p.req.Interfaces {
		v := p.poolByName(r.Pool)
		var err error
		switch {
		case v == nil:
			err = fmt.Errorf("FloatIPPool %s (interface %s) does not exist", r.Pool, r.Interface)
		case !v.hasRanges():
			err = fmt.Errorf("FloatIPPool %s (interface %s) is a sharing group without ranges; name a pool with ranges", r.Pool, r.Interface)
		case !v.allowsNamespace(p.nsLabels):
			err = fmt.Errorf("FloatIPPool %s (interface %s) does not serve namespace %s", r.Pool, r.Interface, p.pod.Namespace)
		}
		if err != nil {
			return requestError(ReasonUnsupportedRequest, err)
		}
	}
	return nil
}

// ownBySlot assigns the pod's own IPs to the slots of its request: in order
// for galaxy's requests; by pool for an interface request, an IP that was
// on the slot's interface first, so a recreated pod gets each IP back on
// the same interface. IPs left over stay with the key, unused.
func (p *podPlan) ownBySlot() []*networkingv1alpha1.FloatIP {
	slots := p.req.Slots()
	out := make([]*networkingv1alpha1.FloatIP, slots)
	if len(p.req.Interfaces) == 0 {
		copy(out, p.own)
		return out
	}
	taken := make([]bool, len(p.own))
	for _, sameInterface := range []bool{true, false} {
		for i := range slots {
			for j, f := range p.own {
				if out[i] != nil || taken[j] || f.Spec.Pool != p.req.SlotPool(i) {
					continue
				}
				if sameInterface && f.Status.Interface != p.req.SlotInterface(i) {
					continue
				}
				out[i], taken[j] = f, true
			}
		}
	}
	return out
}

// candidatePools are the pools this pod may take new IPs from.
func (p *podPlan) candidatePools() []*poolView {
	var out []*poolView
	for _, v := range p.pools {
		if v.err != nil || !v.hasRanges() || v.pool.DeletionTimestamp != nil || !v.allowsNamespace(p.nsLabels) {
			continue
		}
		if p.group != nil && p.group.hasRanges() && v != p.group {
			continue
		}
		out = append(out, v)
	}
	return out
}

func (p *podPlan) poolByName(name string) *poolView {
	for _, v := range p.pools {
		if v.name() == name {
			return v
		}
	}
	return nil
}

// capacityError says a Deployment or pool already holds as many IPs as it may.
func (a *Allocator) capacityError(ctx context.Context, p *podPlan) (string, error) {
	if !p.deploymentRetains() {
		return "", nil
	}
	rk := p.key.ReservationKey()
	var used int64
	for _, f := range p.fips.withKeyPrefix(rk) {
		if f.Spec.Key == rk {
			continue
		}
		if f.Spec.Key == p.key.String() {
			continue // the pod's own IPs
		}
		used++
	}
	if p.key.Pool != "" && p.group != nil && p.group.pool.Spec.Size != nil {
		size := int64(*p.group.pool.Spec.Size)
		if used+int64(len(p.own)) >= size && len(p.own) == 0 {
			return fmt.Sprintf("reached pool %s size limit of %d", p.key.Pool, size), nil
		}
		return "", nil
	}
	if p.key.Pool != "" {
		return "", nil // a pool without size grows with its workloads
	}
	var dep appsv1.Deployment
	if err := a.Reader.Get(ctx, client.ObjectKey{Namespace: p.key.Namespace, Name: p.key.AppName}, &dep); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("getting deployment %s/%s: %w", p.key.Namespace, p.key.AppName, err)
	}
	replicas := int64(1)
	if dep.Spec.Replicas != nil {
		replicas = int64(*dep.Spec.Replicas)
	}
	if len(p.own) == 0 && used >= replicas {
		return fmt.Sprintf("deployment %s has allocated %d ips with replicas of %d, wait for releasing", p.key.AppName, used, replicas), nil
	}
	return "", nil
}

// usedIPs is the set of IPs with a FloatIP.
func usedIPs(fips []networkingv1alpha1.FloatIP) map[netip.Addr]bool {
	used := make(map[netip.Addr]bool, len(fips))
	for i := range fips {
		if ip, ok := fipIP(&fips[i]); ok {
			used[ip] = true
		}
	}
	return used
}

// hasFree reports whether v has a free IP satisfying slot i of req.
func hasFree(v *poolView, req ipam.Request, slot int, fips fipLookup) bool {
	found := false
	scanPool(v, fips, func(ip netip.Addr, taken bool) bool {
		if !taken && req.SlotAllows(slot, ip) {
			found = true
			return false
		}
		return true
	})
	return found
}

// FilterResult is the outcome for the candidate nodes.
type FilterResult struct {
	Passed []string
	// Failed maps node name to reason.
	Failed map[string]string
	// capacity: every node failed because the pod's Deployment or sharing
	// pool already holds every IP it may.
	capacity bool
}

// Filter keeps the nodes whose subnet can give pod its IPs: the subnets of
// the IPs the pod already holds (or may claim), else any subnet with a free
// IP for every requested range.
func (a *Allocator) Filter(ctx context.Context, pod *corev1.Pod, nodes []*corev1.Node) (FilterResult, error) {
	// Before any FloatIP is read: a free reported after this may be missing
	// from what the filter reads.
	seen := a.refusals.seen()
	res, err := a.filter(ctx, pod, nodes)
	if err == nil {
		a.refusals.filtered(pod, res, seen)
	}
	return res, err
}

func (a *Allocator) filter(ctx context.Context, pod *corev1.Pod, nodes []*corev1.Node) (FilterResult, error) {
	res := FilterResult{Failed: map[string]string{}}
	p, err := a.plan(ctx, pod, false)
	if errors.Is(err, errNotFloatIP) {
		for _, n := range nodes {
			res.Passed = append(res.Passed, n.Name)
		}
		return res, nil
	}
	if err != nil {
		return res, err
	}
	msg, err := a.capacityError(ctx, p)
	if err != nil {
		return res, err
	}
	if msg != "" {
		for _, n := range nodes {
			res.Failed[n.Name] = msg
		}
		res.capacity = true
		return res, nil
	}

	// allowed[i] are the pools that can serve slot i: the pool of the IP
	// the pod already holds for it, else those of its workload's
	// reservations, else every pool with a free IP for it.
	slots := p.req.Slots()
	allowed := make([][]*poolView, slots)
	own := p.ownBySlot()
	for i := range slots {
		switch {
		case own[i] != nil:
			if v := p.poolByName(own[i].Spec.Pool); v != nil && v.err == nil {
				allowed[i] = append(allowed[i], v)
			}
		case len(p.reserved) > 0:
			for _, f := range p.reserved {
				if v := p.poolByName(f.Spec.Pool); v != nil && v.err == nil {
					allowed[i] = append(allowed[i], v)
				}
			}
		default:
			for _, v := range p.candidatePools() {
				if p.req.SlotAcceptsPool(i, v.name()) && hasFree(v, p.req, i, p.fips) {
					allowed[i] = append(allowed[i], v)
				}
			}
		}
	}
	for _, n := range nodes {
		ip, ok := nodeInternalIP(n)
		if !ok {
			res.Failed[n.Name] = msgUnknownNode
			continue
		}
		if reason := nodeFits(ip, p, allowed); reason != "" {
			res.Failed[n.Name] = reason
			continue
		}
		res.Passed = append(res.Passed, n.Name)
	}
	return res, nil
}

// nodeFits says why a node with this IP cannot host the pod's IPs, or "".
func nodeFits(nodeIP netip.Addr, p *podPlan, allowed [][]*poolView) string {
	configured := false
	for _, v := range p.pools {
		if v.err == nil && v.hasRanges() && v.hostsNode(nodeIP) {
			configured = true
		}
	}
	if !configured {
		return msgNoConfigNode
	}
	for _, pools := range allowed {
		ok := false
		for _, v := range pools {
			if v.hostsNode(nodeIP) {
				ok = true
				break
			}
		}
		if !ok {
			if len(p.own) > 0 || len(p.reserved) > 0 {
				return msgWrongSubnet
			}
			return msgNoIPLeft
		}
	}
	return ""
}

// Allocation is one IP handed to a pod.
type Allocation struct {
	FIP  *networkingv1alpha1.FloatIP
	Pool *poolView
	// Created: this bind created the FloatIP (rolled back on failure).
	Created bool
	// recorded: the write that created or claimed the FloatIP recorded the
	// pod as its holder.
	recorded bool
}

// Bind allocates the pod's IPs on the node (reusing its own, claiming its
// workload's reservations, or creating new FloatIPs, all or nothing) and
// binds the pod with galaxy's args annotation. It returns the allocations.
func (a *Allocator) Bind(ctx context.Context, namespace, name string, uid types.UID, nodeName string) ([]Allocation, error) {
	// The pod as the cluster has it (the cache's, else the API server's
	// when the cache does not show it yet), never a body sent to the
	// filter: what is allocated and where the pod may go are the pod's own.
	// The binding carries the UID as a precondition too.
	if uid == "" {
		return nil, fmt.Errorf("binding pod %s/%s: the request names no pod UID", namespace, name)
	}
	pod, err := a.readPod(ctx, client.ObjectKey{Namespace: namespace, Name: name}, uid)
	if err != nil {
		return nil, err
	}
	var node corev1.Node
	if err := a.Reader.Get(ctx, client.ObjectKey{Name: nodeName}, &node); err != nil {
		return nil, fmt.Errorf("getting node %s: %w", nodeName, err)
	}
	if err := admits(&pod, &node); err != nil {
		return nil, err
	}
	allocs, annotation, err := a.allocate(ctx, &pod, &node)
	if errors.Is(err, errNotFloatIP) {
		return nil, a.bindPod(ctx, &pod, nodeName, nil)
	}
	if err != nil {
		return nil, err
	}
	if err := a.bindPod(ctx, &pod, nodeName, map[string]string{networkingv1alpha1.AnnotationCNIArgs: annotation}); err != nil {
		a.rollback(ctx, allocs)
		return nil, err
	}
	a.refusals.forget(pod.UID)
	return allocs, nil
}

// cachedPodWait bounds how long a bind waits for the manager's cache to
// show the pod it binds: in a wave of new pods the manager's informer lags
// the scheduler's, and a GET of each pod the cache does not show yet cost
// the API server a read for about half the pods of a 500-pod wave
// (BenchmarkFloatIP20Nodes4Subnets), where waiting costs a look-up every
// cachedPodPoll.
const (
	cachedPodWait = time.Second
	cachedPodPoll = 10 * time.Millisecond
)

// readPod reads the pod with uid as the cluster has it: from the Reader
// (the manager's cache) once it shows that pod, else, when it does not
// within cachedPodWait or cannot answer for the pod's namespace, from the
// API server.
func (a *Allocator) readPod(ctx context.Context, key client.ObjectKey, uid types.UID) (corev1.Pod, error) {
	var pod corev1.Pod
	var cacheErr error
	_ = wait.PollUntilContextTimeout(ctx, cachedPodPoll, cachedPodWait, true, func(ctx context.Context) (bool, error) {
		cacheErr = a.Reader.Get(ctx, key, &pod)
		switch {
		case cacheErr == nil && pod.UID == uid:
			return true, nil
		case cacheErr == nil || apierrors.IsNotFound(cacheErr):
			return false, nil // not there yet, or an older pod of that name
		default:
			return false, cacheErr // the cache does not hold the namespace
		}
	})
	if cacheErr == nil && pod.UID == uid {
		return pod, nil
	}
	if err := a.Live.Get(ctx, key, &pod); err != nil {
		return corev1.Pod{}, fmt.Errorf("getting pod %s: %w", key, err)
	}
	if pod.UID != uid {
		return corev1.Pod{}, fmt.Errorf("pod %s has UID %s, not %s", key, pod.UID, uid)
	}
	return pod, nil
}

// bindPod binds the pod to the node through pods/binding; the binding's
// annotations are copied onto the pod by the API server.
func (a *Allocator) bindPod(ctx context.Context, pod *corev1.Pod, nodeName string, annotations map[string]string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Annotations: annotations},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := a.Client.SubResource("binding").Create(ctx, pod, b); err != nil {
		return fmt.Errorf("binding pod %s/%s to %s: %w", pod.Namespace, pod.Name, nodeName, err)
	}
	return nil
}

// allocate picks the pod's IPs and returns the args annotation to bind with.
func (a *Allocator) allocate(ctx context.Context, pod *corev1.Pod, node *corev1.Node) ([]Allocation, string, error) {
	p, err := a.plan(ctx, pod, true)
	if err != nil {
		return nil, "", err
	}
	nodeIP, ok := nodeInternalIP(node)
	if !ok {
		return nil, "", errors.New(msgUnknownNode)
	}
	// allocs[i] serves slot i; rolling back skips the slots still empty.
	slots := p.req.Slots()
	allocs := make([]Allocation, slots)
	fail := func(err error) ([]Allocation, string, error) {
		a.rollback(ctx, allocs)
		return nil, "", err
	}
	missing := func() bool {
		return slices.ContainsFunc(allocs, func(al Allocation) bool { return al.FIP == nil })
	}

	// 1. The pod's own IPs (StatefulSet pod recreated, retried bind).
	for i, f := range p.ownBySlot() {
		if f == nil {
			continue
		}
		if err := a.checkHolder(ctx, f, pod); err != nil {
			return fail(err)
		}
		v := p.poolByName(f.Spec.Pool)
		if v == nil || v.err != nil {
			return fail(fmt.Errorf("pool %s of IP %s is missing or unusable", f.Spec.Pool, f.Spec.IP))
		}
		if !v.hostsNode(nodeIP) {
			return fail(fmt.Errorf("IP %s of pool %s cannot live on node %s", f.Spec.IP, v.name(), node.Name))
		}
		allocs[i] = Allocation{FIP: f, Pool: v}
	}
	if missing() {
		if msg, err := a.capacityError(ctx, p); err != nil {
			return fail(err)
		} else if msg != "" {
			return fail(errors.New(msg))
		}
	}
	// 2. Reservations of the pod's Deployment or pool.
	next := 0
	for _, f := range p.reserved {
		for next < slots && allocs[next].FIP != nil {
			next++
		}
		if next == slots {
			break
		}
		v := p.poolByName(f.Spec.Pool)
		if v == nil || v.err != nil || !v.hostsNode(nodeIP) || !p.req.SlotAcceptsPool(next, v.name()) {
			continue
		}
		slot := next
		claimed, err := a.claim(ctx, f, p.key.ReservationKey(), p.key.String(), func(f *networkingv1alpha1.FloatIP) {
			holdBy(f, pod, node.Name, p.req.SlotInterface(slot), a.now())
		})
		if err != nil {
			return fail(err)
		}
		if claimed != nil {
			allocs[next] = Allocation{FIP: claimed, Pool: v, recorded: true}
		}
	}
	if missing() && len(p.reserved) > 0 {
		// Galaxy never allocates a new IP for a workload while it has
		// unused reservations; they went to other pods meanwhile, so let
		// the scheduler retry with fresh state.
		return fail(fmt.Errorf("the reserved IPs of %s were claimed by other pods; retrying", p.key.ReservationKey()))
	}
	// 3. New IPs, one per remaining slot.
	if missing() {
		// IPs this bind holds or has tried.
		picked := map[netip.Addr]bool{}
		for _, al := range allocs {
			if al.FIP == nil {
				continue
			}
			if ip, ok := fipIP(al.FIP); ok {
				picked[ip] = true
			}
		}
		for slot := range allocs {
			if allocs[slot].FIP != nil {
				continue
			}
			al, err := a.createOne(ctx, p, slot, node, nodeIP, picked)
			if err != nil {
				return fail(err)
			}
			allocs[slot] = al
		}
	}
	// Record the holder where the create or claim did not, then build
	// galaxy's annotation.
	args := p.req.Args
	args.Common.IPInfos = nil
	for i := range allocs {
		if !allocs[i].recorded {
			if err := a.markAllocated(ctx, allocs[i].FIP, pod, node.Name, p.req.SlotInterface(i)); err != nil {
				return fail(err)
			}
		}
		ip, _ := fipIP(allocs[i].FIP)
		v := allocs[i].Pool
		args.Common.IPInfos = append(args.Common.IPInfos, ipam.NewIPInfo(ip, v.subnet, v.pool.Spec.Gateway, v.pool.Spec.Vlan))
	}
	s, err := args.Format()
	if err != nil {
		return fail(err)
	}
	return allocs, s, nil
}

// claim renames a reservation's key to the pod's and records the holder
// (hold) in the same update, retrying on conflicts with fresh reads while
// the IP is still reserved. It returns nil when another pod got the IP
// first.
func (a *Allocator) claim(ctx context.Context, f *networkingv1alpha1.FloatIP, reservation, key string, hold func(*networkingv1alpha1.FloatIP)) (*networkingv1alpha1.FloatIP, error) {
	cur := f.DeepCopy()
	for range 5 {
		if cur.Spec.Key != reservation || cur.DeletionTimestamp != nil {
			return nil, nil
		}
		cur.Spec.Key = key
		hold(cur)
		stampFIPWrite(cur)
		err := a.Client.Update(ctx, cur)
		switch {
		case err == nil:
			return cur, nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case !apierrors.IsConflict(err):
			return nil, fmt.Errorf("claiming reserved IP %s: %w", f.Spec.IP, err)
		}
		cur = &networkingv1alpha1.FloatIP{}
		if err := a.Live.Get(ctx, client.ObjectKeyFromObject(f), cur); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("re-reading reserved IP %s: %w", f.Spec.IP, err)
		}
	}
	return nil, nil
}

// checkHolder refuses an IP still held by a live pod with another UID.
func (a *Allocator) checkHolder(ctx context.Context, f *networkingv1alpha1.FloatIP, pod *corev1.Pod) error {
	if f.Status.PodUID == "" || f.Status.PodUID == string(pod.UID) {
		return nil
	}
	var other corev1.Pod
	err := a.Live.Get(ctx, client.ObjectKey{Namespace: f.Status.PodNamespace, Name: f.Status.PodName}, &other)
	if apierrors.IsNotFound(err) || (err == nil && string(other.UID) != f.Status.PodUID) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking holder of IP %s: %w", f.Spec.IP, err)
	}
	return fmt.Errorf("IP %s is still held by pod %s/%s (UID %s); waiting for its deletion before reusing it", f.Spec.IP, other.Namespace, other.Name, f.Status.PodUID)
}

// createOne creates a FloatIP for one slot in a pool the node can host, with
// the pod as its holder, trying the next free IP whenever another allocator
// got there first.
func (a *Allocator) createOne(ctx context.Context, p *podPlan, slot int, node *corev1.Node, nodeIP netip.Addr, picked map[netip.Addr]bool) (Allocation, error) {
	for _, v := range p.candidatePools() {
		if !v.hostsNode(nodeIP) || !p.req.SlotAcceptsPool(slot, v.name()) {
			continue
		}
		policy := p.req.Policy
		if policy == "" {
			policy = v.pool.Spec.ReleasePolicy
		}
		if policy == "" {
			policy = networkingv1alpha1.ReleasePolicyDefault
		}
		var (
			created *networkingv1alpha1.FloatIP
			cerr    error
		)
		// Lowest free IP first, as galaxy does; IPs this allocator created
		// but its cache does not show yet are skipped.
		scanPool(v, p.fips, func(ip netip.Addr, taken bool) bool {
			if taken || picked[ip] || !p.req.SlotAllows(slot, ip) {
				return true
			}
			picked[ip] = true
			if !a.tryReserve(ip) {
				return true
			}
			f := newFloatIP(ip, v, p.key.String(), policy)
			if p.workload != "" {
				f.Annotations = map[string]string{AnnotationWorkload: p.workload}
			}
			holdBy(f, p.pod, node.Name, p.req.SlotInterface(slot), a.now())
			stampFIPWrite(f)
			if err := a.Client.Create(ctx, f); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return true // taken meanwhile: try the next one
				}
				a.unreserve(ip)
				cerr = fmt.Errorf("creating FloatIP %s: %w", f.Name, err)
				return false
			}
			created = f
			return false
		})
		if cerr != nil {
			return Allocation{}, cerr
		}
		if created != nil {
			return Allocation{FIP: created, Pool: v, Created: true, recorded: true}, nil
		}
	}
	return Allocation{}, errors.New(msgNoIPLeft)
}

// newFloatIP builds the FloatIP object for ip in pool v.
func newFloatIP(ip netip.Addr, v *poolView, key string, policy networkingv1alpha1.ReleasePolicy) *networkingv1alpha1.FloatIP {
	return &networkingv1alpha1.FloatIP{
		ObjectMeta: metav1.ObjectMeta{
			Name:   ipam.NameForIP(ip),
			Labels: map[string]string{networkingv1alpha1.LabelFloatIPPool: v.name()},
		},
		Spec: networkingv1alpha1.FloatIPSpec{
			IP:            ip.String(),
			Pool:          v.name(),
			Key:           key,
			ReleasePolicy: policy,
			ReservedTTL:   v.pool.Spec.ReservedTTL,
		},
	}
}

// markAllocated records the pod, node and interface in the status of a
// FloatIP the pod already holds by its key (a retried bind, a recreated
// StatefulSet pod), unless it shows them already. The patch carries f's
// version: a FloatIP changed since fails the bind, which the scheduler
// retries with fresh state.
func (a *Allocator) markAllocated(ctx context.Context, f *networkingv1alpha1.FloatIP, pod *corev1.Pod, nodeName, iface string) error {
	if heldBy(f, pod, nodeName, iface) {
		return nil
	}
	before := f.DeepCopy()
	holdBy(f, pod, nodeName, iface, a.now())
	stampFIPWrite(f)
	if err := a.Client.Patch(ctx, f, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording pod %s/%s on FloatIP %s: %w", pod.Namespace, pod.Name, f.Name, err)
	}
	return nil
}

// rollback deletes the FloatIPs this bind created (exact version only) and
// gives claimed reservations back.
func (a *Allocator) rollback(ctx context.Context, allocs []Allocation) {
	logger := log.FromContext(ctx)
	for _, al := range allocs {
		if !al.Created || al.FIP == nil {
			continue
		}
		err := a.Client.Delete(ctx, al.FIP, client.Preconditions{UID: &al.FIP.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			logger.Error(err, "Rolling back FloatIP failed; the garbage collector will release it", "floatip", al.FIP.Name)
			continue
		}
		if ip, ok := fipIP(al.FIP); ok {
			a.unreserve(ip)
		}
	}
}
