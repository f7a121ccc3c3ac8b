package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// State is what the end-of-run invariants are computed from: the emulator's
// snapshot and the objects listed from the API server.
type State struct {
	// Cluster is the identity the managers tag their cloud objects with.
	Cluster       string
	Cloud         core.Snapshot
	PodElasticIPs []networkingv1alpha1.PodElasticIP
	Bindings      []networkingv1alpha1.AnycastIPBinding
	FloatIPs      []networkingv1alpha1.FloatIP
	Nodes         []corev1.Node
	Pods          []corev1.Pod
	// BurstDeployments are the workloads with LOCAL_REPLICAS whose floors
	// are checked.
	BurstDeployments []appsv1.Deployment
}

// The legacy burst annotation that sets a workload's local floor.
const annotationLocalReplicas = "LOCAL_REPLICAS"

// Violations lists, per end-of-run invariant, what breaks it (empty when it
// holds). Each entry names the objects involved.
type Violations struct {
	OrphanAddresses      []string
	DoubleBound          []string
	ReadyDisagreeing     []string
	FloatIPsHeldTwice    []string
	TaintedWithoutReason []string
	FloorsBroken         []string
}

// Check computes every end-of-run invariant of s.
func Check(s State) Violations {
	return Violations{
		OrphanAddresses:      OrphanAddresses(s),
		DoubleBound:          DoubleBound(s),
		ReadyDisagreeing:     ReadyDisagreeing(s),
		FloatIPsHeldTwice:    FloatIPsHeldTwice(s.Pods, s.FloatIPs),
		TaintedWithoutReason: TaintedWithoutReason(s.Nodes, s.Bindings),
		FloorsBroken:         FloorsBroken(s.BurstDeployments, s.Pods, s.Nodes),
	}
}

// Zero reports whether every invariant holds.
func (v Violations) Zero() bool {
	return len(v.OrphanAddresses)+len(v.DoubleBound)+len(v.ReadyDisagreeing)+len(v.FloatIPsHeldTwice)+
		len(v.TaintedWithoutReason)+len(v.FloorsBroken) == 0
}

func tagMap(tags []core.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// OrphanAddresses: AWS Elastic IPs and Tencent addresses tagged with the
// cluster's identity that no CR holds: their owner (the PodElasticIP or
// AnycastIPBinding whose UID the owner tag names) does not exist, or holds
// another address (a second allocation after a lost response).
func OrphanAddresses(s State) []string {
	peips := map[string]string{} // UID → the allocation ID in its status
	for _, p := range s.PodElasticIPs {
		peips[string(p.UID)] = p.Status.AllocationID
	}
	bindings := map[string]string{} // UID → the address ID in its status
	for _, b := range s.Bindings {
		bindings[string(b.UID)] = b.Status.AddressID
	}
	var out []string
	for _, a := range s.Cloud.EC2.Addresses {
		t := tagMap(a.Tags)
		if t[orphan.TagCluster] != s.Cluster {
			continue
		}
		if held, ok := peips[t[orphan.TagOwnerUID]]; !ok {
			out = append(out, fmt.Sprintf("EC2 %s (%s) owner %q", a.AllocationID, a.PublicIP, t[orphan.TagOwnerUID]))
		} else if held != a.AllocationID {
			out = append(out, fmt.Sprintf("EC2 %s (%s) owner %q holds %q", a.AllocationID, a.PublicIP, t[orphan.TagOwnerUID], held))
		}
	}
	for _, a := range s.Cloud.Tencent.Addresses {
		t := tagMap(a.Tags)
		if t[orphan.TagCluster] != s.Cluster {
			continue
		}
		if held, ok := bindings[t[orphan.TagOwnerUID]]; !ok {
			out = append(out, fmt.Sprintf("Tencent %s (%s, %s) owner %q", a.AddressID, a.AddressIP, a.AddressStatus, t[orphan.TagOwnerUID]))
		} else if held != a.AddressID {
			out = append(out, fmt.Sprintf("Tencent %s (%s, %s) owner %q holds %q", a.AddressID, a.AddressIP, a.AddressStatus, t[orphan.TagOwnerUID], held))
		}
	}
	return out
}

// DoubleBound: an address claimed by two CRs, or a target holding two of
// the cluster's addresses (an ENI private IP with two Elastic IPs is
// impossible in EC2, so for AWS this is two PodElasticIPs on one private IP;
// for Tencent, one instance with two addresses).
func DoubleBound(s State) []string {
	var out []string
	byAlloc := map[string][]string{}
	byPrivate := map[string][]string{}
	for _, p := range s.PodElasticIPs {
		if p.Status.AllocationID != "" {
			byAlloc[p.Status.AllocationID] = append(byAlloc[p.Status.AllocationID], p.Namespace+"/"+p.Name)
		}
		if p.Status.AssociationID != "" && p.Status.PrivateIP != "" {
			k := p.Status.NetworkInterfaceID + "/" + p.Status.PrivateIP
			byPrivate[k] = append(byPrivate[k], p.Namespace+"/"+p.Name)
		}
	}
	out = append(out, dupes("EC2 address %s claimed by %v", byAlloc)...)
	out = append(out, dupes("ENI private IP %s associated for %v", byPrivate)...)

	byAddress := map[string][]string{}
	for _, b := range s.Bindings {
		if b.Status.AddressID != "" {
			byAddress[b.Status.AddressID] = append(byAddress[b.Status.AddressID], b.Name)
		}
	}
	out = append(out, dupes("Tencent address %s claimed by %v", byAddress)...)
	byInstance := map[string][]string{}
	for _, a := range s.Cloud.Tencent.Addresses {
		if a.InstanceID != "" && tagMap(a.Tags)[orphan.TagCluster] == s.Cluster {
			byInstance[a.InstanceID] = append(byInstance[a.InstanceID], a.AddressID)
		}
	}
	out = append(out, dupes("instance %s holds addresses %v", byInstance)...)
	return out
}

func dupes(format string, m map[string][]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v := m[k]; len(v) > 1 {
			sort.Strings(v)
			out = append(out, fmt.Sprintf(format, k, v))
		}
	}
	return out
}

