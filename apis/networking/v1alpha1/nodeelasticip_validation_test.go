package v1alpha1_test

import (
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

func validNodeElasticIP(name string) *networkingv1alpha1.NodeElasticIP {
	return &networkingv1alpha1.NodeElasticIP{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1alpha1.NodeElasticIPSpec{NodeName: "node-" + name},
	}
}

func poolOf(filters ...networkingv1alpha1.AddressFilter) networkingv1alpha1.NodeElasticIPAllocation {
	return networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModePool,
		Pool: &networkingv1alpha1.NodeElasticIPPool{Filters: filters}}
}

// TestNodeElasticIPCreateValidation proves each schema and CEL rule
// rejects a bad object and lets a good one through.
func TestNodeElasticIPCreateValidation(t *testing.T) {
	with := func(name string, mutate func(n *networkingv1alpha1.NodeElasticIP)) client.Object {
		n := validNodeElasticIP(name)
		mutate(n)
		return n
	}
	envTag := networkingv1alpha1.AddressFilter{Name: "tag:env", Values: []string{"dev"}}
	cases := map[string]struct {
		obj     client.Object
		wantErr string // empty: must be accepted
	}{
		"minimal": {obj: validNodeElasticIP("neip-minimal")},
		"auto, every field": {obj: with("neip-auto", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation.PublicIPv4Pool = "ipv4pool-ec2-0123456789abcdef0"
			n.Spec.ReleasePolicy = networkingv1alpha1.NodeElasticIPReleaseRetain
			n.Spec.TaintKey = "kubeip.com/not-ready"
			n.Spec.Tags = map[string]string{"team": "edge"}
			n.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate}
		})},
		"pool": {obj: with("neip-pool", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(envTag, networkingv1alpha1.AddressFilter{Name: "tag-key", Values: []string{"kubeip"}},
				networkingv1alpha1.AddressFilter{Name: "public-ip", Values: []string{"203.0.113.*"}})
			n.Spec.Allocation.Pool.OrderBy = "-Tag:priority"
		})},
		"static": {obj: with("neip-static", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eipalloc-0123456789abcdef0"}
		})},
		"empty nodeName": {obj: with("neip-nonode", func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.NodeName = "" }),
			wantErr: "spec.nodeName"},
		"unknown mode": {obj: with("neip-mode", func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.Allocation.Mode = "Lease" }),
			wantErr: "spec.allocation.mode"},
		"pool without pool": {obj: with("neip-pool0", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation.Mode = networkingv1alpha1.NodeElasticIPModePool
		}), wantErr: "pool is required with mode Pool"},
		"pool on auto": {obj: with("neip-pool1", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation.Pool = &networkingv1alpha1.NodeElasticIPPool{Filters: []networkingv1alpha1.AddressFilter{envTag}}
		}), wantErr: "pool is required with mode Pool and only allowed with it"},
		"pool without filters": {obj: with("neip-pool2", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf()
		}), wantErr: "spec.allocation.pool.filters"},
		"pool filter on association": {obj: with("neip-pool3", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(networkingv1alpha1.AddressFilter{Name: "instance-id", Values: []string{"i-1"}})
		}), wantErr: "filter name must be tag:<key>, tag-key, public-ip or allocation-id"},
		"pool filter tag without key": {obj: with("neip-pool4", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(networkingv1alpha1.AddressFilter{Name: "tag:", Values: []string{"x"}})
		}), wantErr: "filter name must be"},
		"pool filter without values": {obj: with("neip-pool5", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(networkingv1alpha1.AddressFilter{Name: "tag:env"})
		}), wantErr: "values"},
		"pool with publicIPv4Pool": {obj: with("neip-pool6", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(envTag)
			n.Spec.Allocation.PublicIPv4Pool = "amazon"
		}), wantErr: "publicIPv4Pool is only allowed with mode Auto"},
		"unknown orderBy": {obj: with("neip-pool7", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(envTag)
			n.Spec.Allocation.Pool.OrderBy = "InstanceId"
		}), wantErr: "spec.allocation.pool.orderBy"},
		"static without allocationID": {obj: with("neip-static0", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation.Mode = networkingv1alpha1.NodeElasticIPModeStatic
		}), wantErr: "allocationID is required with mode Static"},
		"allocationID on auto": {obj: with("neip-static1", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation.AllocationID = "eipalloc-0123456789abcdef0"
		}), wantErr: "allocationID is required with mode Static and only allowed with it"},
		"malformed allocationID": {obj: with("neip-static2", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eip-1"}
		}), wantErr: "spec.allocation.allocationID"},
		"delete on pool": {obj: with("neip-rel", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = poolOf(envTag)
			n.Spec.ReleasePolicy = networkingv1alpha1.NodeElasticIPReleaseDelete
		}), wantErr: "releasePolicy Delete releases the address and is only allowed with allocation.mode Auto"},
		"unknown releasePolicy": {obj: with("neip-rel2", func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.ReleasePolicy = "AfterDelay" }),
			wantErr: "spec.releasePolicy"},
		"malformed taintKey": {obj: with("neip-taint", func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.TaintKey = "not a key" }),
			wantErr: "spec.taintKey"},
		"reserved tag": {obj: with("neip-tag1", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Tags = map[string]string{"edgeplane.io/cluster": "x"}
		}), wantErr: "tags must not use"},
		"aws tag": {obj: with("neip-tag2", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Tags = map[string]string{"AWS:name": "x"}
		}), wantErr: "tags must not use"},
		"tag value too long": {obj: with("neip-tag3", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Tags = map[string]string{"k": strings.Repeat("v", 256)}
		}), wantErr: "values at most 255"},
		"connection secret": {obj: with("neip-secret", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "eip"}
		}), wantErr: "writeConnectionSecretToRef is not supported: a NodeElasticIP has no connection secret"},
		"namespaced ProviderConfig": {obj: with("neip-pc", func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "default"}
		}), wantErr: "can only use a ClusterProviderConfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { env.ExpectCreate(t, tc.obj, tc.wantErr) })
	}
}

