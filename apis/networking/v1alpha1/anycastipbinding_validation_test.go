package v1alpha1_test

import (
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

func validBinding(name string) *networkingv1alpha1.AnycastIPBinding {
	return &networkingv1alpha1.AnycastIPBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1alpha1.AnycastIPBindingSpec{NodeName: "node-" + name},
	}
}

// TestAnycastIPBindingCreateValidation proves each schema and CEL rule
// rejects a bad object and lets a good one through.
func TestAnycastIPBindingCreateValidation(t *testing.T) {
	with := func(name string, mutate func(b *networkingv1alpha1.AnycastIPBinding)) client.Object {
		b := validBinding(name)
		mutate(b)
		return b
	}
	cases := map[string]struct {
		obj     client.Object
		wantErr string // empty: must be accepted
	}{
		"minimal": {obj: validBinding("aipb-minimal")},
		"every field": {obj: with("aipb-full", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.AddressType = networkingv1alpha1.AddressTypeAnycastEIP
			b.Spec.AnycastZone = "ANYCAST_ZONE_GLOBAL"
			b.Spec.InternetMaxBandwidthOut = ptr.To[int64](100)
			b.Spec.InternetChargeType = "BANDWIDTH_POSTPAID_BY_HOUR"
			b.Spec.Tags = map[string]string{"team": "edge"}
			b.Spec.AddressID = "eip-0a1b2c3d"
			b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
		})},
		"empty nodeName": {obj: with("aipb-nonode", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.NodeName = "" }),
			wantErr: "spec.nodeName"},
		"unknown addressType": {obj: with("aipb-type", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressType = "WanIP" }),
			wantErr: "spec.addressType"},
		"anycastZone without AnycastEIP": {obj: with("aipb-zone", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.AddressType = networkingv1alpha1.AddressTypeEIP
			b.Spec.AnycastZone = "ANYCAST_ZONE_OVERSEAS"
		}), wantErr: "anycastZone is only valid with addressType AnycastEIP"},
		"unknown anycastZone": {obj: with("aipb-zone2", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AnycastZone = "MARS" }),
			wantErr: "spec.anycastZone"},
		"bandwidth zero": {obj: with("aipb-bw0", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.InternetMaxBandwidthOut = ptr.To[int64](0) }),
			wantErr: "spec.internetMaxBandwidthOut"},
		"bandwidth too high": {obj: with("aipb-bw", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.InternetMaxBandwidthOut = ptr.To[int64](2001) }),
			wantErr: "spec.internetMaxBandwidthOut"},
		"unknown charge type": {obj: with("aipb-charge", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.InternetChargeType = "FREE" }),
			wantErr: "spec.internetChargeType"},
		"malformed addressID": {obj: with("aipb-id", func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-XYZ" }),
			wantErr: "spec.addressID"},
		"reserved edgeplane tag": {obj: with("aipb-tag1", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.Tags = map[string]string{"edgeplane.io/cluster": "x"}
		}), wantErr: "are reserved"},
		"reserved legacy tag": {obj: with("aipb-tag2", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.Tags = map[string]string{"aia-node-name": "x"}
		}), wantErr: "are reserved"},
		"tag value too long": {obj: with("aipb-tag3", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.Tags = map[string]string{"k": strings.Repeat("v", 256)}
		}), wantErr: "values at most 255"},
		"connection secret": {obj: with("aipb-secret", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "eip"}
		}), wantErr: "writeConnectionSecretToRef is not supported: an AnycastIPBinding has no connection secret"},
		"namespaced ProviderConfig": {obj: with("aipb-pc", func(b *networkingv1alpha1.AnycastIPBinding) {
			b.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "default"}
		}), wantErr: "can only use a ClusterProviderConfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { env.ExpectCreate(t, tc.obj, tc.wantErr) })
	}
}

// TestAnycastIPBindingDefaults checks the defaults the API server fills in.
func TestAnycastIPBindingDefaults(t *testing.T) {
	ctx := testenv.Context(t)
	b := validBinding("aipb-defaults")
	env.ExpectCreate(t, b, "")
	got := &networkingv1alpha1.AnycastIPBinding{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	want := networkingv1alpha1.AnycastIPBindingSpec{
		ManagedResourceSpec: xpv2.ManagedResourceSpec{
			ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
			ManagementPolicies:      xpv2.ManagementPolicies{xpv2.ManagementActionAll},
		},
		NodeName:    "node-aipb-defaults",
		AddressType: networkingv1alpha1.AddressTypeAnycastEIP,
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

// TestAnycastIPBindingUpdateValidation proves the immutability rules.
func TestAnycastIPBindingUpdateValidation(t *testing.T) {
	cases := map[string]struct {
		create  func(b *networkingv1alpha1.AnycastIPBinding)
		update  func(b *networkingv1alpha1.AnycastIPBinding)
		wantErr string
	}{
		"tags may change":           {update: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.Tags = map[string]string{"a": "b"} }},
		"addressID may be set once": {update: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-00000001" }},
		"nodeName is immutable": {update: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.NodeName = "other" },
			wantErr: "nodeName is immutable"},
		"addressType is immutable": {update: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressType = networkingv1alpha1.AddressTypeEIP },
			wantErr: "addressType is immutable"},
		"addressID cannot change": {
			create:  func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-00000001" },
			update:  func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-00000002" },
			wantErr: "addressID cannot be changed or removed once set"},
		"addressID cannot be removed": {
			create:  func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-00000001" },
			update:  func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "" },
			wantErr: "addressID cannot be changed or removed once set"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := testenv.Context(t)
			b := validBinding("aipb-upd-" + strings.ReplaceAll(strings.ToLower(strings.ReplaceAll(name, " ", "-")), "_", "-"))
			if tc.create != nil {
				tc.create(b)
			}
			env.ExpectCreate(t, b, "")
			tc.update(b)
			err := env.Client.Update(ctx, b)
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