// ReadyDisagreeing: a PodElasticIP or AnycastIPBinding that is Ready while
// the cloud says otherwise: its address is gone, or not attached where its
// status says, or not where its pod or node now is.
func ReadyDisagreeing(s State) []string {
	ec2 := map[string]core.EC2Address{}
	for _, a := range s.Cloud.EC2.Addresses {
		ec2[a.AllocationID] = a
	}
	tc := map[string]core.TCAddress{}
	for _, a := range s.Cloud.Tencent.Addresses {
		tc[a.AddressID] = a
	}
	pods := map[string]*corev1.Pod{}
	for i := range s.Pods {
		pods[s.Pods[i].Namespace+"/"+s.Pods[i].Name] = &s.Pods[i]
	}
	nodes := map[string]*corev1.Node{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	var out []string
	for _, p := range s.PodElasticIPs {
		if p.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			continue
		}
		name := "PodElasticIP " + p.Namespace + "/" + p.Name
		a, ok := ec2[p.Status.AllocationID]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: address %s does not exist", name, p.Status.AllocationID))
		case a.NetworkInterfaceID != p.Status.NetworkInterfaceID || a.PrivateIPAddress != p.Status.PrivateIP:
			out = append(out, fmt.Sprintf("%s: address %s is on %s/%s, status says %s/%s", name, a.AllocationID,
				a.NetworkInterfaceID, a.PrivateIPAddress, p.Status.NetworkInterfaceID, p.Status.PrivateIP))
		default:
			if pod := pods[p.Namespace+"/"+p.Spec.PodName]; pod != nil && pod.DeletionTimestamp == nil && string(pod.UID) == p.Status.PodUID &&
				pod.Status.PodIP != "" && pod.Status.PodIP != p.Status.PrivateIP {
				out = append(out, fmt.Sprintf("%s: pod IP is %s, the address is on %s", name, pod.Status.PodIP, a.PrivateIPAddress))
			}
		}
	}
	for _, b := range s.Bindings {
		if b.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			continue
		}
		name := "AnycastIPBinding " + b.Name
		a, ok := tc[b.Status.AddressID]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: address %s does not exist", name, b.Status.AddressID))
		case a.AddressStatus != "BIND" || a.InstanceID != b.Status.InstanceID:
			out = append(out, fmt.Sprintf("%s: address %s is %s on %q, status says bound to %s", name, a.AddressID, a.AddressStatus, a.InstanceID, b.Status.InstanceID))
		default:
			if n := nodes[b.Spec.NodeName]; n != nil {
				// The node's instance is the last segment of its providerID
				// (qcloud:///<zone>/<instance>), the only place the binding
				// reads it from.
				if id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]; id != b.Status.InstanceID {
					out = append(out, fmt.Sprintf("%s: node %s is instance %s, the address is on %s", name, n.Name, id, b.Status.InstanceID))
				}
			}
		}
	}
	return out
}

