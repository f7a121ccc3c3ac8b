package tencentcloud_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/edgeplane/edgeplane/internal/cloud"
	tc "github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// These tests drive the real tencentcloud-sdk-go clients, configured as in
// production (NewAPIs: signed requests, rate-limited transport, SDK
// retries), against the emulator over HTTP.

const (
	nodeInstance = "ins-node0001"
	nodeIP       = "10.1.0.5"
	otherNode    = "ins-node0002"
)

var ownerTags = map[string]string{"edgeplane.io/cluster": "test", "edgeplane.io/owner-uid": "uid-1"}

func fixtures() *core.Fixtures {
	return &core.Fixtures{Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{
		{InstanceID: nodeInstance, InstanceName: "node-1", Zone: "ap-hongkong-2", VpcID: "vpc-hk", SubnetID: "subnet-hk", PrivateIPAddresses: []string{nodeIP}},
		{InstanceID: otherNode, InstanceName: "node-2", Zone: "ap-hongkong-2", VpcID: "vpc-hk", SubnetID: "subnet-hk", PrivateIPAddresses: []string{"10.1.0.6"}},
	}}}
}

func testOptions(url string) tc.Options {
	return tc.Options{
		Region:           "ap-hongkong",
		Endpoint:         url,
		Credentials:      tc.Credentials{Source: tc.CredentialsNone},
		Retry:            tc.RetryOptions{BaseDelay: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond},
		Timeout:          5 * time.Second,
		TaskPollInterval: 10 * time.Millisecond,
	}
}

func start(t *testing.T, opts cloudsim.Options) *cloudsimtest.Emulator {
	t.Helper()
	if opts.Fixtures == nil {
		opts.Fixtures = fixtures()
	}
	return cloudsimtest.Start(t, opts)
}

