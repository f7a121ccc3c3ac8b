package aws_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/edgeplane/edgeplane/internal/cloud"
	epaws "github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// These tests drive the real aws-sdk-go-v2 EC2 client, configured exactly as
// in production (NewEC2API), against the emulator over HTTP.

const (
	vpcID      = "vpc-0a1b2c3d"
	instanceID = "i-0123456789abcdef0"
	nodeENI    = "eni-0aaaaaaaaaaaaaaa1"
	podENI     = "eni-0aaaaaaaaaaaaaaa2"
	nodeIP     = "10.0.1.10"
	podIP      = "10.0.1.20"
	prefixIP   = "10.0.64.5" // inside podENI's delegated /28
)

func fixtures() *core.Fixtures {
	return &core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{{
		InstanceID: instanceID, VpcID: vpcID, SubnetID: "subnet-1", AvailabilityZone: "us-east-1a",
		NetworkInterfaces: []core.EC2ENIFixture{
			{NetworkInterfaceID: nodeENI, PrivateIPAddresses: []string{nodeIP, podIP}},
			{NetworkInterfaceID: podENI, PrivateIPAddresses: []string{"10.0.1.30"}, IPv4Prefixes: []string{"10.0.64.0/28"}},
		},
	}}}}
}

// testOptions returns client options for the emulator with fast retries.
func testOptions(url string) epaws.Options {
	return epaws.Options{
		Region:      "us-east-1",
		Endpoint:    url,
		Credentials: epaws.Credentials{Source: epaws.CredentialsNone},
		Retry:       epaws.RetryOptions{MaxAttempts: 10, BaseDelay: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond},
		Timeout:     5 * time.Second,
	}
}

func startEmulator(t *testing.T, opts cloudsim.Options) *cloudsimtest.Emulator {
	t.Helper()
	if opts.Fixtures == nil {
		opts.Fixtures = fixtures()
	}
	return cloudsimtest.Start(t, opts)
}

