package why

import (
	"fmt"
	"slices"
	"strings"
)

// Facts is what the gatherer found about the object asked for. Decide
// reads only this.
type Facts struct {
	Object Ref
	// Governing lists the CRs that govern the object, each followed by its
	// provider config where it has one; the object itself comes first when
	// it is an edgeplane object.
	Governing []Governor
	// Events are recent Events on the object and on the governing CRs,
	// newest first.
	Events []Event

	Pod  *PodFacts
	Node *NodeFacts
}

// Governor is one governing CR.
type Governor struct {
	Link
	// Config is its provider config, if it uses one.
	Config *Link
	// Kind-specific facts.
	FloatIPAvailable *int64 // FloatIPPool: IPs free
	FloorShort       bool   // BurstPolicy: LocalCapacityShort=True
	NotBurstable     *Event // BurstPolicy: the pod is listed as not burstable (Reason, Message)
	NodePhase        string // IngressDaemonSet: the node's phase in the rollout
}

// PodFacts are a pod's own inputs.
type PodFacts struct {
	Phase, NodeName string
	// Unschedulable is the scheduler's PodScheduled=False message, if any.
	Unschedulable string
	// Gated: the pod waits at the BurstPolicy scheduling gate.
	Gated bool
	// Burst: the pod was burst to a virtual node.
	Burst bool
	// WantsElasticIP: the pod carries aws-pod-eip-controller's annotation.
	WantsElasticIP bool
	// WantsFloatIP: the pod requests tke.cloud.tencent.com/eni-ip.
	WantsFloatIP bool
}

// NodeFacts are a node's own inputs.
type NodeFacts struct {
	// WantsAnycastIP: the node is labelled for an anycast address.
	WantsAnycastIP bool
	// Tainted: the node carries the no-anycast-IP taint.
	Tainted bool
	// WantsElasticIP: the node carries NodeElasticIP's default selector
	// label.
	WantsElasticIP bool
	// ElasticIPTainted: the node carries NodeElasticIP's default taint.
	ElasticIPTainted bool
}

// kinds of governing CRs, as Link.Kind.
const (
	kindPodElasticIP     = "PodElasticIP"
	kindFloatIP          = "FloatIP"
	kindFloatIPPool      = "FloatIPPool"
	kindBurstPolicy      = "BurstPolicy"
	kindAnycastIPBinding = "AnycastIPBinding"
	kindNodeElasticIP    = "NodeElasticIP"
	kindIngressDaemonSet = "IngressDaemonSet"
)

// Warning Event reasons that say a pod's or node's request cannot be met
// as written (the translators' and the float-IP extender's).
var requestEventReasons = []string{"InvalidAnnotation", "UnsupportedFloatIPRequest", "InvalidLabel", "InvalidLegacyAnnotation"}

// reasonInvalidSpec is a PodElasticIP's Ready reason when its spec (or
// the pod annotation it was translated from) cannot be used.
const reasonInvalidSpec = "InvalidSpec"

// inProgress are Ready reasons of an AnycastIPBinding or a NodeElasticIP
// that is still being bound rather than failing.
var inProgress = []string{"Binding", "Creating", "NoStatus", "Progressing", "ReconcileSuccess", "Associating", ""}

// Decide turns facts into the verdict. It is pure.
func Decide(f Facts) Verdict {
	v := Verdict{Object: f.Object, Events: f.Events}
	for _, g := range f.Governing {
		v.Chain = append(v.Chain, g.Link)
		if g.Config != nil {
			v.Chain = append(v.Chain, *g.Config)
		}
	}
	switch {
	case f.Pod != nil:
		return decidePod(v, f)
	case f.Node != nil:
		return decideNode(v, f)
	}
	return decideObject(v, f)
}

func notServed(v Verdict, reason, message string) Verdict {
	v.Served, v.Reason, v.Message = false, reason, message
	return v
}

func served(v Verdict, message string) Verdict {
	v.Served, v.Reason, v.Message = true, ReasonServed, message
	return v
}

// causeOf is the not-Ready governor's verdict: its provider config's
// reason when that is not Ready either (the root cause), else its own.
func causeOf(v Verdict, g Governor) Verdict {
	if g.Config != nil && g.Config.Ready != "True" {
		return notServed(v, g.Config.Reason, fmt.Sprintf("%s uses %s, which is not Ready: %s", g.Ref, g.Config.Ref, g.Config.Message))
	}
	return notServed(v, g.Reason, fmt.Sprintf("%s is not Ready: %s", g.Ref, g.Message))
}

func of(f Facts, kind string) []Governor {
	var out []Governor
	for _, g := range f.Governing {
		if g.Kind == kind {
			out = append(out, g)
		}
	}
	return out
}

// requestEvent returns the newest Warning Event on the object itself that
// refuses its request.
func requestEvent(f Facts) (Event, bool) {
	for _, e := range f.Events {
		if e.Object == f.Object && e.Type == "Warning" && slices.Contains(requestEventReasons, e.Reason) {
			return e, true
		}
	}
	return Event{}, false
}

