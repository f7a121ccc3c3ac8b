package cniipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"

	networkingclient "github.com/edgeplane/edgeplane/apis/client/clientset/versioned/typed/networking/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// ReportingController names the plugin in the Events it writes.
const ReportingController = "edgeplane.io/cni-ipam"

const (
	defaultPollInterval = 500 * time.Millisecond
	requestTimeout      = 10 * time.Second
	maxNote             = 1024
)

// Plugin runs the CNI commands against the API server of its kubeconfig.
type Plugin struct {
	// Kubeconfig is the kubeconfig the plugin reads (default
	// KubeconfigPath). It is the program's, never the network config's.
	Kubeconfig string
	// PollInterval is how often ADD looks again for an allocation not yet
	// written (default 500ms).
	PollInterval time.Duration
	// Hostname identifies the node in Events (default os.Hostname).
	Hostname string
}

// Funcs are the plugin's CNI commands for skel. GC has nothing to do: the
// plugin holds no state, and the floatip controller releases IPs.
func (p *Plugin) Funcs() skel.CNIFuncs {
	return skel.CNIFuncs{Add: p.Add, Check: p.Check, Del: p.Del, Status: p.Status, GC: func(*skel.CmdArgs) error { return nil }}
}

// clients reach the API server.
type clients struct {
	core   corev1client.CoreV1Interface
	events eventsv1client.EventsV1Interface
	net    networkingclient.NetworkingV1alpha1Interface
}

func (p *Plugin) kubeconfig() string {
	if p.Kubeconfig == "" {
		return KubeconfigPath
	}
	return p.Kubeconfig
}

// newClients builds the clients from the plugin's kubeconfig; a failure is
// the node's (the installer has not written a usable kubeconfig), so it is
// ReasonNotAvailable.
func (p *Plugin) newClients() (*clients, *Refusal) {
	c, err := newClients(p.kubeconfig())
	if err != nil {
		return nil, refuse(ReasonNotAvailable, "the plugin's kubeconfig (written by edgeplane-cni-ipam install): %v", err)
	}
	return c, nil
}

func newClients(kubeconfig string) (*clients, error) {
	cfg, err := LoadKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = requestTimeout
	cfg.UserAgent = "edgeplane-cni-ipam"
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the core client: %w", err)
	}
	events, err := eventsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the events client: %w", err)
	}
	n, err := networkingclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the networking client: %w", err)
	}
	return &clients{core: core, events: events, net: n}, nil
}

// prepare parses the config and CNI_ARGS and builds the clients. A refused
// config still comes with the pod's ref and clients when CNI_ARGS name the
// pod and the plugin's kubeconfig loads, so the refusal can be recorded on
// the pod (see refused). The config is parsed, and refused if it names
// another kubeconfig, before any kubeconfig is read.
func (p *Plugin) prepare(args *skel.CmdArgs) (Config, PodRef, *clients, *Refusal) {
	cfg, err := ParseConfig(args.StdinData, p.kubeconfig())
	if err != nil {
		r := refuse(ReasonInvalidConfig, "%v", err)
		ref, argsErr := ParseArgs(args.Args)
		if argsErr != nil {
			return Config{}, PodRef{}, nil, r
		}
		c, cr := p.newClients()
		if cr != nil {
			return Config{}, PodRef{}, nil, r
		}
		return Config{}, ref, c, r
	}
	ref, err := ParseArgs(args.Args)
	if err != nil {
		return Config{}, PodRef{}, nil, refuse(ReasonInvalidArgs, "%v", err)
	}
	c, r := p.newClients()
	if r != nil {
		return Config{}, PodRef{}, nil, r
	}
	return cfg, ref, c, nil
}