func newClient(t *testing.T, opts epaws.Options) *epaws.Client {
	t.Helper()
	c, err := epaws.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

var ownerTags = map[string]string{
	"edgeplane.io/cluster":   "test",
	"edgeplane.io/owner-uid": "0b8c2f5e-uid",
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 1})
	c := newClient(t, testOptions(emu.URL()))

	addr, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: ownerTags})
	if err != nil {
		t.Fatalf("AllocateAddress: %v", err)
	}
	if addr.AllocationID == "" || addr.PublicIP == "" || addr.PublicIPv4Pool != "amazon" {
		t.Fatalf("AllocateAddress returned %+v", addr)
	}

	found, err := c.DescribeAddresses(ctx, epaws.AddressQuery{Tags: ownerTags})
	if err != nil {
		t.Fatalf("DescribeAddresses by tags: %v", err)
	}
	want := []epaws.Address{{AllocationID: addr.AllocationID, PublicIP: addr.PublicIP, PublicIPv4Pool: "amazon", Tags: ownerTags}}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Fatalf("DescribeAddresses by tags (-want +got):\n%s", diff)
	}

	eni, err := c.FindNetworkInterfaceForPodIP(ctx, vpcID, podIP, nodeIP)
	if err != nil {
		t.Fatalf("FindNetworkInterfaceForPodIP: %v", err)
	}
	if eni.ID != nodeENI || eni.InstanceID != instanceID {
		t.Fatalf("pod IP %s found on %+v, want %s", podIP, eni, nodeENI)
	}

	assoc, err := c.AssociateAddress(ctx, addr.AllocationID, eni.ID, podIP)
	if err != nil {
		t.Fatalf("AssociateAddress: %v", err)
	}
	again, err := c.AssociateAddress(ctx, addr.AllocationID, eni.ID, podIP)
	if err != nil || again != assoc {
		t.Fatalf("repeated AssociateAddress = %q, %v; want %q (idempotent)", again, err, assoc)
	}

	for name, q := range map[string]epaws.AddressQuery{
		"association-id":       {AssociationID: assoc},
		"network-interface-id": {NetworkInterfaceID: nodeENI, PrivateIPAddress: podIP},
		"allocation-id":        {AllocationIDs: []string{addr.AllocationID}},
		"tag-key":              {TagKeys: []string{"edgeplane.io/owner-uid"}},
	} {
		got, err := c.DescribeAddresses(ctx, q)
		if err != nil {
			t.Fatalf("DescribeAddresses by %s: %v", name, err)
		}
		if len(got) != 1 || got[0].AssociationID != assoc || got[0].InstanceID != instanceID || got[0].PrivateIPAddress != podIP {
			t.Fatalf("DescribeAddresses by %s = %+v", name, got)
		}
	}

	if err := c.CreateTags(ctx, addr.AllocationID, map[string]string{"edgeplane.io/pod": "ns/pod"}); err != nil {
		t.Fatalf("CreateTags: %v", err)
	}
	got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{Tags: map[string]string{"edgeplane.io/pod": "ns/pod"}})
	if err != nil || len(got) != 1 {
		t.Fatalf("DescribeAddresses by new tag = %+v, %v", got, err)
	}
	if err := c.DeleteTags(ctx, addr.AllocationID, "edgeplane.io/pod"); err != nil {
		t.Fatalf("DeleteTags: %v", err)
	}
	if got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{TagKeys: []string{"edgeplane.io/pod"}}); err != nil || len(got) != 0 {
		t.Fatalf("after DeleteTags, DescribeAddresses by tag-key = %+v, %v; want none", got, err)
	}

	if err := c.DisassociateAddress(ctx, assoc); err != nil {
		t.Fatalf("DisassociateAddress: %v", err)
	}
	if err := c.DisassociateAddress(ctx, assoc); err != nil {
		t.Fatalf("repeated DisassociateAddress should be idempotent: %v", err)
	}
	if err := c.ReleaseAddress(ctx, addr.AllocationID); err != nil {
		t.Fatalf("ReleaseAddress: %v", err)
	}
	err = c.ReleaseAddress(ctx, addr.AllocationID)
	if !epaws.IsNotFound(err) || epaws.IgnoreNotFound(err) != nil {
		t.Fatalf("second ReleaseAddress = %v, want a NotFound error", err)
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 0 {
		t.Fatalf("%d addresses left after release, want 0", n)
	}

	requests, _, _ := cloud.Collectors()
	var m dto.Metric
	if err := requests.WithLabelValues(cloud.ProviderAWS, "ReleaseAddress", "InvalidAllocationID.NotFound").Write(&m); err != nil || m.GetCounter().GetValue() < 1 {
		t.Fatalf("the failed ReleaseAddress was not counted by result code: %v, %v", m.GetCounter().GetValue(), err)
	}
}

