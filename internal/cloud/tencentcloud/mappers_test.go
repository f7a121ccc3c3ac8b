package tencentcloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tag "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

func TestAllocateAddressesRequest(t *testing.T) {
	cases := map[string]struct {
		in   AllocateRequest
		want vpc.AllocateAddressesRequestParams
	}{
		"only the count: cloud defaults apply": {
			in:   AllocateRequest{},
			want: vpc.AllocateAddressesRequestParams{AddressCount: common.Int64Ptr(1)},
		},
		"anycast with zone, bandwidth, charge type, name, sorted tags and token": {
			in: AllocateRequest{
				AddressType: AddressTypeAnycastEIP, AnycastZone: AnycastZoneGlobal, InternetMaxBandwidthOut: 100,
				InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR", AddressName: "cls-1-aia",
				Tags: map[string]string{"b": "2", "a": "1"}, ClientToken: "uid",
			},
			want: vpc.AllocateAddressesRequestParams{
				AddressCount: common.Int64Ptr(1), AddressType: common.StringPtr("AnycastEIP"),
				AnycastZone: common.StringPtr(AnycastZoneGlobal), InternetMaxBandwidthOut: common.Int64Ptr(100),
				InternetChargeType: common.StringPtr("BANDWIDTH_POSTPAID_BY_HOUR"), AddressName: common.StringPtr("cls-1-aia"),
				Tags:        []*vpc.Tag{{Key: common.StringPtr("a"), Value: common.StringPtr("1")}, {Key: common.StringPtr("b"), Value: common.StringPtr("2")}},
				ClientToken: common.StringPtr("uid"),
			},
		},
		"a static single line": {
			in:   AllocateRequest{InternetServiceProvider: "CMCC"},
			want: vpc.AllocateAddressesRequestParams{AddressCount: common.Int64Ptr(1), InternetServiceProvider: common.StringPtr("CMCC")},
		},
		"the zone is only sent for AnycastEIP": {
			in:   AllocateRequest{AddressType: AddressTypeHighQualityEIP, AnycastZone: AnycastZoneGlobal},
			want: vpc.AllocateAddressesRequestParams{AddressCount: common.Int64Ptr(1), AddressType: common.StringPtr("HighQualityEIP")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := allocateAddressesRequest(tc.in)
			// Compare through the JSON the SDK sends: that is the contract.
			var gotParams, wantParams vpc.AllocateAddressesRequestParams
			if err := jsonRoundTrip(got, &gotParams); err != nil {
				t.Fatal(err)
			}
			wantParams = tc.want
			if diff := cmp.Diff(wantParams, gotParams); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func jsonRoundTrip(req interface{ ToJsonString() string }, into any) error {
	return json.Unmarshal([]byte(req.ToJsonString()), into)
}

func TestDescribeAddressesFilters(t *testing.T) {
	f := func(name string, v ...string) *vpc.Filter {
		return &vpc.Filter{Name: common.StringPtr(name), Values: common.StringPtrs(v)}
	}
	cases := map[string]struct {
		q    AddressQuery
		want []*vpc.Filter
	}{
		"empty": {},
		"everything in a fixed order": {
			q: AddressQuery{
				IDs: []string{"eip-1"}, InstanceID: "ins-1", Types: []string{"AnycastEIP", "EIP"}, Statuses: []string{"BIND"},
				TagKeys: []string{"z", "a"}, Tags: map[string]string{"k2": "v2", "k1": "v1"},
			},
			want: []*vpc.Filter{
				f("instance-id", "ins-1"), f("address-type", "AnycastEIP", "EIP"), f("address-status", "BIND"),
				f("tag-key", "a", "z"), f("tag:k1", "v1"), f("tag:k2", "v2"),
			},
		},
		"many values per filter": {
			q: AddressQuery{InstanceID: "ins-1", InstanceIDs: []string{"ins-2", "ins-3"}, Tags: map[string]string{"c": "x"},
				TagValues: map[string][]string{"u": {"1", "2"}}},
			want: []*vpc.Filter{f("instance-id", "ins-1", "ins-2", "ins-3"), f("tag:c", "x"), f("tag:u", "1", "2")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeAddressesFilters(tc.q)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeNetworkInterfacesFilters(t *testing.T) {
	f := func(name string, v ...string) *vpc.Filter {
		return &vpc.Filter{Name: common.StringPtr(name), Values: common.StringPtrs(v)}
	}
	yes := true
	cases := map[string]struct {
		q    NetworkInterfaceQuery
		want []*vpc.Filter
	}{
		"empty": {},
		// One IP needs ip-exact-match: address-ip alone matches a single
		// value fuzzily.
		"one pod IP, exactly": {
			q:    NetworkInterfaceQuery{VpcID: "vpc-1", PrivateIPs: []string{"10.0.1.2"}},
			want: []*vpc.Filter{f("vpc-id", "vpc-1"), f("address-ip", "10.0.1.2"), f("ip-exact-match", "true")},
		},
		"several IPs match exactly by themselves": {
			q:    NetworkInterfaceQuery{PrivateIPs: []string{"10.0.1.2", "10.0.1.3"}},
			want: []*vpc.Filter{f("address-ip", "10.0.1.2", "10.0.1.3")},
		},
		"everything in a fixed order": {
			q: NetworkInterfaceQuery{VpcID: "vpc-1", SubnetID: "subnet-1", InstanceIDs: []string{"ins-1", "ins-2"}, Primary: &yes,
				Tags: map[string]string{"b": "2", "a": "1"}},
			want: []*vpc.Filter{
				f("vpc-id", "vpc-1"), f("subnet-id", "subnet-1"), f("attachment.instance-id", "ins-1", "ins-2"),
				f("is-primary", "true"), f("tag:a", "1"), f("tag:b", "2"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeNetworkInterfacesFilters(tc.q)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNetworkInterfaceFromSDK(t *testing.T) {
	got := networkInterfaceFromSDK(&vpc.NetworkInterface{
		NetworkInterfaceId: common.StringPtr("eni-1"), NetworkInterfaceName: common.StringPtr("pods"),
		VpcId: common.StringPtr("vpc-1"), SubnetId: common.StringPtr("subnet-1"), Zone: common.StringPtr("ap-hongkong-2"),
		Primary: common.BoolPtr(false), State: common.StringPtr("AVAILABLE"),
		Attachment: &vpc.NetworkInterfaceAttachment{InstanceId: common.StringPtr("ins-1"), DeviceIndex: common.Uint64Ptr(1)},
		PrivateIpAddressSet: []*vpc.PrivateIpAddressSpecification{
			{PrivateIpAddress: common.StringPtr("10.0.1.20"), Primary: common.BoolPtr(false), PublicIpAddress: common.StringPtr("198.19.0.9"), AddressId: common.StringPtr("eip-1")},
			{PrivateIpAddress: common.StringPtr("10.0.1.2"), Primary: common.BoolPtr(true), PublicIpAddress: common.StringPtr("")},
			nil, {PrivateIpAddress: nil},
		},
		TagSet: []*vpc.Tag{{Key: common.StringPtr("k"), Value: common.StringPtr("v")}, nil},
	})
	want := NetworkInterface{
		ID: "eni-1", Name: "pods", VpcID: "vpc-1", SubnetID: "subnet-1", Zone: "ap-hongkong-2", InstanceID: "ins-1", DeviceIndex: 1,
		PrivateIPs: []string{"10.0.1.2", "10.0.1.20"}, PublicIPs: map[string]string{"10.0.1.20": "198.19.0.9"},
		AddressIDs: map[string]string{"10.0.1.20": "eip-1"}, State: "AVAILABLE", Tags: map[string]string{"k": "v"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(NetworkInterface{Tags: map[string]string{}}, networkInterfaceFromSDK(&vpc.NetworkInterface{})); diff != "" {
		t.Fatalf("all-null ENI (-want +got):\n%s", diff)
	}
}

func TestENIsHolding(t *testing.T) {
	enis := []NetworkInterface{{ID: "eni-a", PrivateIPs: []string{"10.0.1.20"}}, {ID: "eni-b", PrivateIPs: []string{"10.0.0.5", "10.0.1.2"}}}
	if got := ENIsHolding(enis, "10.0.1.2"); len(got) != 1 || got[0].ID != "eni-b" {
		t.Fatalf("ENIsHolding(10.0.1.2) = %+v, want only eni-b (10.0.1.20 merely starts alike)", got)
	}
	if got := ENIsHolding(enis, "10.0.1"); got != nil {
		t.Fatalf("a prefix matched %+v", got)
	}
}

func TestAddressFromSDK(t *testing.T) {
	got := addressFromSDK(&vpc.Address{
		AddressId: common.StringPtr("eip-1"), AddressName: common.StringPtr("n"), AddressIp: common.StringPtr("198.19.0.1"),
		AddressType: common.StringPtr("AnycastEIP"), AddressStatus: common.StringPtr("BIND"), InstanceId: common.StringPtr("ins-1"),
		NetworkInterfaceId: common.StringPtr("eni-1"), PrivateAddressIp: common.StringPtr("10.0.0.1"),
		InternetChargeType: common.StringPtr("TRAFFIC_POSTPAID_BY_HOUR"), Bandwidth: common.Uint64Ptr(100),
		CreatedTime: common.StringPtr("2026-01-01T00:00:00Z"),
		TagSet:      []*vpc.Tag{{Key: common.StringPtr("k"), Value: common.StringPtr("v")}, nil, {Key: nil}},
	})
	want := Address{
		ID: "eip-1", Name: "n", IP: "198.19.0.1", Type: "AnycastEIP", Status: "BIND", InstanceID: "ins-1",
		NetworkInterfaceID: "eni-1", PrivateIP: "10.0.0.1", ChargeType: "TRAFFIC_POSTPAID_BY_HOUR", Bandwidth: 100,
		Tags: map[string]string{"k": "v"}, CreatedTime: "2026-01-01T00:00:00Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Address{Tags: map[string]string{}}, addressFromSDK(&vpc.Address{})); diff != "" {
		t.Fatalf("all-null address (-want +got):\n%s", diff)
	}
}

func TestParseTaskID(t *testing.T) {
	cases := map[string]struct {
		in      *string
		want    uint64
		wantErr bool
	}{
		"string to integer": {in: common.StringPtr("1385262431"), want: 1385262431},
		"max uint64":        {in: common.StringPtr("18446744073709551615"), want: 18446744073709551615},
		"nil":               {in: nil, wantErr: true},
		"empty":             {in: common.StringPtr(""), wantErr: true},
		"negative":          {in: common.StringPtr("-1"), wantErr: true},
		"not a number":      {in: common.StringPtr("task-1"), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTaskID(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseTaskID = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestDescribeResourcesByTagsRequest(t *testing.T) {
	got := describeResourcesByTagsRequest(map[string]string{"b": "2", "a": "1"}, "eip", 100, 100)
	want := []*tag.TagFilter{
		{TagKey: common.StringPtr("a"), TagValue: common.StringPtrs([]string{"1"})},
		{TagKey: common.StringPtr("b"), TagValue: common.StringPtrs([]string{"2"})},
	}
	if diff := cmp.Diff(want, got.TagFilters); diff != "" {
		t.Fatalf("TagFilters (-want +got):\n%s", diff)
	}
	if *got.ResourcePrefix != "eip" || *got.Offset != 100 || *got.Limit != 100 {
		t.Fatalf("request = %s", got.ToJsonString())
	}
	if r := describeResourcesByTagsRequest(map[string]string{"a": "1"}, "", 0, 15); r.ResourcePrefix != nil {
		t.Fatalf("an empty prefix must not be sent: %s", r.ToJsonString())
	}
}

func TestTaggedResourceFromSDK(t *testing.T) {
	got := taggedResourceFromSDK(&tag.ResourceTag{
		ResourceRegion: common.StringPtr("ap-hongkong"), ServiceType: common.StringPtr("cvm"), ResourcePrefix: common.StringPtr("eip"),
		ResourceId: common.StringPtr("eip-1"), Tags: []*tag.Tag{{TagKey: common.StringPtr("k"), TagValue: common.StringPtr("v")}, nil},
	})
	want := TaggedResource{ID: "eip-1", Prefix: "eip", ServiceType: "cvm", Region: "ap-hongkong", Tags: map[string]string{"k": "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestInstanceFromSDK(t *testing.T) {
	got := instanceFromSDK(&cvm.Instance{
		InstanceId: common.StringPtr("ins-1"), InstanceName: common.StringPtr("node"), InstanceState: common.StringPtr("RUNNING"),
		Placement:           &cvm.Placement{Zone: common.StringPtr("ap-hongkong-2")},
		VirtualPrivateCloud: &cvm.VirtualPrivateCloud{VpcId: common.StringPtr("vpc-1"), SubnetId: common.StringPtr("subnet-1")},
		PrivateIpAddresses:  common.StringPtrs([]string{"10.0.0.1"}),
		PublicIpAddresses:   []*string{nil, common.StringPtr("198.19.0.1")},
		Tags:                []*cvm.Tag{{Key: common.StringPtr("k"), Value: common.StringPtr("v")}},
	})
	want := Instance{
		ID: "ins-1", Name: "node", Zone: "ap-hongkong-2", VpcID: "vpc-1", SubnetID: "subnet-1", State: "RUNNING",
		PrivateIPs: []string{"10.0.0.1"}, PublicIPs: []string{"198.19.0.1"}, Tags: map[string]string{"k": "v"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Instance{Tags: map[string]string{}}, instanceFromSDK(&cvm.Instance{})); diff != "" {
		t.Fatalf("empty instance (-want +got):\n%s", diff)
	}
}

func TestChunks(t *testing.T) {
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	got := chunks(ids, 100)
	if len(got) != 3 || len(got[0]) != 100 || len(got[1]) != 100 || len(got[2]) != 50 {
		t.Fatalf("chunks sizes = %d", len(got))
	}
	if chunks(nil, 100) != nil {
		t.Fatal("chunks(nil) should be nil")
	}
}

func TestSplitEndpoint(t *testing.T) {
	cases := []struct {
		in, host, scheme string
		wantErr          bool
	}{
		{"", "", "HTTPS", false},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "HTTP", false},
		{"https://vpc.internal.tencentcloudapi.com/", "vpc.internal.tencentcloudapi.com", "HTTPS", false},
		{"127.0.0.1:9000/prefix", "127.0.0.1:9000/prefix", "HTTPS", false},
		{"ftp://x", "", "", true},
		{"http://", "", "", true},
		{"http://u:p@x", "", "", true},
	}
	for _, tc := range cases {
		host, scheme, err := splitEndpoint(tc.in)
		if (err != nil) != tc.wantErr || host != tc.host || scheme != tc.scheme {
			t.Errorf("splitEndpoint(%q) = %q, %q, %v; want %q, %q, error %v", tc.in, host, scheme, err, tc.host, tc.scheme, tc.wantErr)
		}
	}
}

func sdkErr(code string) error {
	return fmt.Errorf("wrapped: %w", tcerr.NewTencentCloudSDKError(code, "m", "req-1"))
}

func TestClassifiers(t *testing.T) {
	timeout := &url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}
	cases := []struct {
		err  error
		want []string
	}{
		{nil, nil},
		{fmt.Errorf("x: %w", ErrNotFound), []string{"NotFound"}},
		{sdkErr("InvalidAddressId.NotFound"), []string{"NotFound"}},
		{sdkErr("InvalidInstanceId.NotFound"), []string{"NotFound"}},
		{sdkErr("InvalidParameterValue.AddressNotFound"), []string{"NotFound", "InvalidParameter"}},
		{sdkErr("RequestLimitExceeded"), []string{"Throttled"}},
		{sdkErr("RequestLimitExceeded.UinLimitExceeded"), []string{"Throttled"}},
		{sdkErr("RequestLimitExceeded.IPLimitExceeded"), []string{"Throttled"}},
		{sdkErr("AddressQuotaLimitExceeded"), []string{"QuotaExceeded"}},
		{sdkErr("AddressQuotaLimitExceeded.DailyAllocate"), []string{"QuotaExceeded"}},
		{sdkErr("OperationDenied.MutexTaskRunning"), []string{"TaskRunning"}},
		{sdkErr("InvalidAddressState"), []string{"InvalidState"}},
		{sdkErr("UnsupportedOperation.AddressStatusNotPermit"), []string{"InvalidState"}},
		{sdkErr("InvalidAddressIdStatus.NotPermit"), []string{"InvalidState"}},
		{sdkErr("InvalidInstanceId.AlreadyBindEip"), []string{"AlreadyBound"}},
		{sdkErr("InvalidPrivateIpAddress.AlreadyBindEip"), []string{"AlreadyBound"}},
		{sdkErr("InvalidNetworkInterfaceId.NotFound"), []string{"NotFound", "NetworkInterfaceNotFound"}},
		{sdkErr("InvalidParameterValue.NetworkInterfaceNotFound"), []string{"NotFound", "NetworkInterfaceNotFound", "InvalidParameter"}},
		{sdkErr("ResourceNotFound"), []string{"NotFound"}},
		{sdkErr("InvalidParameterValue.NetworkInterfaceIdNotMatch"), []string{"BoundElsewhere", "InvalidParameter"}},
		{sdkErr("InvalidParameterValue.PrivateIpAddressNotMatch"), []string{"BoundElsewhere", "InvalidParameter"}},
		{sdkErr("InvalidParameterValue.InstanceNotMatchAssociateEni"), []string{"BoundElsewhere", "InvalidParameter"}},
		{sdkErr("InvalidParameterValue.MissingAssociateEntity"), []string{"InvalidParameter"}},
		{sdkErr("InvalidParameterConflict"), []string{"InvalidParameter"}},
		{sdkErr("UnauthorizedOperation.AnycastEip"), []string{"AnycastNotAllowed"}},
		{sdkErr("AuthFailure.SignatureFailure"), []string{"AuthError"}},
		{sdkErr("AuthFailure.SecretIdNotFound"), []string{"AuthError"}},
		{sdkErr("UnauthorizedOperation"), []string{"AuthError"}},
		{sdkErr("InvalidParameterValue.AddressIdMalformed"), []string{"InvalidParameter"}},
		{sdkErr("UnknownParameter"), []string{"InvalidParameter"}},
		{sdkErr("FailedOperation.TaskFailed"), []string{"TaskFailed"}},
		{fmt.Errorf("x: %w", ErrTaskFailed), []string{"TaskFailed"}},
		{sdkErr("InternalError"), []string{"OutcomeUnknown"}},
		{sdkErr("InternalError.ModuleError"), []string{"OutcomeUnknown"}},
		{sdkErr("ClientError.NetworkError"), []string{"OutcomeUnknown"}},
		{sdkErr("ClientError.HttpStatusCodeError"), []string{"OutcomeUnknown"}},
		{timeout, []string{"OutcomeUnknown"}},
		{errors.New("boom"), nil},
	}
	classifiers := map[string]func(error) bool{
		"NotFound": IsNotFound, "Throttled": IsThrottled, "QuotaExceeded": IsQuotaExceeded, "TaskRunning": IsTaskRunning,
		"InvalidState": IsInvalidState, "AlreadyBound": IsAlreadyBound, "AnycastNotAllowed": IsAnycastNotAllowed,
		"AuthError": IsAuthError, "InvalidParameter": IsInvalidParameter, "TaskFailed": IsTaskFailed, "OutcomeUnknown": IsOutcomeUnknown,
		"NetworkInterfaceNotFound": IsNetworkInterfaceNotFound, "BoundElsewhere": IsBoundElsewhere,
	}
	for _, tc := range cases {
		for name, fn := range classifiers {
			want := false
			for _, w := range tc.want {
				want = want || w == name
			}
			if got := fn(tc.err); got != want {
				t.Errorf("Is%s(%v) = %v, want %v", name, tc.err, got, want)
			}
		}
	}
	if IgnoreNotFound(sdkErr("InvalidAddressId.NotFound")) != nil || IgnoreNotFound(sdkErr("InternalError")) == nil {
		t.Error("IgnoreNotFound is wrong")
	}
	if got := ErrorCode(sdkErr("InvalidAddressState")); got != "InvalidAddressState" {
		t.Errorf("ErrorCode = %q", got)
	}
	if got := resultCode(nil); got != cloud.CodeOK {
		t.Errorf("resultCode(nil) = %q", got)
	}
	if got := resultCode(timeout); got != cloud.CodeTimeout {
		t.Errorf("resultCode(timeout) = %q", got)
	}
}

func TestFullJitter(t *testing.T) {
	if got := fullJitter(100*time.Millisecond, time.Second, 2, 1); got != 400*time.Millisecond {
		t.Errorf("attempt 2 = %v", got)
	}
	if got := fullJitter(100*time.Millisecond, time.Second, 60, 0.5); got != 500*time.Millisecond {
		t.Errorf("capped = %v", got)
	}
}

func TestDefaultsMergeRateLimits(t *testing.T) {
	o := Options{RateLimits: RateLimits{PerAction: map[string]cloud.RateLimit{"DescribeAddresses": {QPS: 1, Burst: 1}, "Custom": {QPS: 2, Burst: 2}}}}
	o.defaults()
	want := DefaultRateLimits().PerAction
	want["DescribeAddresses"] = cloud.RateLimit{QPS: 1, Burst: 1}
	want["Custom"] = cloud.RateLimit{QPS: 2, Burst: 2}
	if diff := cmp.Diff(want, o.RateLimits.PerAction); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if d := DefaultRateLimits().PerAction; d["AllocateAddresses"].QPS != 10 || d["DescribeAddresses"].QPS != 20 || d["DescribeTaskResult"].QPS != 20 || d["DescribeInstances"].QPS != 40 {
		t.Fatalf("default limits drifted from Tencent's published values: %v", d)
	}
}

func TestRateLimitedTransportWaitsPerAction(t *testing.T) {
	var sent []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.Header.Get("X-TC-Action"))
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	rt := newRateLimitedTransport(base, RateLimits{PerAction: map[string]cloud.RateLimit{"A": {QPS: 1, Burst: 1}}})
	req := func(action string, ctx context.Context) error {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x", nil)
		r.Header.Set("X-TC-Action", action)
		_, err := rt.RoundTrip(r)
		return err
	}
	if err := req("A", context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := req("A", ctx); err == nil {
		t.Fatal("the second call within a second went through a 1/s bucket")
	}
	if err := req("B", context.Background()); err != nil {
		t.Fatalf("another action has its own bucket: %v", err)
	}
	if diff := cmp.Diff([]string{"A", "B"}, sent); diff != "" {
		t.Fatalf("sent (-want +got):\n%s", diff)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestEmulatorKeysMatchTheEmulator(t *testing.T) {
	if EmulatorSecretID != core.DefaultTencentSecretID || EmulatorSecretKey != core.DefaultTencentSecretKey {
		t.Fatal("CredentialsNone must use the emulator's built-in keys")
	}
}

func TestCredentialsRedaction(t *testing.T) {
	c := Credentials{Source: CredentialsStatic, SecretID: "AKIDSECRET", SecretKey: "s3cr3t", Token: "tok3n"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.LogValue().String()} {
		for _, secret := range []string{"AKIDSECRET", "s3cr3t", "tok3n"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %q", s, secret)
			}
		}
	}
}

// TestDefaultRateLimitsMatchTheEmulator: the client's buckets are the
// emulator's (both Tencent's published per-action limits), so a client at
// its defaults is never throttled by a correctly modelled server.
func TestDefaultRateLimitsMatchTheEmulator(t *testing.T) {
	server := core.DefaultBuckets()
	for action, rl := range DefaultRateLimits().PerAction {
		b, ok := server[core.ProviderTencent+"/"+action]
		if !ok || float64(b.Burst) != float64(rl.Burst) || b.RefillPerSecond != rl.QPS {
			t.Errorf("%s: client %+v, emulator %+v (found %v)", action, rl, b, ok)
		}
	}
	if rl := DefaultRateLimits().PerAction["DescribeNetworkInterfaces"]; rl.QPS != 100 || rl.Burst != 100 {
		t.Errorf("DescribeNetworkInterfaces = %+v, want 100 per second (API page 215/15817)", rl)
	}
}

func TestModifyResourceTagsRequest(t *testing.T) {
	got := modifyResourceTagsRequest(EIPResourceName("ap-hongkong", "eip-0a1b2c3d"), map[string]string{"b": "2", "a": "1"}, []string{"y", "x"})
	var gotParams tag.ModifyResourceTagsRequest
	if err := jsonRoundTrip(got, &gotParams); err != nil {
		t.Fatal(err)
	}
	want := `{"Resource":"qcs::cvm:ap-hongkong:uin/:eip/eip-0a1b2c3d","ReplaceTags":[{"TagKey":"a","TagValue":"1"},{"TagKey":"b","TagValue":"2"}],"DeleteTags":[{"TagKey":"x"},{"TagKey":"y"}]}`
	if s := got.ToJsonString(); s != want {
		t.Fatalf("request = %s, want %s", s, want)
	}
	if only := modifyResourceTagsRequest("r", nil, []string{"k"}).ToJsonString(); only != `{"Resource":"r","DeleteTags":[{"TagKey":"k"}]}` {
		t.Fatalf("a removal alone sends %s: an empty ReplaceTags must be left out", only)
	}
}

func TestTransitional(t *testing.T) {
	for status, want := range map[string]bool{StatusCreating: true, StatusBinding: true, StatusUnbinding: true, StatusOffline: true,
		StatusUnbind: false, StatusBind: false, StatusBindENI: false} {
		if got := Transitional(status); got != want {
			t.Errorf("Transitional(%s) = %v, want %v", status, got, want)
		}
	}
}

func TestRateLimitsIntervalAndScaled(t *testing.T) {
	def := DefaultRateLimits()
	if got := def.Interval("DescribeAddresses"); got != 50*time.Millisecond {
		t.Errorf("DescribeAddresses interval = %s, want 50ms (20/s)", got)
	}
	if got := (RateLimits{}).Interval("AllocateAddresses"); got != 100*time.Millisecond {
		t.Errorf("an unset action's interval = %s, want the default's 100ms", got)
	}
	if got := (RateLimits{Disabled: true}).Interval("DescribeAddresses"); got != 0 {
		t.Errorf("interval with limits off = %s, want 0", got)
	}
	x10 := Scaled(10)
	if got := x10.PerAction["AllocateAddresses"]; got.QPS != 100 || got.Burst != 100 {
		t.Errorf("x10 AllocateAddresses = %+v, want 100/s with a bucket of 100 (one second's worth)", got)
	}
	if got := DefaultRateLimits().PerAction["AllocateAddresses"]; got.QPS != 10 || got.Burst != 10 {
		t.Errorf("Scaled changed the defaults: %+v", got)
	}
	for _, s := range []float64{1, 0, -2} {
		if got := Scaled(s); !cmp.Equal(got, def) {
			t.Errorf("x%v changed the limits: %+v", s, got.PerAction)
		}
	}
}