func newClient(t *testing.T, opts tc.Options) *tc.Client {
	t.Helper()
	c, err := tc.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func describeOne(t *testing.T, c *tc.Client, id string) tc.Address {
	t.Helper()
	got, err := c.DescribeAddresses(context.Background(), tc.AddressQuery{IDs: []string{id}})
	if err != nil {
		t.Fatalf("DescribeAddresses(%s): %v", id, err)
	}
	if len(got) != 1 {
		t.Fatalf("DescribeAddresses(%s) returned %d addresses", id, len(got))
	}
	return got[0]
}

func TestLifecycleOnTheEmulatorClock(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu := start(t, cloudsim.Options{Seed: 1, Clock: clock, Settings: core.Settings{TaskDuration: core.Duration(2 * time.Second)}})
	c := newClient(t, testOptions(emu.URL()))
	step := func() { clock.Advance(2 * time.Second) }

	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{
		AddressType: tc.AddressTypeAnycastEIP, AnycastZone: tc.AnycastZoneOverseas,
		InternetMaxBandwidthOut: 100, AddressName: "cls-1-aia", Tags: ownerTags, ClientToken: "uid-1",
	})
	if err != nil {
		t.Fatalf("AllocateAddress: %v", err)
	}
	if len(res.AddressIDs) != 1 || res.TaskID == 0 {
		t.Fatalf("AllocateAddress = %+v", res)
	}
	id := res.AddressIDs[0]
	if st, err := c.TaskResult(ctx, res.TaskID); err != nil || st != tc.TaskRunning {
		t.Fatalf("TaskResult right after allocation = %q, %v; want RUNNING", st, err)
	}
	if a := describeOne(t, c, id); a.Status != tc.StatusCreating {
		t.Fatalf("status = %s, want CREATING", a.Status)
	}
	step()
	if st, err := c.TaskResult(ctx, res.TaskID); err != nil || st != tc.TaskSuccess {
		t.Fatalf("TaskResult after the task duration = %q, %v; want SUCCESS", st, err)
	}
	a := describeOne(t, c, id)
	want := tc.Address{
		ID: id, Name: "cls-1-aia", IP: a.IP, Type: "AnycastEIP", Status: tc.StatusUnbind,
		ChargeType: "TRAFFIC_POSTPAID_BY_HOUR", Bandwidth: 100, Tags: ownerTags, CreatedTime: "2026-03-04T05:06:07Z",
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("allocated address (-want +got):\n%s", diff)
	}

	rows, err := c.FindResourcesByTags(ctx, ownerTags, "eip")
	if err != nil {
		t.Fatalf("FindResourcesByTags: %v", err)
	}
	if len(rows) != 1 || rows[0].ID != id || rows[0].Region != "ap-hongkong" || rows[0].Prefix != "eip" {
		t.Fatalf("FindResourcesByTags = %+v", rows)
	}

	inst, err := c.FindInstanceByPrivateIP(ctx, nodeIP)
	if err != nil || inst.ID != nodeInstance {
		t.Fatalf("FindInstanceByPrivateIP = %+v, %v", inst, err)
	}

	task, err := c.AssociateAddress(ctx, id, inst.ID)
	if err != nil {
		t.Fatalf("AssociateAddress: %v", err)
	}
	if _, err := c.AssociateAddress(ctx, id, inst.ID); !tc.IsTaskRunning(err) {
		t.Fatalf("AssociateAddress while BINDING: err = %v, want OperationDenied.MutexTaskRunning", err)
	}
	if a := describeOne(t, c, id); a.Status != tc.StatusBinding {
		t.Fatalf("status = %s, want BINDING", a.Status)
	}
	step()
	if st, _ := c.TaskResult(ctx, task); st != tc.TaskSuccess {
		t.Fatalf("bind task = %s", st)
	}
	bound, err := c.DescribeAddresses(ctx, tc.AddressQuery{InstanceID: nodeInstance, Types: []string{"AnycastEIP"}})
	if err != nil || len(bound) != 1 || bound[0].Status != tc.StatusBind || bound[0].PrivateIP != nodeIP {
		t.Fatalf("DescribeAddresses by instance = %+v, %v; want BIND to %s", bound, err, nodeIP)
	}
	insts, err := c.DescribeInstances(ctx, nodeInstance, "ins-unknown1")
	if err != nil || len(insts) != 1 || !cmp.Equal(insts[0].PublicIPs, []string{a.IP}) {
		t.Fatalf("DescribeInstances = %+v, %v; want the EIP %s as public IP", insts, err, a.IP)
	}

	if _, err := c.ReleaseAddresses(ctx, id); !tc.IsInvalidState(err) || tc.ErrorCode(err) != tc.CodeInvalidAddressState {
		t.Fatalf("releasing a bound address: err = %v, want InvalidAddressState", err)
	}
	if _, err := c.DisassociateAddress(ctx, id); err != nil {
		t.Fatalf("DisassociateAddress: %v", err)
	}
	step()
	if a := describeOne(t, c, id); a.Status != tc.StatusUnbind || a.InstanceID != "" {
		t.Fatalf("after unbinding: %+v", a)
	}
	if _, err := c.ReleaseAddresses(ctx, id); err != nil {
		t.Fatalf("ReleaseAddresses: %v", err)
	}
	if a := describeOne(t, c, id); a.Status != tc.StatusOffline {
		t.Fatalf("status = %s, want OFFLINING", a.Status)
	}
	step()
	if got, err := c.DescribeAddresses(ctx, tc.AddressQuery{IDs: []string{id}}); err != nil || len(got) != 0 {
		t.Fatalf("released address still listed: %+v, %v", got, err)
	}
	if snap := emu.World().Snapshot(); len(snap.Tencent.Addresses) != 0 {
		t.Fatalf("leaked addresses: %+v", snap.Tencent.Addresses)
	}

	requests, _, _ := cloud.Collectors()
	var m dto.Metric
	if err := requests.WithLabelValues(cloud.ProviderTencentCloud, "ReleaseAddresses", tc.CodeInvalidAddressState).Write(&m); err != nil || m.GetCounter().GetValue() < 1 {
		t.Fatalf("the failed ReleaseAddresses was not counted by result code: %v, %v", m.GetCounter().GetValue(), err)
	}
}

func TestWaitForTaskOnTheWallClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	emu := start(t, cloudsim.Options{Seed: 2, Settings: core.Settings{TaskDuration: core.Duration(50 * time.Millisecond)}})
	c := newClient(t, testOptions(emu.URL()))

	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{AddressType: tc.AddressTypeHighQualityEIP})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForTask(ctx, res.TaskID); err != nil {
		t.Fatalf("WaitForTask(allocate): %v", err)
	}
	task, err := c.AssociateAddress(ctx, res.AddressIDs[0], nodeInstance)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForTask(ctx, task); err != nil {
		t.Fatalf("WaitForTask(bind): %v", err)
	}
	if a := describeOne(t, c, res.AddressIDs[0]); a.Status != tc.StatusBind {
		t.Fatalf("status = %s, want BIND", a.Status)
	}

	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if err := emu.World().UpdateSettings(func(s *core.Settings) { s.TaskDuration = core.Duration(time.Hour) }); err != nil {
		t.Fatal(err)
	}
	task, err = c.DisassociateAddress(ctx, res.AddressIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForTask(short, task); err == nil {
		t.Fatal("WaitForTask returned before an hour-long task finished")
	}
}

func TestFailedTaskRollsBack(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu := start(t, cloudsim.Options{Seed: 3, Clock: clock})
	c := newClient(t, testOptions(emu.URL()))

	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AssociateAddress", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	task, err := c.AssociateAddress(ctx, res.AddressIDs[0], nodeInstance)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := c.WaitForTask(ctx, task); !tc.IsTaskFailed(err) {
		t.Fatalf("WaitForTask = %v, want ErrTaskFailed", err)
	}
	if a := describeOne(t, c, res.AddressIDs[0]); a.Status != tc.StatusUnbind || a.InstanceID != "" {
		t.Fatalf("after a failed bind the address is %+v, want UNBIND", a)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu := start(t, cloudsim.Options{Seed: 4, Clock: clock, Settings: core.Settings{
		TencentAddressQuota: 3,
		TencentAnycastZones: []string{core.AnycastZoneOverseas},
	}})
	c := newClient(t, testOptions(emu.URL()))

	var ids []string
	for range 3 {
		res, err := c.AllocateAddress(ctx, tc.AllocateRequest{AddressType: tc.AddressTypeAnycastEIP})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.AddressIDs[0])
	}
	clock.Advance(time.Minute)
	if _, err := c.AssociateAddress(ctx, ids[0], nodeInstance); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)

	badKeys := testOptions(emu.URL())
	badKeys.Credentials = tc.Credentials{Source: tc.CredentialsStatic, SecretID: "AKIDunknown", SecretKey: "k"}
	wrongSecret := testOptions(emu.URL())
	wrongSecret.Credentials = tc.Credentials{Source: tc.CredentialsStatic, SecretID: tc.EmulatorSecretID, SecretKey: "wrong"}

	cases := []struct {
		name string
		call func() error
		is   func(error) bool
		code string
	}{
		{"quota", func() error { _, err := c.AllocateAddress(ctx, tc.AllocateRequest{}); return err }, tc.IsQuotaExceeded, tc.CodeAddressQuotaLimitExceeded},
		{"anycast zone not allow-listed", func() error {
			_, err := c.AllocateAddress(ctx, tc.AllocateRequest{AddressType: tc.AddressTypeAnycastEIP, AnycastZone: tc.AnycastZoneGlobal})
			return err
		}, tc.IsAnycastNotAllowed, tc.CodeUnauthorizedAnycastEip},
		{"bind a bound address", func() error { _, err := c.AssociateAddress(ctx, ids[0], otherNode); return err }, tc.IsInvalidState, tc.CodeAddressStatusNotPermit},
		{"bind to an instance that has an EIP", func() error { _, err := c.AssociateAddress(ctx, ids[1], nodeInstance); return err }, tc.IsAlreadyBound, tc.CodeInstanceAlreadyBindEip},
		{"release a bound address", func() error { _, err := c.ReleaseAddresses(ctx, ids[0]); return err }, tc.IsInvalidState, tc.CodeInvalidAddressState},
		{"unbind an unbound address", func() error { _, err := c.DisassociateAddress(ctx, ids[1]); return err }, tc.IsInvalidState, tc.CodeAddressIDStatusNotPermit},
		{"unknown address", func() error { _, err := c.AssociateAddress(ctx, "eip-00000000", nodeInstance); return err }, tc.IsNotFound, tc.CodeInvalidAddressIDNotFound},
		{"unknown instance", func() error { _, err := c.AssociateAddress(ctx, ids[1], "ins-00000000"); return err }, tc.IsNotFound, tc.CodeInvalidInstanceIDNotFound},
		{"malformed address ID", func() error { _, err := c.ReleaseAddresses(ctx, "nope"); return err }, tc.IsInvalidParameter, "InvalidParameterValue.AddressIdMalformed"},
		{"unknown SecretId", func() error {
			_, err := newClient(t, badKeys).DescribeAddresses(ctx, tc.AddressQuery{})
			return err
		}, tc.IsAuthError, "AuthFailure.SecretIdNotFound"},
		{"wrong SecretKey", func() error {
			_, err := newClient(t, wrongSecret).DescribeAddresses(ctx, tc.AddressQuery{})
			return err
		}, tc.IsAuthError, "AuthFailure.SignatureFailure"},
	}
	for _, tcase := range cases {
		t.Run(tcase.name, func(t *testing.T) {
			err := tcase.call()
			if err == nil || !tcase.is(err) || tc.ErrorCode(err) != tcase.code {
				t.Fatalf("err = %v, want code %s", err, tcase.code)
			}
		})
	}
}