func TestPrefixDelegationFallback(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 2})
	c := newClient(t, testOptions(emu.URL()))

	eni, err := c.FindNetworkInterfaceForPodIP(ctx, vpcID, prefixIP, nodeIP)
	if err != nil {
		t.Fatalf("FindNetworkInterfaceForPodIP(prefix IP): %v", err)
	}
	if eni.ID != podENI {
		t.Fatalf("prefix IP %s resolved to %s, want %s", prefixIP, eni.ID, podENI)
	}
	addr, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: ownerTags})
	if err != nil {
		t.Fatalf("AllocateAddress: %v", err)
	}
	if _, err := c.AssociateAddress(ctx, addr.AllocationID, eni.ID, prefixIP); err != nil {
		t.Fatalf("AssociateAddress to a prefix IP: %v", err)
	}

	_, err = c.FindNetworkInterfaceForPodIP(ctx, vpcID, "10.9.9.9", nodeIP)
	if !epaws.IsNotFound(err) {
		t.Fatalf("unknown pod IP: err = %v, want NotFound", err)
	}
	_, err = c.FindNetworkInterfaceForPodIP(ctx, "vpc-other", podIP, nodeIP)
	if !epaws.IsNotFound(err) {
		t.Fatalf("pod IP in another VPC: err = %v, want NotFound", err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 3})
	c := newClient(t, testOptions(emu.URL()))

	var addrs []epaws.Address
	for i := range 5 {
		a, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: map[string]string{"n": string(rune('a' + i))}})
		if err != nil {
			t.Fatalf("AllocateAddress %d: %v", i, err)
		}
		addrs = append(addrs, a)
	}
	_, err := c.AllocateAddress(ctx, epaws.AllocateRequest{})
	if !epaws.IsQuotaExceeded(err) {
		t.Fatalf("6th AllocateAddress: err = %v, want AddressLimitExceeded (default quota 5)", err)
	}
	if _, err := c.AssociateAddress(ctx, addrs[0].AllocationID, nodeENI, nodeIP); err != nil {
		t.Fatalf("AssociateAddress: %v", err)
	}

	cases := []struct {
		name  string
		call  func() error
		is    func(error) bool
		code  string
		retry bool
	}{
		{
			name: "associating an address bound elsewhere",
			call: func() error { _, err := c.AssociateAddress(ctx, addrs[0].AllocationID, nodeENI, podIP); return err },
			is:   epaws.IsAlreadyAssociated, code: epaws.CodeResourceAlreadyAssociated,
		},
		{
			name: "releasing an associated address",
			call: func() error { return c.ReleaseAddress(ctx, addrs[0].AllocationID) },
			is:   epaws.IsInUse, code: epaws.CodeInvalidIPAddressInUse,
		},
		{
			name: "associating an unknown address",
			call: func() error {
				_, err := c.AssociateAddress(ctx, "eipalloc-0000000000000000f", nodeENI, podIP)
				return err
			},
			is: epaws.IsNotFound, code: epaws.CodeInvalidAllocationIDNF,
		},
		{
			name: "associating with an unknown ENI",
			call: func() error {
				_, err := c.AssociateAddress(ctx, addrs[1].AllocationID, "eni-0000000000000000f", podIP)
				return err
			},
			is: epaws.IsNotFound, code: epaws.CodeInvalidNetworkInterfaceNF,
		},
		{
			name: "disassociating an unknown association",
			call: func() error { return c.DisassociateAddress(ctx, "eipassoc-0000000000000000f") },
			is:   epaws.IsNotFound, code: epaws.CodeInvalidAssociationIDNF,
		},
		{
			name: "associating with a private IP the ENI does not hold",
			call: func() error {
				_, err := c.AssociateAddress(ctx, addrs[1].AllocationID, nodeENI, "10.7.7.7")
				return err
			},
			is: epaws.IsInvalidParameter, code: epaws.CodeInvalidParameterValue,
		},
		{
			name: "tagging an unknown address",
			call: func() error { return c.CreateTags(ctx, "eipalloc-0000000000000000f", map[string]string{"k": "v"}) },
			is:   epaws.IsNotFound, code: epaws.CodeInvalidAllocationIDNF,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !tc.is(err) || epaws.ErrorCode(err) != tc.code {
				t.Fatalf("err = %v (code %q), want code %s", err, epaws.ErrorCode(err), tc.code)
			}
		})
	}

	t.Run("auth failures from the server", func(t *testing.T) {
		for _, code := range []string{epaws.CodeAuthFailure, epaws.CodeUnauthorizedOperation} {
			if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "DescribeAddresses", ErrorRate: 1, ErrorCode: code, Times: 1}); err != nil {
				t.Fatal(err)
			}
			// A client of its own: a rejection closes the client's
			// credential gate for a while (TestRevokedKeyCostsOneCallPerWindow).
			_, err := newClient(t, testOptions(emu.URL())).DescribeAddresses(ctx, epaws.AddressQuery{})
			if !epaws.IsAuthError(err) || epaws.ErrorCode(err) != code {
				t.Fatalf("err = %v, want %s classified as an auth error", err, code)
			}
		}
	})

	t.Run("unknown public IPv4 pool", func(t *testing.T) {
		if err := c.ReleaseAddress(ctx, addrs[4].AllocationID); err != nil {
			t.Fatal(err)
		}
		_, err := c.AllocateAddress(ctx, epaws.AllocateRequest{PublicIPv4Pool: "ipv4pool-ec2-nope"})
		if !epaws.IsInvalidParameter(err) {
			t.Fatalf("err = %v, want an invalid-parameter error", err)
		}
	})
}

