package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

func peip(name string, mutate func(*networkingv1alpha1.PodElasticIP)) *networkingv1alpha1.PodElasticIP {
	p := &networkingv1alpha1.PodElasticIP{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: networkingv1alpha1.PodElasticIPSpec{
			PodName:    "web-0",
			Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// TestPodElasticIPValidation proves every schema and CEL rule of
// PodElasticIP rejects a bad object, and that the good shapes pass.
func TestPodElasticIPValidation(t *testing.T) {
	type pe = networkingv1alpha1.PodElasticIP
	cases := map[string]struct {
		mutate  func(*pe)
		wantErr string
	}{
		"auto": {},
		"auto with pool and tags": {mutate: func(p *pe) {
			p.Spec.Allocation.PublicIPv4Pool = "amazon-staticbgp"
			p.Spec.Tags = map[string]string{"team": "edge"}
		}},
		"pool": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "pec-ip-pool"}
		}},
		"static by tag": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "pec-ip-pool"}
		}},
		"static by allocation ID": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eipalloc-0bc8fa6ecc46abcde"}
		}},
		"after delay": {mutate: func(p *pe) {
			p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
			p.Spec.ReleaseDelay = &metav1.Duration{Duration: 10 * time.Minute}
		}},
		"retain on auto": {mutate: func(p *pe) { p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseRetain }},
		"namespaced provider config": {mutate: func(p *pe) {
			p.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "tenant"}
		}},

		"no pod name":  {mutate: func(p *pe) { p.Spec.PodName = "" }, wantErr: "spec.podName"},
		"unknown mode": {mutate: func(p *pe) { p.Spec.Allocation.Mode = "Random" }, wantErr: "spec.allocation.mode"},
		"pool on static": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "k", PublicIPv4Pool: "amazon"}
		}, wantErr: "publicIPv4Pool is only allowed with mode Auto"},
		"auto with tag key": {mutate: func(p *pe) { p.Spec.Allocation.TagKey = "k" },
			wantErr: "mode Auto takes neither tagKey nor allocationID"},
		"auto with allocation ID": {mutate: func(p *pe) { p.Spec.Allocation.AllocationID = "eipalloc-0bc8fa6ecc46abcde" },
			wantErr: "mode Auto takes neither tagKey nor allocationID"},
		"pool without tag key": {mutate: func(p *pe) { p.Spec.Allocation.Mode = networkingv1alpha1.PodElasticIPModePool },
			wantErr: "mode Pool requires tagKey and takes no allocationID"},
		"pool with allocation ID": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "k", AllocationID: "eipalloc-0bc8fa6ecc46abcde"}
		}, wantErr: "mode Pool requires tagKey and takes no allocationID"},
		"static with neither": {mutate: func(p *pe) { p.Spec.Allocation.Mode = networkingv1alpha1.PodElasticIPModeStatic },
			wantErr: "mode Static requires exactly one of tagKey or allocationID"},
		"static with both": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "k", AllocationID: "eipalloc-0bc8fa6ecc46abcde"}
		}, wantErr: "mode Static requires exactly one of tagKey or allocationID"},
		"bad allocation ID": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eip-123"}
		}, wantErr: "spec.allocation.allocationID"},
		"aws tag key": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "AWS:cloudformation"}
		}, wantErr: "tagKey must not start with aws:"},
		"edgeplane tag key": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "edgeplane.io/cluster"}
		}, wantErr: "tagKey must not be one of edgeplane's own tag keys"},
		"delete on pool": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "k"}
			p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseDelete
		}, wantErr: "releasePolicy Delete releases the address and is only allowed with allocation.mode Auto"},
		"after delay without delay": {mutate: func(p *pe) { p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay },
			wantErr: "releaseDelay is required with releasePolicy AfterDelay"},
		"delay without after delay": {mutate: func(p *pe) { p.Spec.ReleaseDelay = &metav1.Duration{Duration: time.Minute} },
			wantErr: "releaseDelay is required with releasePolicy AfterDelay"},
		"zero delay": {mutate: func(p *pe) {
			p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
			p.Spec.ReleaseDelay = &metav1.Duration{}
		}, wantErr: "releaseDelay must be a duration between"},
		"too long delay": {mutate: func(p *pe) {
			p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
			p.Spec.ReleaseDelay = &metav1.Duration{Duration: 1000 * time.Hour}
		}, wantErr: "releaseDelay must be a duration between"},
		"connection secret": {mutate: func(p *pe) {
			p.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "eip"}
		}, wantErr: "writeConnectionSecretToRef is not supported: a PodElasticIP has no connection secret"},
		"unknown release policy": {mutate: func(p *pe) { p.Spec.ReleasePolicy = "Sometimes" }, wantErr: "spec.releasePolicy"},
		"reserved tag prefix": {mutate: func(p *pe) { p.Spec.Tags = map[string]string{"aws-samples.github.com/aws-pod-eip-controller-pod": "x"} },
			wantErr: "tags must not use the"},
		"aws tag": {mutate: func(p *pe) { p.Spec.Tags = map[string]string{"aws:x": "y"} }, wantErr: "tags must not use the"},
		"long tag value": {mutate: func(p *pe) { p.Spec.Tags = map[string]string{"k": strings.Repeat("v", 256)} },
			wantErr: "tag keys are at most 127 and values at most 255 characters"},
		"tencent": {mutate: func(p *pe) {
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{AddressType: "HighQualityEIP", InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR",
				InternetMaxBandwidthOut: 100, InternetServiceProvider: "CMCC"}
		}},
		"static by tencent address ID": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eip-0a1b2c3d"}
		}},
		"tencent on pool": {mutate: func(p *pe) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "k"}
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{}
		}, wantErr: "tencent says how Auto allocates on Tencent Cloud and is only allowed with allocation.mode Auto"},
		"tencent with public IPv4 pool": {mutate: func(p *pe) {
			p.Spec.Allocation.PublicIPv4Pool = "amazon"
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{}
		}, wantErr: "allocation.publicIPv4Pool is AWS's and tencent is Tencent Cloud's: set at most one"},
		"tencent bandwidth too high": {mutate: func(p *pe) {
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{InternetMaxBandwidthOut: 2001}
		}, wantErr: "spec.tencent.internetMaxBandwidthOut"},
		"tencent unknown charge type": {mutate: func(p *pe) {
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{InternetChargeType: "BANDWIDTH_PREPAID_BY_MONTH"}
		}, wantErr: "spec.tencent.internetChargeType"},
		"tencent unknown address type": {mutate: func(p *pe) {
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{AddressType: "AnycastEIP"}
		}, wantErr: "spec.tencent.addressType"},
		"tencent unknown line": {mutate: func(p *pe) {
			p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{InternetServiceProvider: "ACME"}
		}, wantErr: "spec.tencent.internetServiceProvider"},
		"too many tags": {mutate: func(p *pe) {
			p.Spec.Tags = map[string]string{}
			for i := range 21 {
				p.Spec.Tags[fmt.Sprintf("k%d", i)] = "v"
			}
		}, wantErr: "spec.tags"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			env.ExpectCreate(t, peip(fmt.Sprintf("peip-v%d", i), tc.mutate), tc.wantErr)
		})
	}
}