func TestThrottledCallsBackOffAndSucceed(t *testing.T) {
	ctx := context.Background()
	emu := start(t, cloudsim.Options{Seed: 5, Settings: core.Settings{
		RateLimitOverrides: map[string]core.Bucket{"tencent/DescribeAddresses": {Burst: 2, RefillPerSecond: 10}},
	}})
	opts := testOptions(emu.URL())
	opts.RateLimits.Disabled = true // let the server throttle
	opts.Retry.RateLimitMaxRetries = 30
	c := newClient(t, opts)

	for i := range 8 {
		if _, err := c.DescribeAddresses(ctx, tc.AddressQuery{}); err != nil {
			t.Fatalf("DescribeAddresses %d: %v (the SDK should have retried the throttling)", i, err)
		}
	}
	stats := emu.World().Stats()
	if stats["tencent/DescribeAddresses/RequestLimitExceeded"] == 0 {
		t.Fatalf("the server never throttled (stats %v); the test did not exercise backoff", stats)
	}
	if stats["tencent/DescribeAddresses/OK"] != 8 {
		t.Fatalf("server answered %d calls OK, want 8", stats["tencent/DescribeAddresses/OK"])
	}
}

func TestClientBucketsKeepUnderServerLimits(t *testing.T) {
	ctx := context.Background()
	emu := start(t, cloudsim.Options{Seed: 6, Settings: core.Settings{
		TencentAddressQuota: 100,
		RateLimitOverrides:  map[string]core.Bucket{"tencent/AllocateAddresses": {Burst: 2, RefillPerSecond: 50}},
	}})
	opts := testOptions(emu.URL())
	opts.RateLimits.PerAction = map[string]cloud.RateLimit{"AllocateAddresses": {QPS: 25, Burst: 1}}
	opts.Retry.RateLimitMaxRetries = -1 // a throttled call would fail the test
	c := newClient(t, opts)
	for i := range 8 {
		if _, err := c.AllocateAddress(ctx, tc.AllocateRequest{}); err != nil {
			t.Fatalf("AllocateAddress %d: %v", i, err)
		}
	}
}

