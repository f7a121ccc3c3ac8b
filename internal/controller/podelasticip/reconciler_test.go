package podelasticip_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
)

// TestAutoLifecycle: an Auto address is allocated with its ownership tags,
// associated with the pod's IP (exactly two mutating calls), reflected on
// the pod (legacy labels, annotation, readiness condition), follows the pod
// when it is recreated with a new IP, and is released on deletion.
func TestAutoLifecycle(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.pod("web-0", "10.0.1.5", hostIP1, nil)
	w.peip("web-0", "web-0", nil)
	p := w.waitReady("web-0")

	if got := w.calls("AllocateAddress") + w.calls("AssociateAddress") + w.calls("CreateTags"); got != 2 {
		t.Errorf("mutating calls = %d, want 2 (allocate with tags, associate)", got)
	}
	a, ok := w.address(p.Status.AllocationID)
	if !ok || a.NetworkInterfaceID != eni1 || a.PrivateIPAddress != "10.0.1.5" || a.PublicIP != p.Status.PublicIP {
		t.Fatalf("address %+v (found %v), status %+v", a, ok, p.Status)
	}
	tags := tagMap(a.Tags)
	for k, v := range map[string]string{decide.TagCluster: w.cluster, decide.TagOwnerUID: string(p.UID), decide.TagPod: w.ns + "/web-0",
		decide.TagOwnerKind: "PodElasticIP", decide.TagMode: "Auto"} {
		if tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, tags[k], v)
		}
	}
	if meta.GetExternalName(p) != a.AllocationID || p.Status.NetworkInterfaceID != eni1 || p.Status.PrivateIP != "10.0.1.5" ||
		p.Status.NodeName != "w1" || p.Status.PodUID == "" || p.Status.ObservedGeneration != p.Generation {
		t.Errorf("status %+v, external name %q", p.Status, meta.GetExternalName(p))
	}
	w.eventually("pod marks", func() (bool, string) {
		pod := w.getPod("web-0")
		cond := ""
		for _, c := range pod.Status.Conditions {
			if c.Type == networkingv1alpha1.PodConditionElasticIPReady {
				cond = string(c.Status)
			}
		}
		return pod.Labels[translate.LabelPublicIP] == a.PublicIP && pod.Labels[translate.LabelType] == "auto" &&
				pod.Annotations[networkingv1alpha1.AnnotationPodPublicIP] == a.PublicIP && cond == "True",
			fmt.Sprintf("labels %v annotations %v condition %q", pod.Labels, pod.Annotations, cond)
	})
	// Setting the gate's condition left the kubelet's as they were.
	keptKubeletConditions(t, w.getPod("web-0"))
	// Without its gate's condition (lost, say, to a restart between the two
	// writes) but with its marks, the pod gets the condition back in a write
	// of that condition alone, from the cached pod, which keeps none of the
	// kubelet's: they must stay.
	w.setPodConditions("web-0", kubeletConditions())
	w.eventually("the readiness gate written again", func() (bool, string) {
		pod := w.getPod("web-0")
		i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == networkingv1alpha1.PodConditionElasticIPReady })
		return i >= 0 && pod.Status.Conditions[i].Status == corev1.ConditionTrue, fmt.Sprintf("%+v", pod.Status.Conditions)
	})
	keptKubeletConditions(t, w.getPod("web-0"))

	// The pod is recreated (a StatefulSet pod moving) with a new IP.
	oldUID := p.Status.PodUID
	w.deletePod("web-0")
	w.waitReason("web-0", networkingv1alpha1.PodElasticIPReasonPodNotFound)
	if a, _ := w.address(p.Status.AllocationID); a.AssociationID != "" {
		t.Errorf("address still associated after the pod went away: %+v", a)
	}
	w.pod("web-0", "10.0.1.77", hostIP1, nil)
	w.eventually("address follows the pod", func() (bool, string) {
		p = w.get("web-0")
		return p.Status.PrivateIP == "10.0.1.77" && p.Status.PodUID != oldUID && p.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue,
			fmt.Sprintf("%+v", p.Status)
	})
	if p.Status.AllocationID != a.AllocationID || w.calls("AllocateAddress") != 1 || len(w.addresses()) != 1 {
		t.Errorf("recreation allocated again: %s vs %s, %d allocations", p.Status.AllocationID, a.AllocationID, w.calls("AllocateAddress"))
	}

	// Delete policy (Auto's default): disassociated and released.
	w.delete("web-0")
	w.waitGone("web-0")
	if n := len(w.addresses()); n != 0 {
		t.Errorf("%d addresses left, want 0", n)
	}
	w.eventually("pod unmarked", func() (bool, string) {
		pod := w.getPod("web-0")
		_, hasLabel := pod.Labels[translate.LabelPublicIP]
		return !hasLabel, fmt.Sprint(pod.Labels)
	})
}