// TestPodElasticIPImmutableFields proves podName and allocation cannot
// change, while the release policy and tags can.
func TestPodElasticIPImmutableFields(t *testing.T) {
	ctx := testenv.Context(t)
	p := peip("peip-immutable", nil)
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })

	changed := p.DeepCopy()
	changed.Spec.PodName = "web-1"
	if err := env.Client.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "podName is immutable") {
		t.Fatalf("changing podName: err = %v, want podName is immutable", err)
	}
	changed = p.DeepCopy()
	changed.Spec.Allocation.PublicIPv4Pool = "byoip"
	if err := env.Client.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "allocation is immutable") {
		t.Fatalf("changing allocation: err = %v, want allocation is immutable", err)
	}
	changed = p.DeepCopy()
	changed.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseRetain
	changed.Spec.Tags = map[string]string{"team": "edge"}
	if err := env.Client.Update(ctx, changed); err != nil {
		t.Fatalf("changing release policy and tags: %v", err)
	}
}

// TestPodElasticIPDefaults proves the API server fills the provider config
// reference, the management policies and the allocation mode.
func TestPodElasticIPDefaults(t *testing.T) {
	ctx := testenv.Context(t)
	p := peip("peip-defaults", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Allocation.Mode = "" })
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })
	if p.Spec.Allocation.Mode != networkingv1alpha1.PodElasticIPModeAuto {
		t.Errorf("mode = %q, want Auto", p.Spec.Allocation.Mode)
	}
	if r := p.Spec.ProviderConfigReference; r == nil || r.Kind != "ClusterProviderConfig" || r.Name != "default" {
		t.Errorf("providerConfigRef = %+v, want ClusterProviderConfig/default", r)
	}
	if len(p.Spec.ManagementPolicies) != 1 || p.Spec.ManagementPolicies[0] != xpv2.ManagementActionAll {
		t.Errorf("managementPolicies = %v, want [*]", p.Spec.ManagementPolicies)
	}
	if got := p.EffectiveReleasePolicy(); got != networkingv1alpha1.PodElasticIPReleaseDelete {
		t.Errorf("effective release policy = %q, want Delete", got)
	}
}

// TestPodElasticIPTencentBlock proves spec.tencent gets Tencent Cloud's
// defaults from the API server, and can be neither changed, added nor
// removed once the PodElasticIP exists.
func TestPodElasticIPTencentBlock(t *testing.T) {
	ctx := testenv.Context(t)
	p := peip("peip-tencent", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{} })
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })
	want := networkingv1alpha1.PodElasticIPTencent{AddressType: "EIP", InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR",
		InternetMaxBandwidthOut: 1, InternetServiceProvider: "BGP"}
	if p.Spec.Tencent == nil || *p.Spec.Tencent != want {
		t.Errorf("tencent = %+v, want the defaults %+v", p.Spec.Tencent, want)
	}
	if got := p.TencentSettings(); got != want {
		t.Errorf("TencentSettings() = %+v, want %+v", got, want)
	}
	if got := peip("x", nil).TencentSettings(); got != want {
		t.Errorf("TencentSettings() without the block = %+v, want %+v", got, want)
	}

	changed := p.DeepCopy()
	changed.Spec.Tencent.InternetMaxBandwidthOut = 10
	if err := env.Client.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "tencent is immutable") {
		t.Fatalf("changing tencent: err = %v, want tencent is immutable", err)
	}
	changed = p.DeepCopy()
	changed.Spec.Tencent = nil
	if err := env.Client.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "tencent is immutable") {
		t.Fatalf("removing tencent: err = %v, want tencent is immutable", err)
	}

	plain := peip("peip-tencent-added", nil)
	if err := env.Client.Create(ctx, plain); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, plain) })
	changed = plain.DeepCopy()
	changed.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{}
	if err := env.Client.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "tencent is immutable") {
		t.Fatalf("adding tencent: err = %v, want tencent is immutable", err)
	}
}