// Add hands the pod's interface its float IPs, waiting up to the config's
// waitTimeout for an allocation the extender has not written yet.
func (p *Plugin) Add(args *skel.CmdArgs) error {
	cfg, ref, c, r := p.prepare(args)
	if r != nil {
		p.refused(c, ref, r, "AddNetwork")
		return r.CNIError()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.WaitTimeout+2*requestTimeout)
	defer cancel()
	addrs, pod, waited, r := p.resolve(ctx, c, cfg, ref, args.IfName, cfg.WaitTimeout)
	if r != nil {
		p.event(ctx, c, pod, corev1.EventTypeWarning, r.Reason, "AddNetwork", r.Message)
		return r.CNIError()
	}
	note := fmt.Sprintf("Interface %s (network %s) gets %s", args.IfName, cfg.Name, describe(addrs))
	if waited > 0 {
		// Explains a slow pod start: the allocation (or the API server) was late.
		note += fmt.Sprintf(" (waited %s)", waited.Round(time.Millisecond))
	}
	p.event(ctx, c, pod, corev1.EventTypeNormal, ReasonAssigned, "AddNetwork", note)
	return types.PrintResult(BuildResult(cfg, args.IfName, addrs), cfg.CNIVersion)
}

// Check verifies that the pod still holds the addresses the chain's
// previous result gave the interface.
func (p *Plugin) Check(args *skel.CmdArgs) error {
	cfg, ref, c, r := p.prepare(args)
	if r != nil {
		p.refused(c, ref, r, "CheckNetwork")
		return r.CNIError()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*requestTimeout)
	defer cancel()
	addrs, pod, _, r := p.resolve(ctx, c, cfg, ref, args.IfName, 0)
	if r == nil && cfg.PrevResult != nil {
		r = checkPrevResult(cfg.PrevResult, ref, args.IfName, addrs)
	}
	if r != nil {
		p.event(ctx, c, pod, corev1.EventTypeWarning, r.Reason, "CheckNetwork", r.Message)
		return r.CNIError()
	}
	return nil
}

// checkPrevResult refuses a previous result that lacks one of addrs.
func checkPrevResult(prev types.Result, ref PodRef, ifname string, addrs []Address) *Refusal {
	res, err := types100.NewResultFromResult(prev)
	if err != nil {
		return refuse(ReasonInvalidConfig, "prevResult: %v", err)
	}
	for _, a := range addrs {
		found := false
		for _, ipc := range res.IPs {
			ones, _ := ipc.Address.Mask.Size()
			ip, ok := netip.AddrFromSlice(ipc.Address.IP)
			if ok && ip.Unmap() == a.Prefix.Addr() && ones == a.Prefix.Bits() {
				found = true
				break
			}
		}
		if !found {
			return refuse(ReasonAddressMismatch, "pod %s: interface %s should have %s, the previous result does not", ref, ifname, a.Prefix)
		}
	}
	return nil
}

// Del does nothing and always succeeds, however often it is called: the
// plugin never allocates, so it has nothing to give back; the floatip
// controller releases the IP when the pod is gone.
func (p *Plugin) Del(*skel.CmdArgs) error { return nil }

// Status reports whether ADD can be served: the config parses, the
// plugin's kubeconfig loads, and the API server answers with the FloatIPs
// the plugin reads.
func (p *Plugin) Status(args *skel.CmdArgs) error {
	if _, err := ParseConfig(args.StdinData, p.kubeconfig()); err != nil {
		return refuse(ReasonInvalidConfig, "%v", err).CNIError()
	}
	c, r := p.newClients()
	if r != nil {
		return r.CNIError()
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if _, err := c.net.FloatIPs().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return refuse(ReasonNotAvailable, "listing FloatIPs: %v", err).CNIError()
	}
	return nil
}