// TestPrefixDelegation: a pod IP from a /28 delegated to the node's second
// ENI is found through the node's host IP and instance.
func TestPrefixDelegation(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.pod("pd", "10.0.8.3", hostIP2, nil)
	w.peip("pd", "pd", nil)
	p := w.waitReady("pd")
	if p.Status.NetworkInterfaceID != eni2prefix || p.Status.PrivateIP != "10.0.8.3" {
		t.Fatalf("status %+v, want the prefix ENI %s", p.Status, eni2prefix)
	}
}

// TestNetworkInterfaceNotFound: a pod IP no ENI holds is reported with a
// stable reason and no address is associated.
func TestNetworkInterfaceNotFound(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.pod("lost", "10.9.9.9", "10.9.0.1", nil)
	w.peip("lost", "lost", nil)
	w.waitReason("lost", networkingv1alpha1.PodElasticIPReasonNetworkInterfaceNotFound)
}

// TestPodNotRunning: nothing is allocated for a pending pod without IP.
func TestPodNotRunning(t *testing.T) {
	w := newWorld(t, worldOpts{})
	pod := w.pod("pending", "", "", nil)
	w.peip("pending", "pending", nil)
	w.waitReason("pending", networkingv1alpha1.PodElasticIPReasonPodNotRunning)
	time.Sleep(time.Second)
	if n := w.calls("AllocateAddress"); n != 0 {
		t.Fatalf("allocated %d addresses for a pending pod", n)
	}
	w.setPodIP(pod, "10.0.1.9", hostIP1)
	w.waitReady("pending")
}

// TestQuotaExceeded: the account's quota is reported as QuotaExceeded.
func TestQuotaExceeded(t *testing.T) {
	w := newWorld(t, worldOpts{settings: core.Settings{EC2AddressQuota: 1}})
	w.pod("q1", "10.0.1.11", hostIP1, nil)
	w.pod("q2", "10.0.1.12", hostIP1, nil)
	w.peip("q1", "q1", nil)
	w.waitReady("q1")
	w.peip("q2", "q2", nil)
	p := w.waitReason("q2", networkingv1alpha1.PodElasticIPReasonQuotaExceeded)
	// One allocation attempt per pass, a pass per backoff step.
	w.assertBackedOff([]string{"q2"}, networkingv1alpha1.PodElasticIPReasonQuotaExceeded, "ec2/AllocateAddress")
	if c := p.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse {
		t.Fatalf("Ready = %+v", c)
	}
	// Freeing the quota lets it through.
	w.delete("q1")
	w.waitGone("q1")
	w.waitReady("q2")
}