func TestAllocateCommitThenDropCreatesOneAddress(t *testing.T) {
	for _, sdkRetries := range []bool{true, false} {
		t.Run(fmt.Sprintf("sdk retries %v", sdkRetries), func(t *testing.T) {
			ctx := context.Background()
			emu := start(t, cloudsim.Options{Seed: 7})
			opts := testOptions(emu.URL())
			opts.Timeout = time.Second // long enough for a loaded CI machine; the dropped attempt waits it out
			if !sdkRetries {
				opts.Retry.NetworkFailureMaxRetries = -1
			}
			c := newClient(t, opts)
			if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AllocateAddresses", DropRate: 1, Times: 1}); err != nil {
				t.Fatal(err)
			}
			req := tc.AllocateRequest{AddressType: tc.AddressTypeAnycastEIP, Tags: ownerTags, ClientToken: "owner-uid-1"}
			res, err := c.AllocateAddress(ctx, req)
			if !sdkRetries {
				// The caller sees the timeout and repeats the call with the
				// same token, as a reconciler would on its next pass.
				if !tc.IsOutcomeUnknown(err) {
					t.Fatalf("first AllocateAddress: err = %v, want an outcome-unknown network error", err)
				}
				res, err = c.AllocateAddress(ctx, req)
			}
			if err != nil {
				t.Fatalf("AllocateAddress: %v", err)
			}
			snap := emu.World().Snapshot()
			if len(snap.Tencent.Addresses) != 1 || snap.Tencent.Addresses[0].AddressID != res.AddressIDs[0] {
				t.Fatalf("addresses after a dropped, retried allocation: %+v; want exactly %v", snap.Tencent.Addresses, res.AddressIDs)
			}
			if n := snap.Stats["tencent/AllocateAddresses/OK"]; n != 2 {
				t.Fatalf("the server answered %d allocations, want 2 (dropped + retried)", n)
			}
		})
	}
}

func TestEventualConsistencyWindow(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu := start(t, cloudsim.Options{Seed: 8, Clock: clock})
	c := newClient(t, testOptions(emu.URL()))
	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AllocateAddresses", VisibilityDelay: core.Duration(5 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{Tags: ownerTags})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.DescribeAddresses(ctx, tc.AddressQuery{IDs: res.AddressIDs}); err != nil || len(got) != 0 {
		t.Fatalf("inside the window: %+v, %v; want nothing", got, err)
	}
	if got, err := c.FindResourcesByTags(ctx, ownerTags, "eip"); err != nil || len(got) != 0 {
		t.Fatalf("tag look-up inside the window: %+v, %v; want nothing", got, err)
	}
	clock.Advance(5 * time.Second)
	if got, err := c.DescribeAddresses(ctx, tc.AddressQuery{Tags: ownerTags}); err != nil || len(got) != 1 {
		t.Fatalf("after the window: %+v, %v; want the address", got, err)
	}
}

func TestPaging(t *testing.T) {
	ctx := context.Background()
	f := fixtures()
	for i := range 150 {
		f.Tencent.Addresses = append(f.Tencent.Addresses, core.TCAddressFixture{
			AddressType: "AnycastEIP", Tags: map[string]string{"edgeplane.io/cluster": "paging", "n": fmt.Sprint(i)},
		})
	}
	emu := start(t, cloudsim.Options{Seed: 9, Fixtures: f, Settings: core.Settings{TencentAddressQuota: 500}})
	c := newClient(t, testOptions(emu.URL()))

	all, err := c.DescribeAddresses(ctx, tc.AddressQuery{Tags: map[string]string{"edgeplane.io/cluster": "paging"}})
	if err != nil || len(all) != 150 {
		t.Fatalf("DescribeAddresses over two pages: %d addresses, %v; want 150", len(all), err)
	}
	var ids []string
	for _, a := range all {
		ids = append(ids, a.ID)
	}
	byID, err := c.DescribeAddresses(ctx, tc.AddressQuery{IDs: ids})
	if err != nil || len(byID) != 150 {
		t.Fatalf("DescribeAddresses by 150 IDs (two batches): %d, %v", len(byID), err)
	}
	if diff := cmp.Diff(all, byID, cmpopts.SortSlices(func(a, b tc.Address) bool { return a.ID < b.ID })); diff != "" {
		t.Fatalf("by tag vs by ID (-tag +id):\n%s", diff)
	}
	rows, err := c.FindResourcesByTags(ctx, map[string]string{"edgeplane.io/cluster": "paging"}, "eip")
	if err != nil || len(rows) != 150 {
		t.Fatalf("FindResourcesByTags over two pages: %d, %v; want 150", len(rows), err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	none := tc.Credentials{Source: tc.CredentialsNone}
	cases := map[string]tc.Options{
		"no region":          {Credentials: none},
		"bad scheme":         {Region: "r", Endpoint: "ftp://127.0.0.1:1", Credentials: none},
		"static without key": {Region: "r", Credentials: tc.Credentials{Source: tc.CredentialsStatic, SecretID: "id"}},
		"unknown source":     {Region: "r", Credentials: tc.Credentials{Source: "Magic"}},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.New(opts); err == nil {
				t.Fatal("New accepted invalid options")
			}
		})
	}
}

