package legacy_test

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// aws-samples/aws-pod-eip-controller. From its README: the pod annotations
// aws-samples.github.com/aws-pod-eip-controller-type (auto, fixed-tag,
// fixed-tag-value), -public-ipv4-pool, -fixed-tag and -fixed-tag-value; the
// pod label aws-pod-eip-controller-public-ip; the example tag key
// pec-ip-pool with the value nginx-demo-ns/app-nginx-demo-0 (namespace/pod)
// and the cluster name eip-controller-demo. From its code: the other pod
// labels, the address tags aws-samples.github.com/aws-pod-eip-controller-type,
// -cluster-name and -pod, and the Event reason EIPAssociated.
const (
	pecClusterName = "eip-controller-demo"
	pecNamespace   = "nginx-demo-ns"
	pecENI         = "eni-0000000000000001"
)

func awsPodEIPController() project {
	return project{
		name: "aws-pod-eip-controller",
		fixtures: func(fx *core.Fixtures) {
			ips := []string{"10.0.0.10"}
			for i := 1; i <= 10; i++ {
				ips = append(ips, fmt.Sprintf("10.0.1.%d", i))
			}
			fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{InstanceID: "i-0000000000000001", VpcID: "vpc-1", SubnetID: "subnet-1",
				NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: pecENI, PrivateIPAddresses: ips}}})
			fx.EC2.Addresses = append(fx.EC2.Addresses,
				// The README's fixed-tag-value example, verbatim.
				core.EC2AddressFixture{AllocationID: "eipalloc-0bc8fa6ecc46abcde", PublicIP: "123.123.123.123",
					Tags: map[string]string{"pec-ip-pool": "nginx-demo-ns/app-nginx-demo-0"}},
				// The README's fixed-tag example: tag key pec-ip-pool, empty value.
				core.EC2AddressFixture{AllocationID: "eipalloc-00000000000000f01", PublicIP: "123.123.123.124",
					Tags: map[string]string{"pec-ip-pool": ""}},
				// In the pool too, but the legacy controller claimed it for
				// another pod: fixed-tag never takes it.
				core.EC2AddressFixture{AllocationID: "eipalloc-00000000000000f02", PublicIP: "123.123.123.125",
					Tags: map[string]string{"pec-ip-pool": "",
						"aws-samples.github.com/aws-pod-eip-controller-type":         "fixed-tag",
						"aws-samples.github.com/aws-pod-eip-controller-cluster-name": pecClusterName,
						"aws-samples.github.com/aws-pod-eip-controller-pod":          "nginx-demo-ns/app-nginx-elsewhere",
					}},
				// Allocated by the legacy controller for app-nginx-legacy and
				// associated with its IP: adopted, not allocated again.
				core.EC2AddressFixture{AllocationID: "eipalloc-00000000000000a01", PublicIP: "198.51.100.7",
					NetworkInterfaceID: pecENI, PrivateIPAddress: "10.0.1.3",
					Tags: map[string]string{
						"aws-samples.github.com/aws-pod-eip-controller-type":         "auto",
						"aws-samples.github.com/aws-pod-eip-controller-cluster-name": pecClusterName,
						"aws-samples.github.com/aws-pod-eip-controller-pod":          "nginx-demo-ns/app-nginx-legacy",
					}},
			)
		},
		setup: func(w *world) {
			w.namespace(pecNamespace)
			w.node("pec-node", "10.0.0.10", nil)
		},
		test: testPEC,
	}
}

// pecPod creates a running pod on pec-node with the pod IP and annotations.
func pecPod(t *testing.T, w *world, name, ip string, annotations map[string]string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pecNamespace, Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: "pec-node", Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.20"}}},
	}
	w.create(p)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.HostIP = ip, "10.0.0.10"
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		return env.Client.Status().Update(w.ctx, p)
	})
	if err != nil {
		t.Fatalf("setting pod %s's IP: %v", name, err)
	}
	return p
}

// waitLabels waits until the pod carries the public-IP label and returns its labels.
func waitLabels(t *testing.T, w *world, pod *corev1.Pod) map[string]string {
	t.Helper()
	var labels map[string]string
	eventually.That(t.Context(), t, pod.Name+" labelled with its public IP", func() (bool, string) {
		p := &corev1.Pod{}
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return false, err.Error()
		}
		labels = p.Labels
		peip := &networkingv1alpha1.PodElasticIP{}
		state := "no PodElasticIP"
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(pod), peip); err == nil {
			state = fmt.Sprintf("PodElasticIP status %+v", peip.Status)
		}
		return labels["aws-pod-eip-controller-public-ip"] != "", fmt.Sprintf("labels %v; %s", labels, state)
	})
	return labels
}