// live reports whether a pod still holds what it was given: not deleted, not
// finished.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// FloatIPsHeldTwice: a float IP written into two live pods' galaxy args, or
// into a live pod while its FloatIP records another pod as the holder.
func FloatIPsHeldTwice(pods []corev1.Pod, fips []networkingv1alpha1.FloatIP) []string {
	holders := map[string][]string{}
	uids := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		raw := p.Annotations[networkingv1alpha1.AnnotationCNIArgs]
		if raw == "" || !live(p) {
			continue
		}
		args, err := ipam.ParseCNIArgs(raw)
		if err != nil {
			continue
		}
		for _, ip := range args.IPs() {
			holders[ip.String()] = append(holders[ip.String()], p.Namespace+"/"+p.Name)
			uids[ip.String()] = append(uids[ip.String()], string(p.UID))
		}
	}
	out := dupes("float IP %s held by %v", holders)
	for _, f := range fips {
		ip := f.Spec.IP
		if len(uids[ip]) != 1 || f.Status.PodUID == "" || f.Status.Phase != networkingv1alpha1.FloatIPAllocated {
			continue
		}
		if f.Status.PodUID != uids[ip][0] {
			out = append(out, fmt.Sprintf("float IP %s is in pod %s but its FloatIP names pod %s/%s (%s)", ip, holders[ip][0],
				f.Status.PodNamespace, f.Status.PodName, f.Status.PodUID))
		}
	}
	return out
}

// TaintedWithoutReason: nodes carrying the no-aia-ip taint without a reason
// for it, i.e. without an AnycastIPBinding that is not Ready and says why
// in a condition.
func TaintedWithoutReason(nodes []corev1.Node, bindings []networkingv1alpha1.AnycastIPBinding) []string {
	byNode := map[string]*networkingv1alpha1.AnycastIPBinding{}
	for i := range bindings {
		byNode[bindings[i].Spec.NodeName] = &bindings[i]
	}
	var out []string
	for _, n := range nodes {
		if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == networkingv1alpha1.LegacyTaintNoAIAIP }) {
			continue
		}
		b := byNode[n.Name]
		switch {
		case b == nil:
			out = append(out, fmt.Sprintf("node %s: tainted, no AnycastIPBinding", n.Name))
		case b.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue:
			out = append(out, fmt.Sprintf("node %s: tainted although AnycastIPBinding %s is Ready", n.Name, b.Name))
		case b.GetCondition(xpv2.TypeReady).Reason == "":
			out = append(out, fmt.Sprintf("node %s: tainted, AnycastIPBinding %s has no Ready condition", n.Name, b.Name))
		}
	}
	return out
}

// IsVirtualNode reports whether a node is a virtual (burst) node.
func IsVirtualNode(n *corev1.Node) bool {
	return n.Labels[corev1.LabelInstanceTypeStable] == "eklet" || n.Labels["type"] == "virtual-kubelet"
}

// FloorsBroken: burst workloads with fewer Running and Ready replicas on
// local nodes than their floor, min(LOCAL_REPLICAS, replicas).
func FloorsBroken(deps []appsv1.Deployment, pods []corev1.Pod, nodes []corev1.Node) []string {
	virtual := map[string]bool{}
	for i := range nodes {
		virtual[nodes[i].Name] = IsVirtualNode(&nodes[i])
	}
	var out []string
	for _, d := range deps {
		floor, err := strconv.Atoi(d.Spec.Template.Annotations[annotationLocalReplicas])
		if err != nil || d.Spec.Replicas == nil {
			continue
		}
		want := min(floor, int(*d.Spec.Replicas))
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			continue
		}
		local := 0
		for i := range pods {
			p := &pods[i]
			if p.Namespace != d.Namespace || !sel.Matches(labels.Set(p.Labels)) || !live(p) || p.Spec.NodeName == "" ||
				virtual[p.Spec.NodeName] || p.Status.Phase != corev1.PodRunning || !PodReady(p) {
				continue
			}
			local++
		}
		if local < want {
			out = append(out, fmt.Sprintf("Deployment %s/%s: %d local replicas running, floor %d", d.Namespace, d.Name, local, want))
		}
	}
	return out
}

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// DegradedNodes counts the nodes (among nodes) where the IngressDaemonSet
// does not serve at full strength: fewer than perNode Ready pods, or a pod
// being replaced (terminating or not Ready).
func DegradedNodes(nodes []string, pods []corev1.Pod, perNode int) []string {
	good := map[string]int{}
	bad := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		if p.DeletionTimestamp != nil || !PodReady(p) {
			bad[p.Spec.NodeName] = true
			continue
		}
		good[p.Spec.NodeName]++
	}
	var out []string
	for _, n := range nodes {
		if bad[n] || good[n] < perNode {
			out = append(out, n)
		}
	}
	return out
}