// TestRevokedKeyCostsOneCallPerWindow: once Tencent Cloud rejects the
// account's key, none of the three services' clients calls until the
// backoff window has passed, then one probe; a working key reopens them.
func TestRevokedKeyCostsOneCallPerWindow(t *testing.T) {
	ctx := context.Background()
	const id, key = "AKIDrevoked", "revoked-key"
	emu := start(t, cloudsim.Options{Seed: 14, Settings: core.Settings{TencentCredentials: map[string]string{id: key}}})
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	opts := testOptions(emu.URL())
	opts.Credentials = tc.Credentials{Source: tc.CredentialsStatic, SecretID: id, SecretKey: key}
	opts.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Minute, Max: time.Hour}
	opts.Clock = clk
	c := newClient(t, opts)
	calls := func() int64 {
		var n int64
		for _, v := range emu.World().Stats() {
			n += v
		}
		return n
	}
	if err := emu.World().UpdateSettings(func(s *core.Settings) { delete(s.TencentCredentials, id) }); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, err := c.DescribeAddresses(ctx, tc.AddressQuery{})
		if !tc.IsCredentialsRejected(err) {
			t.Fatalf("DescribeAddresses: %v, want the rejection", err)
		}
		if _, err := c.DescribeInstances(ctx, nodeInstance); !tc.IsCredentialsRejected(err) {
			t.Fatalf("DescribeInstances: %v, want the rejection (one gate per account)", err)
		}
	}
	if n := calls(); n != 1 {
		t.Fatalf("the emulator saw %d calls, want 1", n)
	}
	if err := emu.World().UpdateSettings(func(s *core.Settings) { s.TencentCredentials[id] = key }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeAddresses(ctx, tc.AddressQuery{}); err == nil {
		t.Fatal("a call went out inside the window")
	}
	clk.Step(time.Minute)
	if _, err := c.DescribeAddresses(ctx, tc.AddressQuery{}); err != nil {
		t.Fatalf("the probe after the key came back: %v", err)
	}
	if n := calls(); n != 2 {
		t.Fatalf("the emulator saw %d calls, want 2", n)
	}
}

// podFixtures: a node whose secondary ENI holds pod IPs 10.1.1.2 and
// 10.1.1.20, the first a prefix of the second, the trap of address-ip's
// fuzzy single-value match.
func podFixtures() *core.Fixtures {
	f := fixtures()
	f.Tencent.Instances = append(f.Tencent.Instances, core.TCInstanceFixture{
		InstanceID: "ins-pods0001", VpcID: "vpc-hk", SubnetID: "subnet-hk", Zone: "ap-hongkong-2",
		NetworkInterfaceID: "eni-node0003", PrivateIPAddresses: []string{"10.1.0.7"},
		NetworkInterfaces: []core.TCENIFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.1.1.1", "10.1.1.20"}}},
	})
	f.Tencent.PrivateIPs = []core.TCPrivateIPFixture{{NetworkInterfaceID: "eni-pods0001", PrivateIPAddresses: []string{"10.1.1.2"}}}
	return f
}