// TestNodeElasticIPDefaults checks the defaults the API server fills in.
func TestNodeElasticIPDefaults(t *testing.T) {
	ctx := testenv.Context(t)
	n := validNodeElasticIP("neip-defaults")
	env.ExpectCreate(t, n, "")
	got := &networkingv1alpha1.NodeElasticIP{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
		t.Fatal(err)
	}
	want := networkingv1alpha1.NodeElasticIPSpec{
		ManagedResourceSpec: xpv2.ManagedResourceSpec{
			ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
			ManagementPolicies:      xpv2.ManagementPolicies{xpv2.ManagementActionAll},
		},
		NodeName:   "node-neip-defaults",
		Allocation: networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeAuto},
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got.EffectiveReleasePolicy() != networkingv1alpha1.NodeElasticIPReleaseDelete {
		t.Errorf("Auto's release policy = %s, want Delete", got.EffectiveReleasePolicy())
	}

	p := validNodeElasticIP("neip-defaults-pool")
	p.Spec.Allocation = poolOf(networkingv1alpha1.AddressFilter{Name: "tag:kubeip", Values: []string{"reserved"}})
	env.ExpectCreate(t, p, "")
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Allocation.Pool.OrderBy != "PublicIp" || got.EffectiveReleasePolicy() != networkingv1alpha1.NodeElasticIPReleaseRetain {
		t.Errorf("pool defaults: orderBy %q, release policy %s; want PublicIp, Retain", got.Spec.Allocation.Pool.OrderBy, got.EffectiveReleasePolicy())
	}
}

// TestNodeElasticIPUpdateValidation proves the immutability rules.
func TestNodeElasticIPUpdateValidation(t *testing.T) {
	cases := map[string]struct {
		update  func(n *networkingv1alpha1.NodeElasticIP)
		wantErr string
	}{
		"tags may change":     {update: func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.Tags = map[string]string{"a": "b"} }},
		"taintKey may change": {update: func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.TaintKey = "example.com/wait" }},
		"releasePolicy may change": {update: func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.ReleasePolicy = networkingv1alpha1.NodeElasticIPReleaseRetain
		}},
		"nodeName is immutable": {update: func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.NodeName = "other" },
			wantErr: "nodeName is immutable"},
		"allocation is immutable": {update: func(n *networkingv1alpha1.NodeElasticIP) { n.Spec.Allocation.PublicIPv4Pool = "amazon" },
			wantErr: "allocation is immutable"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := testenv.Context(t)
			n := validNodeElasticIP("neip-upd-" + strings.ReplaceAll(strings.ToLower(name), " ", "-"))
			env.ExpectCreate(t, n, "")
			tc.update(n)
			err := env.Client.Update(ctx, n)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("valid update rejected: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("invalid update accepted; want %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}
