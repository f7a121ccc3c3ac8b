package nodeelasticip_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestProviderIDChangeDoesNotRetarget: the node of a NodeElasticIP is
// deleted and registered again under its name with another instance's
// spec.providerID (what a compromised kubelet can do to its own Node).
// The NodeElasticIP does not follow (InstanceIDChanged): its address stays
// on the instance it recorded, nothing is associated with the new one, and
// deleting the NodeElasticIP releases the address.
func TestProviderIDChangeDoesNotRetarget(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.node(0, false)
	w.neip(0, nil)
	id := w.waitReady(0).Status.AllocationID
	if err := w.c.Delete(w.ctx, w.getNode(0)); err != nil {
		t.Fatal(err)
	}
	w.eventually("node deleted", func() (bool, string) {
		err := w.c.Get(w.ctx, clientKey(w.nodeName(0)), &corev1.Node{})
		return err != nil, fmt.Sprint(err)
	})
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(0)}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instanceID(1)}}
	if err := w.c.Create(w.ctx, other); err != nil {
		t.Fatal(err)
	}
	n := w.waitReason(0, networkingv1alpha1.NodeElasticIPReasonInstanceIDChanged)
	if n.Status.InstanceID != instanceID(0) {
		t.Errorf("status.instanceID %s, want the recorded %s", n.Status.InstanceID, instanceID(0))
	}
	if a, _ := w.address(id); a.NetworkInterfaceID != eniID(0) || a.PrivateIPAddress != primaryIP(0) {
		t.Errorf("address %s moved to %s/%s", id, a.NetworkInterfaceID, a.PrivateIPAddress)
	}
	w.delete(0)
	w.waitGone(0)
	if _, ok := w.address(id); ok {
		t.Errorf("address %s not released", id)
	}
	for _, a := range w.addresses() {
		if a.NetworkInterfaceID == eniID(1) {
			t.Errorf("address %s was associated with the new instance", a.AllocationID)
		}
	}
}