func decidePod(v Verdict, f Facts) Verdict {
	p := f.Pod
	var good []string
	peips := of(f, kindPodElasticIP)
	if p.WantsElasticIP || len(peips) > 0 {
		if len(peips) == 0 {
			if e, ok := requestEvent(f); ok {
				return notServed(v, e.Reason, e.Message)
			}
			return notServed(v, ReasonTranslationPending, "the pod's aws-pod-eip-controller annotation has no PodElasticIP yet")
		}
		for _, g := range peips {
			if e, ok := requestEvent(f); ok && g.Reason == reasonInvalidSpec {
				// The translator's Event names the pod's own input.
				return notServed(v, e.Reason, e.Message)
			}
			if g.Ready != "True" {
				return causeOf(v, g)
			}
			good = append(good, fmt.Sprintf("%s holds %s", g.Ref, g.Detail))
		}
	}
	if p.WantsFloatIP {
		fips := of(f, kindFloatIP)
		if len(fips) == 0 {
			if e, ok := requestEvent(f); ok {
				return notServed(v, e.Reason, e.Message)
			}
			pools := of(f, kindFloatIPPool)
			var empty []string
			for _, g := range pools {
				if g.FloatIPAvailable != nil && *g.FloatIPAvailable == 0 {
					empty = append(empty, g.Name)
				}
			}
			if len(pools) > 0 && len(empty) == len(pools) {
				return notServed(v, ReasonNoFreeFloatIP, fmt.Sprintf("no free IP in FloatIPPool %s, the pools the pod may use", strings.Join(empty, ", ")))
			}
			return notServed(v, ReasonFloatIPNotAllocated, "the pod holds no float IP yet: the scheduler extender allocates one when it places the pod")
		}
		for _, g := range fips {
			good = append(good, fmt.Sprintf("%s %s", g.Ref, g.Detail))
		}
	}
	pending := p.NodeName == ""
	for _, g := range of(f, kindBurstPolicy) {
		switch {
		case g.NotBurstable != nil && pending:
			return notServed(v, g.NotBurstable.Reason, fmt.Sprintf("%s may not burst this pod: %s", g.Ref, g.NotBurstable.Message))
		case p.Gated:
			return notServed(v, ReasonBurstDecisionPending, fmt.Sprintf("the pod waits at %s's scheduling gate for the burst decision", g.Ref))
		case pending && !p.Burst && g.FloorShort:
			return notServed(v, ReasonLocalFloorHeld, fmt.Sprintf("%s keeps this replica on local nodes (%s) and none has room: %s", g.Ref, g.Detail, firstNonEmpty(p.Unschedulable, g.Message)))
		case g.Ready != "True":
			return causeOf(v, g)
		}
		where := "on a local node"
		if p.Burst {
			where = "burst to a virtual node"
		}
		if pending {
			where = "pending"
		}
		good = append(good, fmt.Sprintf("%s: %s", g.Ref, where))
	}
	if pending && p.Unschedulable != "" {
		return notServed(v, ReasonUnschedulable, p.Unschedulable)
	}
	if len(f.Governing) == 0 {
		return notServed(v, ReasonNotGoverned, "no edgeplane object governs this pod")
	}
	return served(v, strings.Join(good, "; "))
}

// nodeAddress is what a node's public address needs, of one kind: the
// node asks for one (wants) and is tainted until it has it (taint names
// the taint, tainted says the node carries it).
type nodeAddress struct {
	kind, noun, taint string
	wants, tainted    bool
}

func decideNode(v Verdict, f Facts) Verdict {
	n := f.Node
	var good []string
	for _, a := range []nodeAddress{
		{kind: kindAnycastIPBinding, noun: "an anycast IP", taint: "no-aia-ip", wants: n.WantsAnycastIP, tainted: n.Tainted},
		{kind: kindNodeElasticIP, noun: "an Elastic IP", taint: "elastic-ip-pending", wants: n.WantsElasticIP, tainted: n.ElasticIPTainted},
	} {
		govs := of(f, a.kind)
		if !a.wants && len(govs) == 0 {
			continue
		}
		if len(govs) == 0 {
			if e, ok := requestEvent(f); ok {
				return notServed(v, e.Reason, e.Message)
			}
			return notServed(v, ReasonTranslationPending, fmt.Sprintf("the node is labelled for %s but has no %s yet", a.noun, a.kind))
		}
		for _, g := range govs {
			if g.Ready == "True" {
				good = append(good, fmt.Sprintf("%s holds %s", g.Ref, g.Detail))
				continue
			}
			if slices.Contains(inProgress, g.Reason) && (g.Config == nil || g.Config.Ready == "True") {
				taint := ""
				if a.tainted {
					taint = fmt.Sprintf("; the node keeps its %s taint until then", a.taint)
				}
				state := g.Reason
				if g.Message != "" {
					state += ": " + g.Message
				}
				return notServed(v, ReasonNodeNotBound, fmt.Sprintf("%s is not bound yet (%s)%s", g.Ref, state, taint))
			}
			return causeOf(v, g)
		}
	}
	for _, g := range of(f, kindIngressDaemonSet) {
		if g.NodePhase != "" && g.NodePhase != "Ready" {
			return notServed(v, g.Reason, fmt.Sprintf("%s: this node is %s in its rollout: %s", g.Ref, g.NodePhase, g.Message))
		}
		good = append(good, fmt.Sprintf("%s: node Ready", g.Ref))
	}
	if len(f.Governing) == 0 {
		return notServed(v, ReasonNotGoverned, "no edgeplane object governs this node")
	}
	return served(v, strings.Join(good, "; "))
}

func decideObject(v Verdict, f Facts) Verdict {
	if len(f.Governing) == 0 {
		return notServed(v, ReasonNotGoverned, "not found")
	}
	g := f.Governing[0]
	if g.Ready != "True" {
		return causeOf(v, g)
	}
	if g.Config != nil && g.Config.Ready != "True" {
		return causeOf(v, g)
	}
	return served(v, firstNonEmpty(g.Message, g.Detail, "Ready"))
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