// TestPodAddressOnENIPrivateIP walks the pod EIP path through the real
// SDK: find the ENI holding the pod IP, bind an EIP to that private IP,
// see it in DescribeAddresses and DescribeNetworkInterfaces, unbind it.
func TestPodAddressOnENIPrivateIP(t *testing.T) {
	ctx := context.Background()
	clock := core.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu := start(t, cloudsim.Options{Seed: 11, Clock: clock, Fixtures: podFixtures(), Settings: core.Settings{TaskDuration: core.Duration(time.Second)}})
	c := newClient(t, testOptions(emu.URL()))

	eni, err := c.FindNetworkInterfaceByPrivateIP(ctx, "vpc-hk", "10.1.1.2")
	if err != nil {
		t.Fatal(err)
	}
	want := tc.NetworkInterface{ID: "eni-pods0001", VpcID: "vpc-hk", SubnetID: "subnet-hk", Zone: "ap-hongkong-2", InstanceID: "ins-pods0001",
		DeviceIndex: 1, PrivateIPs: []string{"10.1.1.1", "10.1.1.20", "10.1.1.2"}, State: "AVAILABLE", Tags: map[string]string{}}
	if diff := cmp.Diff(want, eni); diff != "" {
		t.Fatalf("ENI of the pod IP (-want +got):\n%s", diff)
	}
	if _, err := c.FindNetworkInterfaceByPrivateIP(ctx, "vpc-hk", "10.1.1.3"); !tc.IsNotFound(err) {
		t.Fatalf("a pod IP no ENI holds: %v, want NotFound", err)
	}
	if _, err := c.FindNetworkInterfaceByPrivateIP(ctx, "vpc-other", "10.1.1.2"); !tc.IsNotFound(err) {
		t.Fatalf("the pod IP in another VPC: %v, want NotFound", err)
	}

	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{AddressType: tc.AddressTypeEIP, Tags: ownerTags, ClientToken: "pod-uid-1"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	id := res.AddressIDs[0]
	task, err := c.AssociateAddressWithPrivateIP(ctx, id, eni.ID, "10.1.1.2")
	if err != nil {
		t.Fatal(err)
	}
	if a := describeOne(t, c, id); a.Status != tc.StatusBinding {
		t.Fatalf("during the task: %+v", a)
	}
	clock.Advance(time.Second)
	if err := c.WaitForTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	a := describeOne(t, c, id)
	if a.Status != tc.StatusBind || a.InstanceID != "ins-pods0001" || a.NetworkInterfaceID != eni.ID || a.PrivateIP != "10.1.1.2" {
		t.Fatalf("bound address = %+v", a)
	}
	after, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{IDs: []string{eni.ID}})
	if err != nil || len(after) != 1 || after[0].PublicIPs["10.1.1.2"] != a.IP || after[0].AddressIDs["10.1.1.2"] != id {
		t.Fatalf("the ENI after binding: %+v, %v", after, err)
	}
	byInstance, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{InstanceIDs: []string{"ins-pods0001"}})
	if err != nil || len(byInstance) != 2 || !byInstance[0].Primary || byInstance[1].ID != eni.ID {
		t.Fatalf("ENIs of the node: %+v, %v; want its primary ENI then eni-pods0001", byInstance, err)
	}

	// The errors the pod path must tell apart.
	other, err := c.AllocateAddress(ctx, tc.AllocateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	cases := []struct {
		name string
		call func() error
		is   func(error) bool
		code string
	}{
		{"private IP taken", func() error {
			_, err := c.AssociateAddressWithPrivateIP(ctx, other.AddressIDs[0], eni.ID, "10.1.1.2")
			return err
		},
			tc.IsAlreadyBound, tc.CodePrivateIPAlreadyBindEip},
		{"IP not on the ENI", func() error {
			_, err := c.AssociateAddressWithPrivateIP(ctx, other.AddressIDs[0], eni.ID, "10.1.0.7")
			return err
		},
			tc.IsNetworkInterfaceNotFound, tc.CodeInvalidNetworkInterfaceIDNotFound},
		{"unknown ENI", func() error {
			_, err := c.AssociateAddressWithPrivateIP(ctx, other.AddressIDs[0], "eni-00000000", "10.1.1.2")
			return err
		}, tc.IsNetworkInterfaceNotFound, tc.CodeInvalidNetworkInterfaceIDNotFound},
		{"bound address to another IP", func() error { _, err := c.AssociateAddressWithPrivateIP(ctx, id, eni.ID, "10.1.1.20"); return err },
			tc.IsBoundElsewhere, tc.CodePrivateIPAddressNotMatch},
		{"bound address to another ENI", func() error {
			_, err := c.AssociateAddressWithPrivateIP(ctx, id, "eni-node0003", "10.1.0.7")
			return err
		},
			tc.IsBoundElsewhere, tc.CodeNetworkInterfaceIDNotMatch},
		{"unknown ENI ID listed", func() error {
			_, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{IDs: []string{"eni-00000000"}})
			return err
		}, tc.IsNotFound, tc.CodeResourceNotFound},
	}
	for _, tcase := range cases {
		t.Run(tcase.name, func(t *testing.T) {
			err := tcase.call()
			if err == nil || !tcase.is(err) || tc.ErrorCode(err) != tcase.code {
				t.Fatalf("err = %v, want code %s", err, tcase.code)
			}
		})
	}
	if _, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{IDs: []string{eni.ID}, VpcID: "vpc-hk"}); err == nil {
		t.Fatal("IDs with filters must be refused before the call")
	}

	task, err = c.DisassociateAddress(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := c.WaitForTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if a := describeOne(t, c, id); a.Status != tc.StatusUnbind || a.NetworkInterfaceID != "" || a.PrivateIP != "" {
		t.Fatalf("after unbinding: %+v", a)
	}
}