// resolve reads the pod's state and resolves ifname's addresses, looking
// again until wait has passed while the allocation is not written yet or
// the API server does not answer. It returns the pod when one was read,
// and how long it waited when the first look found nothing.
func (p *Plugin) resolve(ctx context.Context, c *clients, cfg Config, ref PodRef, ifname string, wait time.Duration) ([]Address, *corev1.Pod, time.Duration, *Refusal) {
	start := time.Now()
	deadline := start.Add(wait)
	interval := p.PollInterval
	if interval <= 0 {
		interval = defaultPollInterval
	}
	for looked := false; ; looked = true {
		st, r := read(ctx, c, ref)
		var addrs []Address
		if r == nil {
			if addrs, r = Resolve(cfg, ifname, st); r == nil {
				var waited time.Duration
				if looked {
					waited = time.Since(start)
				}
				return addrs, st.Pod, waited, nil
			}
		}
		transient := r.Reason == ReasonAllocationPending || r.Reason == ReasonAPIUnavailable
		if !transient || !time.Now().Add(interval).Before(deadline) {
			if transient && wait > 0 {
				r.Message += fmt.Sprintf(" (waited %s)", wait)
			}
			return nil, st.Pod, 0, r
		}
		select {
		case <-ctx.Done():
			return nil, st.Pod, 0, refuse(ReasonAPIUnavailable, "pod %s: %v", ref, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// read fetches the pod, the FloatIPs bound to its UID and, for a pod
// without any, the FloatIP of each IP of its galaxy annotation (one read
// per IP), then the pools of those FloatIPs by name.
func read(ctx context.Context, c *clients, ref PodRef) (State, *Refusal) {
	unavailable := func(what string, err error) (State, *Refusal) {
		return State{}, refuse(ReasonAPIUnavailable, "pod %s: %s: %v", ref, what, err)
	}
	pod, err := c.core.Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return State{}, refuse(ReasonPodNotFound, "pod %s does not exist", ref)
	}
	if err != nil {
		return unavailable("getting the pod", err)
	}
	st := State{Pod: pod}
	if pod.UID != ref.UID {
		return st, refuse(ReasonPodUIDMismatch, "pod %s has UID %s, but the runtime asks for UID %s (a deleted pod of the same name); its IPs are never handed to another pod",
			ref, pod.UID, ref.UID)
	}
	bound, err := c.net.FloatIPs().List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.podUID", string(ref.UID)).String()})
	if err != nil {
		return unavailable("listing its FloatIPs", err)
	}
	st.Bound = bound.Items
	used := BoundTo(pod, st.Bound)
	if len(used) == 0 {
		for _, ip := range AnnotationIPs(pod) {
			f, err := c.net.FloatIPs().Get(ctx, ipam.NameForIP(ip), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return unavailable("getting the FloatIP of "+ip.String(), err)
			}
			if st.Holders == nil {
				st.Holders = map[netip.Addr]*networkingv1alpha1.FloatIP{}
			}
			st.Holders[ip] = f
			used = append(used, f)
		}
	}
	st.Pools = map[string]*networkingv1alpha1.FloatIPPool{}
	for _, f := range used {
		if _, seen := st.Pools[f.Spec.Pool]; seen || f.Spec.Pool == "" {
			continue
		}
		pool, err := c.net.FloatIPPools().Get(ctx, f.Spec.Pool, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			st.Pools[f.Spec.Pool] = nil
		case err != nil:
			return unavailable("getting FloatIPPool "+f.Spec.Pool, err)
		default:
			st.Pools[f.Spec.Pool] = pool
		}
	}
	return st, nil
}

// refused records a refusal of prepare (a bad network config) on the pod
// when it has clients: it reads the pod and writes the Event if the pod
// is there with the UID the runtime names. A pod of the same name with
// another UID is not the one being set up, so it hears nothing.
func (p *Plugin) refused(c *clients, ref PodRef, r *Refusal, action string) {
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	pod, err := c.core.Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil || pod.UID != ref.UID {
		return
	}
	p.event(ctx, c, pod, corev1.EventTypeWarning, r.Reason, action, r.Message)
}

// event records an Event on the pod; without a pod (it could not be read)
// the CNI error is all there is. A failed write only costs the Event.
func (p *Plugin) event(ctx context.Context, c *clients, pod *corev1.Pod, typ string, reason Reason, action, note string) {
	if pod == nil || c == nil {
		return
	}
	host := p.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	if len(note) > maxNote {
		note = note[:maxNote]
	}
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: ReportingController,
		ReportingInstance:   truncate(ReportingController+"-"+host, 128),
		Action:              action,
		Reason:              string(reason),
		Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion},
		Note: note,
		Type: typ,
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	if _, err := c.events.Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "edgeplane-cni-ipam: recording Event %s on pod %s/%s: %v\n", reason, pod.Namespace, pod.Name, err)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