func TestThrottledCallsBackOffAndSucceed(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 4, Settings: core.Settings{
		// A tiny server bucket so a short burst is throttled.
		RateLimitOverrides: map[string]core.Bucket{"ec2/DescribeAddresses": {Burst: 2, RefillPerSecond: 10}},
	}})
	opts := testOptions(emu.URL())
	opts.RateLimits.Disabled = true // let the server do the throttling
	opts.Retry.MaxAttempts = 30
	c := newClient(t, opts)

	for i := range 8 {
		if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err != nil {
			t.Fatalf("DescribeAddresses %d: %v (the retryer should have absorbed the throttling)", i, err)
		}
	}
	stats := emu.World().Stats()
	if stats["ec2/DescribeAddresses/RequestLimitExceeded"] == 0 {
		t.Fatalf("the server never throttled (stats %v); the test did not exercise backoff", stats)
	}
	if stats["ec2/DescribeAddresses/OK"] != 8 {
		t.Fatalf("server answered %d calls OK, want 8", stats["ec2/DescribeAddresses/OK"])
	}
}

func TestClientBucketsKeepUnderServerLimits(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 5, Settings: core.Settings{
		EC2AddressQuota:    100,
		RateLimitOverrides: map[string]core.Bucket{"ec2/AllocateAddress": {Burst: 2, RefillPerSecond: 50}},
	}})
	opts := testOptions(emu.URL())
	// A client bucket a little below the server's: the client waits instead
	// of being throttled. (Equal buckets are not enough: network jitter can
	// make two requests arrive closer together than they were sent.)
	opts.RateLimits.PerAction = map[string]cloud.RateLimit{"AllocateAddress": {QPS: 25, Burst: 1}}
	c := newClient(t, opts)

	for i := range 8 {
		if _, err := c.AllocateAddress(ctx, epaws.AllocateRequest{}); err != nil {
			t.Fatalf("AllocateAddress %d: %v", i, err)
		}
	}
	if n := emu.World().Stats()["ec2/AllocateAddress/RequestLimitExceeded"]; n != 0 {
		t.Fatalf("server throttled %d calls although the client bucket is below the server's", n)
	}
}

func TestAllocateCommitThenDrop(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 6})
	opts := testOptions(emu.URL())
	opts.Timeout = time.Second // long enough for a loaded CI machine; the dropped attempt waits it out
	c := newClient(t, opts)

	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AllocateAddress", DropRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: ownerTags})
	if err == nil {
		t.Fatal("AllocateAddress succeeded although its response was dropped")
	}
	if !epaws.IsOutcomeUnknown(err) {
		t.Fatalf("err = %v, want an outcome-unknown (timeout) error", err)
	}

	// The SDK did not retry (no second address), and the caller finds the
	// one that was created by its creation tags.
	snap := emu.World().Snapshot()
	if len(snap.EC2.Addresses) != 1 {
		t.Fatalf("%d addresses exist after one dropped allocation, want exactly 1", len(snap.EC2.Addresses))
	}
	found, err := c.DescribeAddresses(ctx, epaws.AddressQuery{Tags: ownerTags})
	if err != nil {
		t.Fatalf("DescribeAddresses by tags: %v", err)
	}
	if len(found) != 1 || found[0].AllocationID != snap.EC2.Addresses[0].AllocationID {
		t.Fatalf("found %+v by tags, want the dropped allocation %s", found, snap.EC2.Addresses[0].AllocationID)
	}
}

func TestAssociateCommitThenDropIsRetriedIdempotently(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 7})
	opts := testOptions(emu.URL())
	opts.Timeout = time.Second // long enough for a loaded CI machine; the dropped attempt waits it out
	c := newClient(t, opts)

	addr, err := c.AllocateAddress(ctx, epaws.AllocateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AssociateAddress", DropRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	assoc, err := c.AssociateAddress(ctx, addr.AllocationID, nodeENI, podIP)
	if err != nil {
		t.Fatalf("AssociateAddress should be retried after the dropped response: %v", err)
	}
	got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{AllocationIDs: []string{addr.AllocationID}})
	if err != nil || len(got) != 1 || got[0].AssociationID != assoc {
		t.Fatalf("address after retried association = %+v, %v; want association %s", got, err, assoc)
	}
}

