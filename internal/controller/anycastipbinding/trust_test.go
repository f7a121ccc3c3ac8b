package anycastipbinding

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
)

// selfReportedNode is a node whose kubelet wrote the legacy instance label
// and address annotation itself: its spec.providerID names its own
// instance, the label and annotation name others'.
func (f *fixture) selfReportedNode(name, instance, labelInstance, annotatedAddress string) *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{networkingv1alpha1.LegacyLabelNodeInstanceID: labelInstance},
		Annotations: map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: annotatedAddress}},
		Spec: corev1.NodeSpec{ProviderID: providerID(instance)}}
	f.create(n)
	f.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	return n
}

// wantBoundTo checks that address id still exists, bound to instance.
func (f *fixture) wantBoundTo(id, instance string) {
	f.t.Helper()
	if a := f.address(id); a == nil || a.InstanceID != instance || a.AddressStatus != "BIND" {
		f.t.Errorf("address %s is %+v, want it BIND on %s", id, a, instance)
	}
}

// TestNodeLabelDoesNotNameTheInstance: a compromised kubelet labels its
// node with a victim's instance and annotates it with the victim's
// address. The binding binds an address of its own to the node's own
// instance (its spec.providerID), a later relabelling moves nothing, and
// deleting the binding (the label dropped) leaves the victim's address
// bound where it was.
func TestNodeLabelDoesNotNameTheInstance(t *testing.T) {
	fx := instances("ins-node0001", "ins-victim01", "ins-victim02")
	fx.Tencent.Addresses = []core.TCAddressFixture{{AddressID: "eip-victim01", AddressType: "AnycastEIP", InstanceID: "ins-victim01"}}
	f := newFixture(t, core.Settings{}, fx)
	name := prefix(t)
	f.selfReportedNode(name, "ins-node0001", "ins-victim01", "eip-victim01")
	f.binding(name, name, nil)
	b := f.converge(name, ready)
	if b.Status.InstanceID != "ins-node0001" || b.Status.AddressID == "eip-victim01" {
		t.Fatalf("binding on %s with %s (%s), want an address of its own on the node's instance ins-node0001", b.Status.InstanceID, b.Status.AddressID, describe(b))
	}
	own := b.Status.AddressID
	f.wantBoundTo(own, "ins-node0001")
	f.wantBoundTo("eip-victim01", "ins-victim01")

	n := f.getNode(name)
	n.Labels[networkingv1alpha1.LegacyLabelNodeInstanceID] = "ins-victim02"
	if err := env.Client.Update(f.ctx, n); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f.reconcile(name)
	}
	if b := f.get(name); b.Status.InstanceID != "ins-node0001" || !ready(b) {
		t.Errorf("after relabelling: %s on %s, want it still Ready on ins-node0001", describe(b), b.Status.InstanceID)
	}
	f.wantBoundTo(own, "ins-node0001")

	f.deleteBinding(name)
	f.wantBoundTo("eip-victim01", "ins-victim01")
	if f.address(own) != nil {
		t.Errorf("the binding's own address %s was not released", own)
	}
}

// TestAnnotationAdoptsOnlyProvenAddresses: an address bound to the node's
// own instance that the node's annotation names is adopted only when its
// tags prove it this cluster's; a person's address is never adopted (the
// instance already has a public IP) and never released.
func TestAnnotationAdoptsOnlyProvenAddresses(t *testing.T) {
	name := prefix(t)
	fx := instances("ins-node0001", "ins-node0002")
	fx.Tencent.Addresses = []core.TCAddressFixture{
		{AddressID: "eip-persons1", AddressType: "AnycastEIP", InstanceID: "ins-node0001", Tags: map[string]string{"Name": "a person's"}},
		// This cluster's, allocated for the node under another name.
		{AddressID: "eip-ours0001", AddressType: "AnycastEIP", InstanceID: "ins-node0002",
			Tags: map[string]string{decide.TagCluster: "cluster-" + name, decide.TagOwnerKind: decide.OwnerKind, decide.TagNodeName: "renamed"}},
	}
	f := newFixture(t, core.Settings{}, fx)
	f.selfReportedNode(name, "ins-node0001", "", "eip-persons1")
	f.binding(name, name, nil)
	b := f.converge(name, readyReason(networkingv1alpha1.AnycastReasonInstanceHasPublicIP))
	if b.Status.AddressID == "eip-persons1" || b.Status.Adopted != "" {
		t.Errorf("the person's address was adopted: %s", describe(b))
	}
	f.deleteBinding(name)
	f.wantBoundTo("eip-persons1", "ins-node0001")

	f.selfReportedNode(name+"-2", "ins-node0002", "", "eip-ours0001")
	f.binding(name+"-2", name+"-2", nil)
	if b := f.converge(name+"-2", ready); b.Status.AddressID != "eip-ours0001" || b.Status.Adopted != networkingv1alpha1.AdoptedAnnotation {
		t.Errorf("this cluster's address named by the annotation: %s, want it adopted", describe(b))
	}
}

// TestProviderIDChangeDoesNotRetarget: the node behind a hand-made binding
// is deleted and registered again with another instance's providerID. The
// binding does not follow (InstanceIDChanged), nothing is bound to the new
// instance, and deleting the binding releases its address from the
// instance it recorded.
func TestProviderIDChangeDoesNotRetarget(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	name := prefix(t)
	f.node(name, "ins-node0001", false)
	f.binding(name, name, nil)
	addr := f.converge(name, ready).Status.AddressID
	if err := env.Client.Delete(f.ctx, f.getNode(name)); err != nil {
		t.Fatal(err)
	}
	f.node(name, "ins-node0002", false)
	b := f.converge(name, readyReason(networkingv1alpha1.AnycastReasonInstanceIDChanged))
	if b.Status.InstanceID != "ins-node0001" {
		t.Errorf("status.instanceID %s, want the recorded ins-node0001", b.Status.InstanceID)
	}
	f.wantEvent(name, networkingv1alpha1.LegacyReasonFailedAssociate)
	f.wantBoundTo(addr, "ins-node0001")
	f.deleteBinding(name)
	if f.address(addr) != nil {
		t.Errorf("address %s was not released from the recorded instance", addr)
	}
	for _, a := range f.addresses() {
		if a.InstanceID == "ins-node0002" {
			t.Errorf("address %s was bound to the new instance", a.AddressID)
		}
	}
}