// associated returns the address associated with a private IP in the cloud.
func associated(w *world, privateIP string) (core.EC2Address, bool) {
	for _, a := range w.emu.World().Snapshot().EC2.Addresses {
		if a.NetworkInterfaceID == pecENI && a.PrivateIPAddress == privateIP {
			return a, true
		}
	}
	return core.EC2Address{}, false
}

func testPEC(t *testing.T, w *world) {
	cases := []struct {
		pod, ip     string
		annotations map[string]string
		// wantLabels are the legacy labels besides the public IP.
		wantLabels map[string]string
		// wantIP is the address's public IP ("" any), wantPool its
		// prefix ("" any).
		wantIP, wantPrefix string
	}{
		{pod: "app-nginx-demo", ip: "10.0.1.1",
			annotations: map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "auto"},
			wantLabels:  map[string]string{"aws-pod-eip-controller-type": "auto"}, wantPrefix: "198.18.0.0/16"},
		{pod: "app-nginx-demo-bgp", ip: "10.0.1.2",
			annotations: map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "auto",
				"aws-samples.github.com/aws-pod-eip-controller-public-ipv4-pool": "amazon-staticbgp"},
			wantLabels: map[string]string{"aws-pod-eip-controller-type": "auto", "aws-pod-eip-controller-public-ipv4-pool": "amazon-staticbgp"},
			wantPrefix: "198.19.0.0/16"},
		// fixed-tag-value first: both README examples use the tag key
		// pec-ip-pool, and fixed-tag takes any free address with that key.
		{pod: "app-nginx-demo-0", ip: "10.0.1.4",
			annotations: map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "fixed-tag-value",
				"aws-samples.github.com/aws-pod-eip-controller-fixed-tag-value": "pec-ip-pool"},
			wantLabels: map[string]string{"aws-pod-eip-controller-type": "fixed-tag-value", "aws-pod-eip-controller-fixed-tag-value": "pec-ip-pool"},
			wantIP:     "123.123.123.123"},
		{pod: "app-nginx-demo-fixed", ip: "10.0.1.5",
			annotations: map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "fixed-tag",
				"aws-samples.github.com/aws-pod-eip-controller-fixed-tag": "pec-ip-pool"},
			wantLabels: map[string]string{"aws-pod-eip-controller-type": "fixed-tag", "aws-pod-eip-controller-fixed-tag": "pec-ip-pool"},
			wantIP:     "123.123.123.124"},
		// The legacy controller's own address for this pod, by its tags.
		{pod: "app-nginx-legacy", ip: "10.0.1.3",
			annotations: map[string]string{"aws-samples.github.com/aws-pod-eip-controller-type": "auto"},
			wantLabels:  map[string]string{"aws-pod-eip-controller-type": "auto"}, wantIP: "198.51.100.7"},
	}
	allocated := w.emu.World().Stats()["ec2/AllocateAddress/OK"]
	for _, tc := range cases {
		// In order: fixed-tag relies on fixed-tag-value's address being taken.
		ok := t.Run(tc.pod, func(t *testing.T) {
			pod := pecPod(t, w, tc.pod, tc.ip, tc.annotations)
			labels := waitLabels(t, w, pod)
			public := labels["aws-pod-eip-controller-public-ip"]
			for k, v := range tc.wantLabels {
				if labels[k] != v {
					t.Errorf("label %s = %q, want %q (labels %v)", k, labels[k], v, labels)
				}
			}
			a, ok := associated(w, tc.ip)
			if !ok || a.PublicIP != public {
				t.Fatalf("label aws-pod-eip-controller-public-ip=%s, but the cloud associates %+v with %s", public, a, tc.ip)
			}
			if tc.wantIP != "" && public != tc.wantIP {
				t.Errorf("public IP %s, want %s", public, tc.wantIP)
			}
			if tc.wantPrefix != "" && !netip.MustParsePrefix(tc.wantPrefix).Contains(netip.MustParseAddr(public)) {
				t.Errorf("public IP %s is not from the pool's %s", public, tc.wantPrefix)
			}
			eventually.That(t.Context(), t, "EIPAssociated Event on "+tc.pod, func() (bool, string) {
				evs := events(t, w.ctx, pecNamespace, string(pod.UID), "EIPAssociated")
				return len(evs) > 0, fmt.Sprintf("%d events", len(evs))
			})
		})
		if !ok {
			return
		}
	}
	// Two auto pods needed new addresses; the legacy one was adopted.
	if n := w.emu.World().Stats()["ec2/AllocateAddress/OK"] - allocated; n != 2 {
		t.Errorf("%d addresses allocated, want 2 (the legacy-tagged address is adopted)", n)
	}
}