// TestReleasePolicies: Retain gives an Auto address back untagged;
// AfterDelay keeps it for a PodElasticIP of the same pod, which gets the
// same address.
func TestReleasePolicies(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.pod("keep", "10.0.1.20", hostIP1, nil)
	w.peip("keep", "keep", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseRetain
		p.Spec.Tags = map[string]string{"team": "edge"}
	})
	kept := w.waitReady("keep").Status.AllocationID
	w.delete("keep")
	w.waitGone("keep")
	a, ok := w.address(kept)
	if !ok || a.AssociationID != "" {
		t.Fatalf("retained address %+v (found %v), want it kept and disassociated", a, ok)
	}
	if tags := tagMap(a.Tags); tags[decide.TagCluster] != "" || tags[decide.TagOwnerUID] != "" || tags["team"] != "edge" {
		t.Errorf("retained address tags %v, want edgeplane's removed and the user's kept", tags)
	}

	w.pod("sts-0", "10.0.1.21", hostIP1, nil)
	w.peip("sts-0", "sts-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
		p.Spec.ReleaseDelay = &metav1.Duration{Duration: time.Hour}
	})
	first := w.waitReady("sts-0").Status.AllocationID
	w.delete("sts-0")
	w.waitGone("sts-0")
	a, _ = w.address(first)
	if a.AssociationID != "" || tagMap(a.Tags)[decide.TagReleaseAfter] == "" {
		t.Fatalf("kept address %+v, want disassociated with %s", a, decide.TagReleaseAfter)
	}
	w.deletePod("sts-0")
	w.pod("sts-0", "10.0.1.22", hostIP1, nil)
	w.peip("sts-0", "sts-0", nil)
	p := w.waitReady("sts-0")
	if p.Status.AllocationID != first || p.Status.PrivateIP != "10.0.1.22" {
		t.Fatalf("recreated pod got %s at %s, want the kept %s", p.Status.AllocationID, p.Status.PrivateIP, first)
	}
	a, _ = w.address(first)
	if tags := tagMap(a.Tags); tags[decide.TagReleaseAfter] != "" || tags[decide.TagOwnerUID] != string(p.UID) {
		t.Errorf("adopted kept address tags %v", tags)
	}
	if n := w.calls("AllocateAddress"); n != 2 {
		t.Errorf("allocations = %d, want 2 (retain test and the first sts-0)", n)
	}
}

// TestNamespacedProviderConfig: a PodElasticIP may use its namespace's own
// ProviderConfig (here with static credentials from a Secret in that
// namespace, a key the emulator is told to accept, at the emulator the
// manager allows tenants); the usage is recorded, and the address carries
// the cluster's identity and the namespace.
func TestNamespacedProviderConfig(t *testing.T) {
	w := newWorld(t, worldOpts{tenantEndpoint: true})
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) {
		s.EC2Credentials["AKIDEXAMPLE"] = core.EC2Credential{SecretAccessKey: "secret"}
	}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "aws-creds"},
		Data: map[string][]byte{cloudv1alpha1.SecretKeyAWSAccessKeyID: []byte("AKIDEXAMPLE"), cloudv1alpha1.SecretKeyAWSSecretAccessKey: []byte("secret")}}
	if err := w.c.Create(w.ctx, secret); err != nil {
		t.Fatal(err)
	}
	pc := &cloudv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "tenant"}}
	pc.Spec.Provider, pc.Spec.Region, pc.Spec.Endpoint = cloudv1alpha1.ProviderAWS, "us-east-1", w.sim.URL()
	pc.Spec.Credentials.Source = cloudv1alpha1.CredentialsSecret
	pc.Spec.Credentials.SecretRef = &cloudv1alpha1.LocalSecretReference{Name: "aws-creds"}
	if err := w.c.Create(w.ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pc) })
	w.pod("tenant-0", "10.0.1.90", hostIP1, nil)
	p := w.peip("tenant-0", "tenant-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: "tenant"}
	})
	ready := w.waitReady("tenant-0")
	if a, _ := w.address(ready.Status.AllocationID); tagMap(a.Tags)[decide.TagCluster] != w.cluster || tagMap(a.Tags)[decide.TagNamespace] != w.ns {
		t.Errorf("address tags %v; want the cluster's identity %s and the namespace %s from the allocation", tagMap(a.Tags), w.cluster, w.ns)
	}
	u := &cloudv1alpha1.ProviderConfigUsage{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: string(p.UID)}, u); err != nil {
		t.Fatalf("no ProviderConfigUsage for the PodElasticIP: %v", err)
	}
	if u.ProviderConfigReference.Kind != cloudv1alpha1.ProviderConfigKind || u.ProviderConfigReference.Name != "tenant" || u.ResourceReference.Kind != "PodElasticIP" {
		t.Fatalf("usage %+v", u.TypedProviderConfigUsage)
	}
}

// keptKubeletConditions fails unless the pod still has the conditions
// setPodIP gave it: the manager's cache keeps none of them, so a write of
// the readiness gate's condition must name only that one.
func keptKubeletConditions(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	for _, want := range kubeletConditions() {
		i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == want.Type })
		if i < 0 || pod.Status.Conditions[i].Status != want.Status || pod.Status.Conditions[i].Reason != want.Reason {
			t.Errorf("pod %s: after its readiness gate was written, its %s condition is gone or changed: %+v", pod.Name, want.Type, pod.Status.Conditions)
		}
	}
}