// TestNetworkInterfacePaging: 150 ENIs of one VPC take two pages; 150 IDs
// two batches of NetworkInterfaceIds.
func TestNetworkInterfacePaging(t *testing.T) {
	ctx := context.Background()
	f := fixtures()
	for i := range 150 {
		f.Tencent.NetworkInterfaces = append(f.Tencent.NetworkInterfaces, core.TCENIFixture{
			VpcID: "vpc-paging", PrivateIPAddresses: []string{fmt.Sprintf("10.9.%d.%d", i/100, i%100+1)},
		})
	}
	emu := start(t, cloudsim.Options{Seed: 12, Fixtures: f})
	c := newClient(t, testOptions(emu.URL()))
	all, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{VpcID: "vpc-paging"})
	if err != nil || len(all) != 150 {
		t.Fatalf("DescribeNetworkInterfaces over two pages: %d, %v; want 150", len(all), err)
	}
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	byID, err := c.DescribeNetworkInterfaces(ctx, tc.NetworkInterfaceQuery{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, byID); diff != "" {
		t.Fatalf("by VPC vs by ID (-vpc +id):\n%s", diff)
	}
	if n := emu.World().Stats()["tencent/DescribeNetworkInterfaces/OK"]; n != 4 {
		t.Fatalf("%d DescribeNetworkInterfaces requests, want 4 (two pages, two ID batches)", n)
	}
}

// TestTagAddress: an address allocated with tags gets more and loses some
// through the tag API, which the address listing then shows; an unknown
// address and a reserved key are refused.
func TestTagAddress(t *testing.T) {
	ctx := context.Background()
	emu := start(t, cloudsim.Options{Seed: 5})
	c := newClient(t, testOptions(emu.URL()))
	res, err := c.AllocateAddress(ctx, tc.AllocateRequest{Tags: map[string]string{"keep": "1", "drop": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.AddressIDs[0]
	if err := c.TagAddress(ctx, id, map[string]string{"edgeplane.io/cluster": "c1", "keep": "3"}, "drop"); err != nil {
		t.Fatalf("TagAddress: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"edgeplane.io/cluster": "c1", "keep": "3"}, describeOne(t, c, id).Tags); diff != "" {
		t.Fatalf("tags (-want +got):\n%s", diff)
	}
	if err := c.TagAddress(ctx, id, nil); err != nil {
		t.Fatalf("TagAddress with nothing to do: %v", err)
	}
	if err := c.TagAddress(ctx, "eip-00000000", map[string]string{"k": "v"}); tc.ErrorCode(err) != "InvalidParameterValue.ResourceIdInvalid" {
		t.Fatalf("tagging an unknown address: %v", err)
	}
	if err := c.TagAddress(ctx, id, map[string]string{"tencent:x": "v"}); !tc.IsInvalidParameter(err) {
		t.Fatalf("a reserved key: %v, want an invalid parameter", err)
	}
}