func TestEventualConsistencyWindow(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	emu := startEmulator(t, cloudsim.Options{Seed: 8, Clock: clock})
	c := newClient(t, testOptions(emu.URL()))

	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AllocateAddress", VisibilityDelay: core.Duration(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	addr, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: ownerTags})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{Tags: ownerTags}); err != nil || len(got) != 0 {
		t.Fatalf("inside the window DescribeAddresses = %+v, %v; want nothing yet", got, err)
	}
	clock.Advance(10 * time.Second)
	got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{Tags: ownerTags})
	if err != nil || len(got) != 1 || got[0].AllocationID != addr.AllocationID {
		t.Fatalf("after the window DescribeAddresses = %+v, %v; want %s", got, err, addr.AllocationID)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	cases := map[string]epaws.Options{
		"no region":          {Credentials: epaws.Credentials{Source: epaws.CredentialsNone}},
		"relative endpoint":  {Region: "r", Endpoint: "127.0.0.1:1", Credentials: epaws.Credentials{Source: epaws.CredentialsNone}},
		"static without key": {Region: "r", Credentials: epaws.Credentials{Source: epaws.CredentialsStatic}},
		"unknown source":     {Region: "r", Credentials: epaws.Credentials{Source: "Magic"}},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := epaws.New(context.Background(), opts); err == nil {
				t.Fatal("New accepted invalid options")
			}
		})
	}
}

func TestStaticCredentialsAreSentAndNeverPrinted(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 9, Settings: core.Settings{
		EC2Credentials: map[string]core.EC2Credential{"AKIAEXAMPLE": {SecretAccessKey: "very-secret"}},
	}})
	opts := testOptions(emu.URL())
	opts.Credentials = epaws.Credentials{Source: epaws.CredentialsStatic, AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "very-secret"}
	c := newClient(t, opts)
	if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err != nil {
		t.Fatalf("signed DescribeAddresses: %v", err)
	}
	for _, s := range []string{opts.Credentials.String(), opts.Credentials.GoString()} {
		if slices.ContainsFunc([]string{"AKIAEXAMPLE", "very-secret"}, func(secret string) bool { return strings.Contains(s, secret) }) {
			t.Fatalf("credentials printed a secret: %s", s)
		}
	}
}

// TestRejectedCredentialsAreAuthErrors: the emulator checks SigV4 like EC2,
// and every way it refuses credentials reaches the client as an auth error
// (never retried as if transient, never taken for NotFound).
func TestRejectedCredentialsAreAuthErrors(t *testing.T) {
	ctx := context.Background()
	skewed := time.Now().Add(20 * time.Minute)
	cases := map[string]struct {
		creds epaws.Credentials
		clock func() time.Time
		code  string
	}{
		"unknown access key": {creds: epaws.Credentials{Source: epaws.CredentialsStatic, AccessKeyID: "AKIAUNKNOWN", SecretAccessKey: "x"}, code: epaws.CodeAuthFailure},
		"wrong secret":       {creds: epaws.Credentials{Source: epaws.CredentialsStatic, AccessKeyID: epaws.EmulatorAccessKeyID, SecretAccessKey: "wrong"}, code: epaws.CodeSignatureDoesNotMatch},
		"clock 20 minutes off": {
			creds: epaws.Credentials{Source: epaws.CredentialsNone},
			clock: func() time.Time { return skewed }, code: epaws.CodeRequestExpired,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			emu := startEmulator(t, cloudsim.Options{Seed: 11, SignatureClock: tc.clock})
			opts := testOptions(emu.URL())
			opts.Credentials = tc.creds
			c := newClient(t, opts)
			_, err := c.DescribeAddresses(ctx, epaws.AddressQuery{})
			if !epaws.IsAuthError(err) || epaws.ErrorCode(err) != tc.code {
				t.Fatalf("err = %v (code %q), want %s classified as an auth error", err, epaws.ErrorCode(err), tc.code)
			}
			if n := emu.World().Stats()["ec2/DescribeAddresses/"+tc.code]; n != 1 {
				t.Fatalf("the emulator answered %s %d times, want once (not retried)", tc.code, n)
			}
		})
	}
}

