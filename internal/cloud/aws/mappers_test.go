package aws

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

func TestAllocateAddressInput(t *testing.T) {
	cases := map[string]struct {
		req  AllocateRequest
		want *ec2.AllocateAddressInput
	}{
		"defaults to the amazon pool without tags": {
			req:  AllocateRequest{},
			want: &ec2.AllocateAddressInput{Domain: types.DomainTypeVpc, PublicIpv4Pool: awssdk.String("amazon")},
		},
		"BYOIP pool and creation tags sorted by key": {
			req: AllocateRequest{PublicIPv4Pool: "ipv4pool-ec2-1", Tags: map[string]string{"b": "2", "a": "1"}},
			want: &ec2.AllocateAddressInput{
				Domain:         types.DomainTypeVpc,
				PublicIpv4Pool: awssdk.String("ipv4pool-ec2-1"),
				TagSpecifications: []types.TagSpecification{{
					ResourceType: types.ResourceTypeElasticIp,
					Tags:         []types.Tag{{Key: awssdk.String("a"), Value: awssdk.String("1")}, {Key: awssdk.String("b"), Value: awssdk.String("2")}},
				}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, allocateAddressInput(tc.req), cmpopts.IgnoreUnexported(ec2.AllocateAddressInput{}, types.TagSpecification{}, types.Tag{})); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssociateAddressInputNeverReassociates(t *testing.T) {
	got := associateAddressInput("eipalloc-1", "eni-1", "10.0.0.1")
	want := &ec2.AssociateAddressInput{
		AllocationId: awssdk.String("eipalloc-1"), NetworkInterfaceId: awssdk.String("eni-1"),
		PrivateIpAddress: awssdk.String("10.0.0.1"), AllowReassociation: awssdk.Bool(false),
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(ec2.AssociateAddressInput{})); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestDescribeAddressesInput(t *testing.T) {
	f := func(name string, values ...string) types.Filter {
		return types.Filter{Name: awssdk.String(name), Values: values}
	}
	cases := map[string]struct {
		q    AddressQuery
		want []types.Filter
	}{
		"empty query lists everything": {q: AddressQuery{}, want: nil},
		"every field, in a fixed order": {
			q: AddressQuery{
				AllocationIDs: []string{"eipalloc-1", "eipalloc-2"}, AssociationID: "eipassoc-1",
				NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.0.1",
				TagKeys: []string{"z", "a"}, Tags: map[string]string{"k2": "v2", "k1": "v1"},
				Filters: []Filter{{Name: "public-ip", Values: []string{"203.0.113.*"}}, {Name: "tag:env", Values: []string{"dev", "test"}}},
			},
			want: []types.Filter{
				f("allocation-id", "eipalloc-1", "eipalloc-2"), f("association-id", "eipassoc-1"),
				f("network-interface-id", "eni-1"), f("private-ip-address", "10.0.0.1"),
				f("tag-key", "a"), f("tag-key", "z"), f("tag:k1", "v1"), f("tag:k2", "v2"),
				f("public-ip", "203.0.113.*"), f("tag:env", "dev", "test"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := describeAddressesInput(tc.q)
			if got.AllocationIds != nil || got.PublicIps != nil {
				t.Fatalf("IDs must be sent as filters, got %+v", got)
			}
			if diff := cmp.Diff(tc.want, got.Filters, cmpopts.IgnoreUnexported(types.Filter{})); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddressFromSDK(t *testing.T) {
	got := addressFromSDK(types.Address{
		AllocationId: awssdk.String("eipalloc-1"), PublicIp: awssdk.String("198.18.0.1"),
		PublicIpv4Pool: awssdk.String("amazon"), AssociationId: awssdk.String("eipassoc-1"),
		NetworkInterfaceId: awssdk.String("eni-1"), PrivateIpAddress: awssdk.String("10.0.0.1"),
		InstanceId: awssdk.String("i-1"),
		Tags:       []types.Tag{{Key: awssdk.String("k"), Value: awssdk.String("v")}, {Key: nil, Value: awssdk.String("skipped")}},
	})
	want := Address{
		AllocationID: "eipalloc-1", PublicIP: "198.18.0.1", PublicIPv4Pool: "amazon", AssociationID: "eipassoc-1",
		NetworkInterfaceID: "eni-1", PrivateIPAddress: "10.0.0.1", InstanceID: "i-1", Tags: map[string]string{"k": "v"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !got.Associated() || (Address{}).Associated() {
		t.Fatal("Associated() is wrong")
	}
	if diff := cmp.Diff(Address{Tags: map[string]string{}}, addressFromSDK(types.Address{})); diff != "" {
		t.Fatalf("empty address (-want +got):\n%s", diff)
	}
}

func TestNetworkInterfaceFromSDK(t *testing.T) {
	cases := map[string]struct {
		in   types.NetworkInterface
		want NetworkInterface
	}{
		"primary first, prefixes parsed, bad prefix skipped": {
			in: types.NetworkInterface{
				NetworkInterfaceId: awssdk.String("eni-1"), VpcId: awssdk.String("vpc-1"), SubnetId: awssdk.String("subnet-1"),
				Attachment: &types.NetworkInterfaceAttachment{InstanceId: awssdk.String("i-1")},
				PrivateIpAddresses: []types.NetworkInterfacePrivateIpAddress{
					{PrivateIpAddress: awssdk.String("10.0.0.2"), Primary: awssdk.Bool(false)},
					{PrivateIpAddress: awssdk.String("10.0.0.1"), Primary: awssdk.Bool(true)},
					{PrivateIpAddress: nil},
				},
				Ipv4Prefixes: []types.Ipv4PrefixSpecification{{Ipv4Prefix: awssdk.String("10.0.64.0/28")}, {Ipv4Prefix: awssdk.String("bogus")}, {}},
			},
			want: NetworkInterface{
				ID: "eni-1", VpcID: "vpc-1", SubnetID: "subnet-1", InstanceID: "i-1",
				PrivateIPs: []string{"10.0.0.1", "10.0.0.2"}, IPv4Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.64.0/28")},
				Tags: map[string]string{},
			},
		},
		"attachment place": {
			in: types.NetworkInterface{
				NetworkInterfaceId: awssdk.String("eni-3"),
				Attachment:         &types.NetworkInterfaceAttachment{InstanceId: awssdk.String("i-1"), DeviceIndex: awssdk.Int32(2), NetworkCardIndex: awssdk.Int32(1)},
			},
			want: NetworkInterface{ID: "eni-3", InstanceID: "i-1", DeviceIndex: 2, NetworkCardIndex: 1, Tags: map[string]string{}},
		},
		"no attachment, only the top-level private IP": {
			in:   types.NetworkInterface{NetworkInterfaceId: awssdk.String("eni-2"), PrivateIpAddress: awssdk.String("10.0.0.9")},
			want: NetworkInterface{ID: "eni-2", PrivateIPs: []string{"10.0.0.9"}, Tags: map[string]string{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, networkInterfaceFromSDK(tc.in), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestENIInputs(t *testing.T) {
	got := enisByPrivateIPInput("vpc-1", "10.0.0.1")
	if len(got.Filters) != 2 || *got.Filters[0].Name != "addresses.private-ip-address" || *got.Filters[1].Name != "vpc-id" {
		t.Fatalf("enisByPrivateIPInput = %+v", got.Filters)
	}
	if got := enisByPrivateIPInput("", "10.0.0.1"); len(got.Filters) != 1 {
		t.Fatalf("without a VPC only the address filter is sent, got %+v", got.Filters)
	}
	got = enisByInstanceInput("vpc-1", "i-1")
	if len(got.Filters) != 2 || *got.Filters[0].Name != "attachment.instance-id" || got.Filters[0].Values[0] != "i-1" {
		t.Fatalf("enisByInstanceInput = %+v", got.Filters)
	}
}

func TestDescribeAddressesByInstance(t *testing.T) {
	got := describeAddressesInput(AddressQuery{InstanceIDs: []string{"i-1", "i-2"}, Tags: map[string]string{"pool": "nodes"}})
	want := []types.Filter{
		{Name: awssdk.String("instance-id"), Values: []string{"i-1", "i-2"}},
		{Name: awssdk.String("tag:pool"), Values: []string{"nodes"}},
	}
	if diff := cmp.Diff(want, got.Filters, cmpopts.IgnoreUnexported(types.Filter{})); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestPrimaryENIsInput(t *testing.T) {
	got := primaryENIsInput([]string{"i-1", "i-2"})
	want := []types.Filter{
		{Name: awssdk.String("attachment.instance-id"), Values: []string{"i-1", "i-2"}},
		{Name: awssdk.String("attachment.device-index"), Values: []string{"0"}},
	}
	if diff := cmp.Diff(want, got.Filters, cmpopts.IgnoreUnexported(types.Filter{})); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if bucketCategory("DescribeNetworkInterfaces", got) != bucketNonMutating {
		t.Fatal("the primary-ENI look-up is filtered and must draw from the larger non-mutating bucket")
	}
}

func TestPrimaryENIs(t *testing.T) {
	enis := []NetworkInterface{
		{ID: "eni-a0", InstanceID: "i-a", DeviceIndex: 0},
		{ID: "eni-a1", InstanceID: "i-a", DeviceIndex: 1},
		{ID: "eni-b-card1", InstanceID: "i-b", DeviceIndex: 0, NetworkCardIndex: 1},
		{ID: "eni-b0", InstanceID: "i-b", DeviceIndex: 0, NetworkCardIndex: 0},
		{ID: "eni-c-card1", InstanceID: "i-c", DeviceIndex: 0, NetworkCardIndex: 1},
		{ID: "eni-loose", DeviceIndex: 0},
	}
	got := map[string]string{}
	for inst, e := range PrimaryENIs(enis) {
		got[inst] = e.ID
	}
	// i-c has only a device-0 ENI on card 1: not a primary ENI.
	if diff := cmp.Diff(map[string]string{"i-a": "eni-a0", "i-b": "eni-b0"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestENIWithPrefixFor(t *testing.T) {
	enis := []NetworkInterface{
		{ID: "eni-a"},
		{ID: "eni-b", IPv4Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.64.0/28")}},
		{ID: "eni-c", IPv4Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.64.16/28")}},
	}
	cases := map[string]struct {
		ip     string
		want   string
		wantOK bool
	}{
		"first prefix":   {ip: "10.0.64.15", want: "eni-b", wantOK: true},
		"second prefix":  {ip: "10.0.64.16", want: "eni-c", wantOK: true},
		"outside":        {ip: "10.0.65.1"},
		"not an address": {ip: "nope"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ENIWithPrefixFor(enis, tc.ip)
			if ok != tc.wantOK || got.ID != tc.want {
				t.Fatalf("ENIWithPrefixFor(%s) = %s, %v; want %s, %v", tc.ip, got.ID, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// apiErr builds the error the SDK returns for an EC2 error response.
func apiErr(code string, status int) error {
	return &smithy.OperationError{ServiceID: "EC2", OperationName: "Op", Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err: &smithy.GenericAPIError{Code: code, Message: "m"}},
	}}
}

func TestClassifiers(t *testing.T) {
	timeout := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Err: timeoutErr{}}}
	cases := []struct {
		name string
		err  error
		// want lists the classifiers that must say true; all others false.
		want []string
		code string
	}{
		{name: "nil", err: nil, want: nil},
		{name: "ErrNotFound", err: fmt.Errorf("wrapped: %w", ErrNotFound), want: []string{"NotFound"}},
		{name: "InvalidAllocationID.NotFound", err: apiErr("InvalidAllocationID.NotFound", 400), want: []string{"NotFound"}, code: "InvalidAllocationID.NotFound"},
		{name: "InvalidAddressID.NotFound", err: apiErr("InvalidAddressID.NotFound", 400), want: []string{"NotFound"}, code: "InvalidAddressID.NotFound"},
		{name: "InvalidAddress.NotFound", err: apiErr("InvalidAddress.NotFound", 400), want: []string{"NotFound"}, code: "InvalidAddress.NotFound"},
		{name: "InvalidAssociationID.NotFound", err: apiErr("InvalidAssociationID.NotFound", 400), want: []string{"NotFound"}, code: "InvalidAssociationID.NotFound"},
		{name: "InvalidNetworkInterfaceID.NotFound", err: apiErr("InvalidNetworkInterfaceID.NotFound", 400), want: []string{"NotFound"}, code: "InvalidNetworkInterfaceID.NotFound"},
		{name: "Client.-prefixed code", err: apiErr("Client.InvalidInstanceID.NotFound", 400), want: []string{"NotFound"}, code: "InvalidInstanceID.NotFound"},
		{name: "RequestLimitExceeded", err: apiErr("RequestLimitExceeded", 503), want: []string{"Throttled"}, code: "RequestLimitExceeded"},
		{name: "AddressLimitExceeded", err: apiErr("AddressLimitExceeded", 400), want: []string{"QuotaExceeded"}, code: "AddressLimitExceeded"},
		{name: "Resource.AlreadyAssociated", err: apiErr("Resource.AlreadyAssociated", 400), want: []string{"AlreadyAssociated"}, code: "Resource.AlreadyAssociated"},
		{name: "InvalidIPAddress.InUse", err: apiErr("InvalidIPAddress.InUse", 400), want: []string{"InUse"}, code: "InvalidIPAddress.InUse"},
		{name: "AuthFailure", err: apiErr("AuthFailure", 401), want: []string{"AuthError"}, code: "AuthFailure"},
		{name: "UnauthorizedOperation", err: apiErr("UnauthorizedOperation", 403), want: []string{"AuthError"}, code: "UnauthorizedOperation"},
		{name: "SignatureDoesNotMatch", err: apiErr("SignatureDoesNotMatch", 403), want: []string{"AuthError"}, code: "SignatureDoesNotMatch"},
		{name: "RequestExpired", err: apiErr("RequestExpired", 400), want: []string{"AuthError"}, code: "RequestExpired"},
		{name: "MissingAuthenticationToken", err: apiErr("MissingAuthenticationToken", 401), want: []string{"AuthError"}, code: "MissingAuthenticationToken"},
		{name: "InvalidParameterValue", err: apiErr("InvalidParameterValue", 400), want: []string{"InvalidParameter"}, code: "InvalidParameterValue"},
		{name: "InvalidParameterCombination", err: apiErr("InvalidParameterCombination", 400), want: []string{"InvalidParameter"}, code: "InvalidParameterCombination"},
		{name: "InvalidInstanceID.Malformed", err: apiErr("InvalidInstanceID.Malformed", 400), want: []string{"InvalidParameter"}, code: "InvalidInstanceID.Malformed"},
		{name: "InvalidInstanceID (several ENIs)", err: apiErr("InvalidInstanceID", 400), want: []string{"MultipleInterfaces"}, code: "InvalidInstanceID"},
		{name: "InternalError is ambiguous", err: apiErr("InternalError", 500), want: []string{"OutcomeUnknown"}, code: "InternalError"},
		{name: "timeout is ambiguous", err: fmt.Errorf("op: %w", timeout), want: []string{"OutcomeUnknown"}},
		{name: "plain error", err: errors.New("boom"), want: nil},
	}
	classifiers := map[string]func(error) bool{
		"NotFound": IsNotFound, "Throttled": IsThrottled, "QuotaExceeded": IsQuotaExceeded,
		"AlreadyAssociated": IsAlreadyAssociated, "InUse": IsInUse, "AuthError": IsAuthError,
		"InvalidParameter": IsInvalidParameter, "OutcomeUnknown": IsOutcomeUnknown,
		"MultipleInterfaces": IsMultipleInterfaces,
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for name, fn := range classifiers {
				want := false
				for _, w := range tc.want {
					want = want || w == name
				}
				if got := fn(tc.err); got != want {
					t.Errorf("Is%s(%v) = %v, want %v", name, tc.err, got, want)
				}
			}
			if got := ErrorCode(tc.err); got != tc.code {
				t.Errorf("ErrorCode = %q, want %q", got, tc.code)
			}
		})
	}
	if err := IgnoreNotFound(apiErr("InvalidAllocationID.NotFound", 400)); err != nil {
		t.Errorf("IgnoreNotFound(NotFound) = %v", err)
	}
	if err := IgnoreNotFound(apiErr("InternalError", 500)); err == nil {
		t.Error("IgnoreNotFound dropped a non-NotFound error")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestResultCode(t *testing.T) {
	cases := map[string]struct {
		err  error
		want string
	}{
		"ok":        {nil, "OK"},
		"api error": {apiErr("RequestLimitExceeded", 503), "RequestLimitExceeded"},
		"canceled":  {fmt.Errorf("x: %w", context.Canceled), "Canceled"},
		"deadline":  {fmt.Errorf("x: %w", context.DeadlineExceeded), "Timeout"},
		"other":     {errors.New("boom"), "ClientError"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := resultCode(tc.err); got != tc.want {
				t.Fatalf("resultCode = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBucketCategory(t *testing.T) {
	cases := []struct {
		op     string
		params any
		want   string
	}{
		{"AllocateAddress", &ec2.AllocateAddressInput{}, bucketMutating},
		{"AssociateAddress", nil, bucketMutating},
		{"DisassociateAddress", nil, bucketMutating},
		{"ReleaseAddress", nil, bucketMutating},
		{"CreateTags", nil, bucketTags},
		{"DeleteTags", nil, bucketTags},
		{"DescribeAddresses", &ec2.DescribeAddressesInput{}, bucketNonMutating},
		{"DescribeNetworkInterfaces", &ec2.DescribeNetworkInterfacesInput{}, bucketUnfilteredNonMutating},
		{"DescribeNetworkInterfaces", &ec2.DescribeNetworkInterfacesInput{MaxResults: awssdk.Int32(5)}, bucketNonMutating},
		{"DescribeNetworkInterfaces", &ec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{{}}}, bucketNonMutating},
	}
	for _, tc := range cases {
		if got := bucketCategory(tc.op, tc.params); got != tc.want {
			t.Errorf("bucketCategory(%s, %+v) = %s, want %s", tc.op, tc.params, got, tc.want)
		}
	}
}

func TestThrottlerPerActionBuckets(t *testing.T) {
	th := newThrottler(RateLimits{
		Mutating: DefaultRateLimits().Mutating, NonMutating: DefaultRateLimits().NonMutating,
		UnfilteredNonMutating: DefaultRateLimits().UnfilteredNonMutating, Tags: DefaultRateLimits().Tags,
		PerAction: map[string]cloud.RateLimit{"ReleaseAddress": {QPS: 1, Burst: 3}},
	})
	// Each bucket is EC2's, less the jitter margin of cloud.ClientSide (one
	// token at these refill rates).
	if l := th.limiter("AllocateAddress", bucketMutating); l.Burst() != 49 || l.Limit() != 5 {
		t.Errorf("AllocateAddress bucket = %v/%d, want 5/49 (EC2's 5/50 less the margin)", l.Limit(), l.Burst())
	}
	if th.limiter("AllocateAddress", bucketMutating) == th.limiter("AssociateAddress", bucketMutating) {
		t.Error("two actions share one bucket; EC2 evaluates each API separately")
	}
	if l := th.limiter("ReleaseAddress", bucketMutating); l.Burst() != 2 || l.Limit() != 1 {
		t.Errorf("override bucket = %v/%d, want 1/2 (the override's 1/3 less the margin)", l.Limit(), l.Burst())
	}
	if l := th.limiter("DescribeNetworkInterfaces", bucketUnfilteredNonMutating); l.Burst() != 49 || l.Limit() != 10 {
		t.Errorf("unfiltered bucket = %v/%d, want 10/49 (EC2's 10/50 less the margin)", l.Limit(), l.Burst())
	}
	if l := th.limiter("CreateTags", bucketTags); l.Burst() != 99 || l.Limit() != 10 {
		t.Errorf("tags bucket = %v/%d, want 10/99 (EC2's 10/100 less the margin)", l.Limit(), l.Burst())
	}
}

func TestFullJitter(t *testing.T) {
	cases := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{0, 0.5, 50 * time.Millisecond},
		{1, 1, 200 * time.Millisecond},
		{3, 1, 800 * time.Millisecond},
		{10, 1, 2 * time.Second}, // capped
		{100, 0.5, time.Second},  // no overflow
	}
	for _, tc := range cases {
		if got := fullJitter(100*time.Millisecond, 2*time.Second, tc.attempt, tc.r); got != tc.want {
			t.Errorf("fullJitter(attempt %d, r %v) = %v, want %v", tc.attempt, tc.r, got, tc.want)
		}
	}
}

func TestThrottleOnlyRetryer(t *testing.T) {
	r := throttleOnlyRetryer{Retryer: newRetryer(RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxBackoff: time.Millisecond})}
	if !r.IsErrorRetryable(apiErr("RequestLimitExceeded", 503)) {
		t.Error("throttling must be retried")
	}
	for _, err := range []error{apiErr("InternalError", 500), &url.Error{Op: "Post", Err: timeoutErr{}}} {
		if r.IsErrorRetryable(err) {
			t.Errorf("%v must not be retried for AllocateAddress", err)
		}
	}
}

func TestCredentialsRedaction(t *testing.T) {
	c := Credentials{Source: CredentialsStatic, AccessKeyID: "AKIDSECRET", SecretAccessKey: "s3cr3t", SessionToken: "tok3n"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.LogValue().String()} {
		for _, secret := range []string{"AKIDSECRET", "s3cr3t", "tok3n"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %q", s, secret)
			}
		}
	}
}

func TestScaledRateLimits(t *testing.T) {
	def := DefaultRateLimits()
	for _, s := range []float64{0, 1, -3} {
		if got := Scaled(s); !cmp.Equal(got, def) {
			t.Errorf("Scaled(%v) = %+v, want the defaults", s, got)
		}
	}
	got := Scaled(10)
	want := RateLimits{
		Mutating:              cloud.RateLimit{QPS: 50, Burst: 50},
		NonMutating:           cloud.RateLimit{QPS: 200, Burst: 100},
		UnfilteredNonMutating: cloud.RateLimit{QPS: 100, Burst: 50},
		Tags:                  cloud.RateLimit{QPS: 100, Burst: 100},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scaled(10) (-want +got):\n%s", diff)
	}
}

func TestAddressMissingTags(t *testing.T) {
	a := Address{Tags: map[string]string{"a": "1", "b": "2"}}
	if got := a.MissingTags(map[string]string{"a": "1"}); got != nil {
		t.Errorf("carried tags: %v, want nil", got)
	}
	if diff := cmp.Diff(map[string]string{"b": "3", "c": ""}, a.MissingTags(map[string]string{"a": "1", "b": "3", "c": ""})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