// Figures is the printed result of a run.
type Figures struct {
	Violations
	// DegradedBeyondBudget is the most IngressDaemonSet nodes degraded
	// beyond maxDegradedNodes in any sample of the run.
	DegradedBeyondBudget int
	// DegradedSample describes the worst sample.
	DegradedSample string
	// Tally is what the fault actors did, against the profile's minimums.
	Tally Tally
	// Converged is the time from the end of the last fault to convergence;
	// negative if the run never converged.
	Converged time.Duration
}

// Lines renders the figures as `name: value` lines: the invariants, then
// the tally of kills, failovers and fault windows, then convergence.
func (f Figures) Lines() []string {
	conv := "never"
	if f.Converged >= 0 {
		conv = fmt.Sprintf("%.1f s", f.Converged.Seconds())
	}
	return append([]string{
		fmt.Sprintf("cloud addresses without a CR: %d", len(f.OrphanAddresses)),
		fmt.Sprintf("addresses bound to two targets: %d", len(f.DoubleBound)),
		fmt.Sprintf("CRs Ready whose cloud state disagrees: %d", len(f.ReadyDisagreeing)),
		fmt.Sprintf("float IPs held twice: %d", len(f.FloatIPsHeldTwice)),
		fmt.Sprintf("nodes tainted without a reason: %d", len(f.TaintedWithoutReason)),
		fmt.Sprintf("IngressDaemonSet nodes degraded beyond maxDegradedNodes: %d", f.DegradedBeyondBudget),
		fmt.Sprintf("local replica floors broken: %d", len(f.FloorsBroken)),
	}, append(f.Tally.Lines(), fmt.Sprintf("converged after the last fault: %s", conv))...)
}

// Failures lists every broken invariant with its details, then what keeps
// the tally below the profile's minimums; empty when the run passed.
func (f Figures) Failures() []string {
	var out []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			out = append(out, fmt.Sprintf("%s (%d): %s", name, len(v), strings.Join(v, "; ")))
		}
	}
	add("cloud addresses without a CR", f.OrphanAddresses)
	add("addresses bound to two targets", f.DoubleBound)
	add("CRs Ready whose cloud state disagrees", f.ReadyDisagreeing)
	add("float IPs held twice", f.FloatIPsHeldTwice)
	add("nodes tainted without a reason", f.TaintedWithoutReason)
	add("local replica floors broken", f.FloorsBroken)
	if f.DegradedBeyondBudget > 0 {
		out = append(out, fmt.Sprintf("IngressDaemonSet nodes degraded beyond maxDegradedNodes (%d): worst sample %s", f.DegradedBeyondBudget, f.DegradedSample))
	}
	if f.Converged < 0 {
		out = append(out, "the run never converged after the last fault")
	}
	return append(out, f.Tally.Shortfalls()...)
}

// CallSummary sums the emulator's request counters (keyed
// provider/action/code) by result code, as `cloud calls <code>: N` lines,
// so a run shows that its faults reached the managers.
func CallSummary(stats map[string]int64) []string {
	byCode := map[string]int64{}
	for k, n := range stats {
		code := k[strings.LastIndexByte(k, '/')+1:]
		byCode[code] += n
	}
	var out []string
	for _, code := range slices.Sorted(maps.Keys(byCode)) {
		out = append(out, fmt.Sprintf("cloud calls %s: %d", code, byCode[code]))
	}
	return out
}
