package why

import (
	"testing"
)

func TestDecide(t *testing.T) {
	pod := Ref{Kind: "Pod", Namespace: "shop", Name: "web-0"}
	node := Ref{Kind: "Node", Name: "edge-1"}
	cfgReady := &Link{Ref: Ref{Kind: "ClusterProviderConfig", Name: "default"}, Ready: "True", Reason: "Available"}
	cfgBroken := &Link{Ref: Ref{Kind: "ClusterProviderConfig", Name: "default"}, Ready: "False", Reason: "CredentialsUnavailable", Message: "secret gone"}
	peip := func(ready, reason string, cfg *Link) Governor {
		return Governor{Link: Link{Ref: Ref{Kind: kindPodElasticIP, Namespace: "shop", Name: "web-0"}, Ready: ready, Reason: reason, Detail: "203.0.113.7"}, Config: cfg}
	}
	zero, one := int64(0), int64(1)
	pool := func(available *int64) Governor {
		return Governor{Link: Link{Ref: Ref{Kind: kindFloatIPPool, Name: "pool-a"}, Ready: "True"}, FloatIPAvailable: available}
	}
	bp := func(mut func(*Governor)) Governor {
		g := Governor{Link: Link{Ref: Ref{Kind: kindBurstPolicy, Namespace: "shop", Name: "web"}, Ready: "True", Reason: "Reconciled"}}
		if mut != nil {
			mut(&g)
		}
		return g
	}
	binding := func(ready, reason string, cfg *Link) Governor {
		return Governor{Link: Link{Ref: Ref{Kind: kindAnycastIPBinding, Name: "edge-1"}, Ready: ready, Reason: reason}, Config: cfg}
	}
	neip := func(ready, reason string, cfg *Link) Governor {
		return Governor{Link: Link{Ref: Ref{Kind: kindNodeElasticIP, Name: "edge-1"}, Ready: ready, Reason: reason, Message: "m", Detail: "203.0.113.7"}, Config: cfg}
	}
	invalid := Event{Object: pod, Type: "Warning", Reason: "InvalidAnnotation", Message: "unknown type"}

	cases := []struct {
		name       string
		facts      Facts
		wantServed bool
		wantReason string
	}{
		{"pod governed by nothing", Facts{Object: pod, Pod: &PodFacts{NodeName: "n"}}, false, ReasonNotGoverned},
		{"elastic IP bound", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsElasticIP: true}, Governing: []Governor{peip("True", "Available", cfgReady)}}, true, ReasonServed},
		{"elastic IP over quota", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsElasticIP: true}, Governing: []Governor{peip("False", "QuotaExceeded", cfgReady)}}, false, "QuotaExceeded"},
		{"the provider config is the root cause", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsElasticIP: true}, Governing: []Governor{peip("False", "ProviderConfigError", cfgBroken)}}, false, "CredentialsUnavailable"},
		{"invalid annotation, no CR", Facts{Object: pod, Pod: &PodFacts{WantsElasticIP: true}, Events: []Event{invalid}}, false, "InvalidAnnotation"},
		{"invalid annotation, translated into an invalid spec", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsElasticIP: true}, Governing: []Governor{peip("False", reasonInvalidSpec, cfgReady)}, Events: []Event{invalid}}, false, "InvalidAnnotation"},
		{"an old invalid annotation does not hide a new failure", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsElasticIP: true}, Governing: []Governor{peip("False", "QuotaExceeded", cfgReady)}, Events: []Event{invalid}}, false, "QuotaExceeded"},
		{"annotation not translated yet", Facts{Object: pod, Pod: &PodFacts{WantsElasticIP: true}}, false, ReasonTranslationPending},
		{"an Event on another object is not the pod's", Facts{Object: pod, Pod: &PodFacts{WantsElasticIP: true}, Events: []Event{{Object: node, Type: "Warning", Reason: "InvalidAnnotation"}}}, false, ReasonTranslationPending},
		{"every pool empty", Facts{Object: pod, Pod: &PodFacts{WantsFloatIP: true}, Governing: []Governor{pool(&zero)}}, false, ReasonNoFreeFloatIP},
		{"a pool with room: not allocated yet", Facts{Object: pod, Pod: &PodFacts{WantsFloatIP: true}, Governing: []Governor{pool(&zero), pool(&one)}}, false, ReasonFloatIPNotAllocated},
		{"float IP held", Facts{Object: pod, Pod: &PodFacts{NodeName: "n", WantsFloatIP: true}, Governing: []Governor{{Link: Link{Ref: Ref{Kind: kindFloatIP, Name: "10.3.0.10"}, Ready: "True"}}}}, true, ReasonServed},
		{"floor held", Facts{Object: pod, Pod: &PodFacts{Unschedulable: "0/1 nodes"}, Governing: []Governor{bp(func(g *Governor) { g.FloorShort = true })}}, false, ReasonLocalFloorHeld},
		{"a burst pod is not held by the floor", Facts{Object: pod, Pod: &PodFacts{Burst: true, Unschedulable: "0/3 nodes"}, Governing: []Governor{bp(func(g *Governor) { g.FloorShort = true })}}, false, ReasonUnschedulable},
		{"at the scheduling gate", Facts{Object: pod, Pod: &PodFacts{Gated: true}, Governing: []Governor{bp(nil)}}, false, ReasonBurstDecisionPending},
		{"not burstable", Facts{Object: pod, Pod: &PodFacts{Unschedulable: "x"}, Governing: []Governor{bp(func(g *Governor) { g.NotBurstable = &Event{Reason: "ReservedPort"} })}}, false, "ReservedPort"},
		{"placed by its BurstPolicy", Facts{Object: pod, Pod: &PodFacts{NodeName: "n"}, Governing: []Governor{bp(nil)}}, true, ReasonServed},
		{"node labelled, not translated", Facts{Object: node, Node: &NodeFacts{WantsAnycastIP: true}}, false, ReasonTranslationPending},
		{"node binding in progress", Facts{Object: node, Node: &NodeFacts{WantsAnycastIP: true, Tainted: true}, Governing: []Governor{binding("False", "Binding", cfgReady)}}, false, ReasonNodeNotBound},
		{"node binding failing", Facts{Object: node, Node: &NodeFacts{WantsAnycastIP: true}, Governing: []Governor{binding("False", "InstanceNotFound", cfgReady)}}, false, "InstanceNotFound"},
		{"node binding waits on a broken config", Facts{Object: node, Node: &NodeFacts{}, Governing: []Governor{binding("False", "Creating", cfgBroken)}}, false, "CredentialsUnavailable"},
		{"node bound", Facts{Object: node, Node: &NodeFacts{WantsAnycastIP: true}, Governing: []Governor{binding("True", "Available", cfgReady)}}, true, ReasonServed},
		{"node labelled for an Elastic IP, not translated", Facts{Object: node, Node: &NodeFacts{WantsElasticIP: true}}, false, ReasonTranslationPending},
		{"node Elastic IP associating", Facts{Object: node, Node: &NodeFacts{WantsElasticIP: true, ElasticIPTainted: true}, Governing: []Governor{neip("False", "Associating", cfgReady)}}, false, ReasonNodeNotBound},
		{"node Elastic IP pool exhausted", Facts{Object: node, Node: &NodeFacts{WantsElasticIP: true}, Governing: []Governor{neip("False", "PoolExhausted", cfgReady)}}, false, "PoolExhausted"},
		{"node Elastic IP waits on a broken config", Facts{Object: node, Node: &NodeFacts{}, Governing: []Governor{neip("False", "Associating", cfgBroken)}}, false, "CredentialsUnavailable"},
		{"node Elastic IP on the node", Facts{Object: node, Node: &NodeFacts{WantsElasticIP: true}, Governing: []Governor{neip("True", "Available", cfgReady)}}, true, ReasonServed},
		{"an anycast IP bound does not hide a missing Elastic IP", Facts{Object: node, Node: &NodeFacts{WantsAnycastIP: true, WantsElasticIP: true},
			Governing: []Governor{binding("True", "Available", cfgReady)}}, false, ReasonTranslationPending},
		{"node mid-rollout", Facts{Object: node, Node: &NodeFacts{}, Governing: []Governor{{Link: Link{Ref: Ref{Kind: kindIngressDaemonSet, Name: "ing"}, Reason: "RollingUpdate"}, NodePhase: "Detaching"}}}, false, "RollingUpdate"},
		{"object Ready", Facts{Object: Ref{Kind: kindFloatIPPool, Name: "p"}, Governing: []Governor{pool(&one)}}, true, ReasonServed},
		{"object not Ready", Facts{Object: Ref{Kind: kindPodElasticIP, Name: "p"}, Governing: []Governor{peip("False", "QuotaExceeded", cfgReady)}}, false, "QuotaExceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(tc.facts)
			if v.Served != tc.wantServed || v.Reason != tc.wantReason {
				t.Errorf("Decide = served %v, reason %q (%s); want served %v, reason %q", v.Served, v.Reason, v.Message, tc.wantServed, tc.wantReason)
			}
			if v.Message == "" {
				t.Error("the verdict has no message")
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct {
		arg     string
		want    Target
		wantErr bool
	}{
		{"web-0", Target{Namespace: "shop", Name: "web-0"}, false},
		{"pod/web-0", Target{Kind: "Pod", Namespace: "shop", Name: "web-0"}, false},
		{"no/edge-1", Target{Kind: "Node", Namespace: "shop", Name: "edge-1"}, false},
		{"podelasticips.networking.edgeplane.io/web-0", Target{Kind: kindPodElasticIP, Namespace: "shop", Name: "web-0"}, false},
		{"BP/web", Target{Kind: kindBurstPolicy, Namespace: "shop", Name: "web"}, false},
		{"deployment/web", Target{}, true},
		{"pod/", Target{}, true},
	}
	for _, tc := range cases {
		got, err := ParseTarget(tc.arg, "shop")
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v, error %v", tc.arg, got, err, tc.want, tc.wantErr)
		}
	}
}