// TestRevokedKeyCostsOneCallPerWindow: once EC2 rejects the account's key,
// the client makes no call until the backoff window has passed, then one
// probe; when the key works again the next probe opens the client. Calls
// are counted by the emulator.
func TestRevokedKeyCostsOneCallPerWindow(t *testing.T) {
	ctx := context.Background()
	const key, secret = "AKIAREVOKED000000001", "revoked-secret"
	emu := startEmulator(t, cloudsim.Options{Seed: 13, Settings: core.Settings{
		EC2Credentials: map[string]core.EC2Credential{key: {SecretAccessKey: secret}},
	}})
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	opts := testOptions(emu.URL())
	opts.Credentials = epaws.Credentials{Source: epaws.CredentialsStatic, AccessKeyID: key, SecretAccessKey: secret}
	opts.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Minute, Max: time.Hour}
	opts.Clock = clk
	c := newClient(t, opts)
	calls := func() int64 {
		var n int64
		for k, v := range emu.World().Stats() {
			if strings.HasPrefix(k, "ec2/DescribeAddresses/") {
				n += v
			}
		}
		return n
	}
	if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err != nil {
		t.Fatal(err)
	}
	if err := emu.World().UpdateSettings(func(s *core.Settings) { delete(s.EC2Credentials, key) }); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		_, err := c.DescribeAddresses(ctx, epaws.AddressQuery{})
		var gated *cloud.CredentialsRejectedError
		if !epaws.IsCredentialsRejected(err) || (i > 0 && !errors.As(err, &gated)) {
			t.Fatalf("call %d: %v, want the rejection (from the gate after the first)", i, err)
		}
	}
	if n := calls(); n != 2 {
		t.Fatalf("the emulator saw %d calls, want 2 (one accepted, one rejected)", n)
	}
	clk.Step(time.Minute)
	for range 5 {
		_, _ = c.DescribeAddresses(ctx, epaws.AddressQuery{})
	}
	if n := calls(); n != 3 {
		t.Fatalf("after one window the emulator saw %d calls, want 3 (one probe)", n)
	}
	if err := emu.World().UpdateSettings(func(s *core.Settings) {
		s.EC2Credentials[key] = core.EC2Credential{SecretAccessKey: secret}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err == nil {
		t.Fatal("a call went out inside the doubled window")
	}
	clk.Step(2 * time.Minute)
	if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err != nil {
		t.Fatalf("the probe after the key came back: %v", err)
	}
	if _, err := c.DescribeAddresses(ctx, epaws.AddressQuery{}); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

// TestNodeAssociation: the node EIP path through the real SDK. The fixture
// node has a secondary ENI, so EC2 refuses AssociateAddress by InstanceId
// (InvalidInstanceID); the client finds the primary ENI and associates
// with its primary IP. An instance with one ENI takes InstanceId.
// DescribeAddresses finds both by instance.
func TestNodeAssociation(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, cloudsim.Options{Seed: 9})
	const single = "i-0123456789abcdef1"
	if _, err := emu.World().ApplyFixtures(&core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{{
		InstanceID: single, VpcID: vpcID, NetworkInterfaces: []core.EC2ENIFixture{{PrivateIPAddresses: []string{"10.0.2.10"}}},
	}}}}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, testOptions(emu.URL()))
	a, err := c.AllocateAddress(ctx, epaws.AllocateRequest{Tags: ownerTags})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.AllocateAddress(ctx, epaws.AllocateRequest{})
	if err != nil {
		t.Fatal(err)
	}

	_, err = c.AssociateAddressWithInstance(ctx, a.AllocationID, instanceID)
	if !epaws.IsMultipleInterfaces(err) || epaws.ErrorCode(err) != epaws.CodeInvalidInstanceID {
		t.Fatalf("AssociateAddressWithInstance on a node with two ENIs: %v, want InvalidInstanceID", err)
	}
	_, err = c.AssociateAddressWithInstance(ctx, a.AllocationID, "aws:///us-east-1a/"+instanceID)
	if !epaws.IsInvalidParameter(err) || epaws.ErrorCode(err) != epaws.CodeInvalidInstanceIDMalformed {
		t.Fatalf("a providerID passed as instance ID: %v, want InvalidInstanceID.Malformed", err)
	}

	eni, err := c.FindPrimaryNetworkInterface(ctx, instanceID)
	if err != nil {
		t.Fatal(err)
	}
	if eni.ID != nodeENI || eni.DeviceIndex != 0 || eni.InstanceID != instanceID || eni.PrivateIPs[0] != nodeIP {
		t.Fatalf("primary ENI = %+v, want %s with primary IP %s", eni, nodeENI, nodeIP)
	}
	viaENI, err := c.AssociateAddress(ctx, a.AllocationID, eni.ID, eni.PrivateIPs[0])
	if err != nil {
		t.Fatal(err)
	}
	viaInstance, err := c.AssociateAddressWithInstance(ctx, b.AllocationID, single)
	if err != nil {
		t.Fatalf("AssociateAddressWithInstance on a single-ENI instance: %v", err)
	}
	got, err := c.DescribeAddresses(ctx, epaws.AddressQuery{InstanceIDs: []string{instanceID, single}})
	if err != nil {
		t.Fatal(err)
	}
	type assoc struct{ Alloc, Assoc, Instance, IP string }
	var gotA []assoc
	for _, x := range got {
		gotA = append(gotA, assoc{x.AllocationID, x.AssociationID, x.InstanceID, x.PrivateIPAddress})
	}
	wantA := []assoc{{a.AllocationID, viaENI, instanceID, nodeIP}, {b.AllocationID, viaInstance, single, "10.0.2.10"}}
	if diff := cmp.Diff(wantA, gotA); diff != "" {
		t.Fatalf("DescribeAddresses by instance (-want +got):\n%s", diff)
	}
	// A second address onto the taken node is refused, not moved.
	if _, err := c.AssociateAddressWithInstance(ctx, a.AllocationID, single); !epaws.IsAlreadyAssociated(err) {
		t.Fatalf("moving an associated address onto another node: %v, want Resource.AlreadyAssociated", err)
	}

	if _, err := c.FindPrimaryNetworkInterface(ctx, "i-0000000000000000f"); !epaws.IsNotFound(err) {
		t.Fatalf("primary ENI of an unknown instance: %v, want NotFound", err)
	}
}

