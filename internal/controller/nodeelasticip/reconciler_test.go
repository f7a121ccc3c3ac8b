package nodeelasticip_test

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
)

// TestAutoLifecycle: a NodeElasticIP allocates an address with the
// ownership tags, associates it with the primary private IP of the node's
// primary interface (the instance has a second interface, so EC2 would
// refuse an association by instance), labels and annotates the node and
// lifts its taint; deleting it (policy Delete) disassociates and releases
// the address and cleans the node.
func TestAutoLifecycle(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.node(0, false)
	created := w.neip(0, nil)
	n := w.waitReady(0)
	id := n.Status.AllocationID
	if id == "" || n.Status.PublicIP == "" || n.Status.InstanceID != instanceID(0) || n.Status.NetworkInterfaceID != eniID(0) || n.Status.PrivateIP != primaryIP(0) {
		t.Fatalf("status: %+v", n.Status)
	}
	if n.GetCondition(xpv2.TypeSynced).Status != corev1.ConditionTrue || n.Status.ObservedGeneration != n.Generation {
		t.Errorf("synced %+v, observedGeneration %d", n.GetCondition(xpv2.TypeSynced), n.Status.ObservedGeneration)
	}
	w.wantOnNode(0, id)
	a, _ := w.address(id)
	tags := tagMap(a.Tags)
	for k, v := range map[string]string{decide.TagCluster: w.cluster, decide.TagOwnerKind: "NodeElasticIP", decide.TagOwnerUID: string(created.UID),
		decide.TagNode: w.nodeName(0), decide.TagInstanceID: instanceID(0), decide.TagMode: "Auto"} {
		if tags[k] != v {
			t.Errorf("tag %s = %q, want %q (tags %v)", k, tags[k], v, tags)
		}
	}
	if got := w.calls("AllocateAddress", "OK"); got != 1 {
		t.Errorf("%d allocations, want 1", got)
	}
	if w.nodeEvents(0, networkingv1alpha1.NodeElasticIPEventAssociated) == 0 {
		t.Error("no ElasticIPAssociated Event on the node")
	}

	w.delete(0)
	w.waitGone(0)
	if _, ok := w.address(id); ok {
		t.Errorf("address %s not released", id)
	}
	w.wantClean(0)
}