// TestPrimaryENIsAreLookedUpInBatches: 250 nodes cost two filtered
// DescribeNetworkInterfaces calls (200 filter values each), not 250.
func TestPrimaryENIsAreLookedUpInBatches(t *testing.T) {
	ctx := context.Background()
	var fx core.Fixtures
	var ids []string
	for i := range 250 {
		id := fmt.Sprintf("i-%017x", i+1)
		ids = append(ids, id)
		fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{InstanceID: id, VpcID: vpcID, NetworkInterfaces: []core.EC2ENIFixture{
			{PrivateIPAddresses: []string{fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)}},
			{PrivateIPAddresses: []string{fmt.Sprintf("10.2.%d.%d", i/200, i%200+1)}},
		}})
	}
	emu := startEmulator(t, cloudsim.Options{Seed: 10, Fixtures: &fx})
	c := newClient(t, testOptions(emu.URL()))
	// Calls are counted on the client (one call includes the SDK's
	// retries): on loopback the SDK retries now and then a large response
	// whose connection Go's transport closed (aws/aws-sdk-go-v2#2737), so
	// the emulator's request count is not the call count.
	requests, _, _ := cloud.Collectors()
	calls := func() float64 {
		var m dto.Metric
		if err := requests.WithLabelValues(cloud.ProviderAWS, "DescribeNetworkInterfaces", cloud.CodeOK).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	before := calls()
	found, err := c.FindPrimaryNetworkInterfaces(ctx, append(ids, ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 250 {
		t.Fatalf("found %d primary ENIs, want 250", len(found))
	}
	for i, id := range ids {
		if e := found[id]; e.DeviceIndex != 0 || e.PrivateIPs[0] != fmt.Sprintf("10.1.%d.%d", i/200, i%200+1) {
			t.Fatalf("primary ENI of %s = %+v", id, e)
		}
	}
	if n := calls() - before; n != 2 {
		t.Fatalf("%v DescribeNetworkInterfaces calls, want 2", n)
	}
}
