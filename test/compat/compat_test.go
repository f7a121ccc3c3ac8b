// Package compat proves the cloud emulator speaks the real wire protocols by
// driving it with clients nobody here wrote: the AWS CLI (EC2 Query API) and
// the Tencent Cloud Node.js SDK (API 3.0, TC3-HMAC-SHA256).
//
// The tools are installed by hack/install-compat-tools.sh (make test runs
// it). When one is missing these tests fail and say so; they never skip.
package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

const installHint = "run hack/install-compat-tools.sh to install the compatibility-test tools"

func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not on PATH: %s", name, installHint)
	}
	return p
}

// run executes a tool with a timeout and returns stdout, stderr and the
// exit code.
func run(t *testing.T, env []string, dir, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	default:
		t.Fatalf("running %s %v: %v\n%s", name, args, err, stderr.String())
		return "", "", -1
	}
}

const (
	vpcID      = "vpc-0a1b2c3d"
	instanceID = "i-0123456789abcdef0"
	eniID      = "eni-0aaaaaaaaaaaaaaa1"
	podIP      = "10.0.1.20"
)

// awsCLI runs `aws ec2 <args> --endpoint-url <emulator> --output json` in an
// isolated configuration (no profiles, no instance metadata).
type awsCLI struct {
	t   *testing.T
	bin string
	url string
	env []string
}

// The access key the AWS CLI signs with; the emulator is told to accept it.
const (
	cliAccessKeyID     = "AKIACOMPATTEST000001"
	cliSecretAccessKey = "compat-secret"
)

// cliCredentials are the emulator settings accepting the CLI's key.
func cliCredentials() map[string]core.EC2Credential {
	return map[string]core.EC2Credential{cliAccessKeyID: {SecretAccessKey: cliSecretAccessKey}}
}

func newAWSCLI(t *testing.T, url string) *awsCLI {
	return newAWSCLIWithKey(t, url, cliAccessKeyID, cliSecretAccessKey)
}

func newAWSCLIWithKey(t *testing.T, url, accessKeyID, secret string) *awsCLI {
	dir := t.TempDir()
	return &awsCLI{t: t, bin: requireTool(t, "aws"), url: url, env: []string{
		"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=", "AWS_MAX_ATTEMPTS=2", "HOME=" + dir,
	}}
}

func (c *awsCLI) run(args ...string) (string, string, int) {
	args = append(append([]string{"ec2"}, args...), "--endpoint-url", c.url, "--output", "json")
	return run(c.t, c.env, "", c.bin, args...)
}

// ok runs a command that must succeed and decodes its JSON output.
func (c *awsCLI) ok(into any, args ...string) {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("aws ec2 %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(stdout), into); err != nil {
			c.t.Fatalf("aws ec2 %s: output is not JSON: %v\n%s", args[0], err, stdout)
		}
	}
}

// fails runs a command that must fail with the given EC2 error code.
func (c *awsCLI) fails(code string, args ...string) {
	c.t.Helper()
	_, stderr, exit := c.run(args...)
	if exit == 0 || !strings.Contains(stderr, "("+code+")") {
		c.t.Fatalf("aws ec2 %s: exit %d, stderr %q; want a failure with %s", strings.Join(args, " "), exit, stderr, code)
	}
}

type cliTag struct{ Key, Value string }

type cliAddress struct {
	AllocationId       string
	PublicIp           string
	AssociationId      string
	NetworkInterfaceId string
	PrivateIpAddress   string
	InstanceId         string
	Tags               []cliTag
}

func TestAWSCLI(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2Credentials: cliCredentials()}, Fixtures: &core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{{
		InstanceID: instanceID, VpcID: vpcID, SubnetID: "subnet-1", AvailabilityZone: "us-east-1a",
		NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: eniID, PrivateIPAddresses: []string{"10.0.1.10", podIP}}},
	}}}}})
	aws := newAWSCLI(t, emu.URL())

	var alloc cliAddress
	aws.ok(&alloc, "allocate-address", "--domain", "vpc", "--tag-specifications", "ResourceType=elastic-ip,Tags=[{Key=owner,Value=aws-cli}]")
	if !strings.HasPrefix(alloc.AllocationId, "eipalloc-") || alloc.PublicIp == "" {
		t.Fatalf("allocate-address = %+v", alloc)
	}

	aws.ok(nil, "create-tags", "--resources", alloc.AllocationId, "--tags", "Key=edgeplane.io/pod,Value=ns/pod")

	var enis struct {
		NetworkInterfaces []struct{ NetworkInterfaceId string }
	}
	aws.ok(&enis, "describe-network-interfaces", "--filters", "Name=addresses.private-ip-address,Values="+podIP, "Name=vpc-id,Values="+vpcID)
	if len(enis.NetworkInterfaces) != 1 || enis.NetworkInterfaces[0].NetworkInterfaceId != eniID {
		t.Fatalf("describe-network-interfaces = %+v", enis)
	}

	var assoc struct{ AssociationId string }
	aws.ok(&assoc, "associate-address", "--allocation-id", alloc.AllocationId, "--network-interface-id", eniID,
		"--private-ip-address", podIP, "--no-allow-reassociation")
	if !strings.HasPrefix(assoc.AssociationId, "eipassoc-") {
		t.Fatalf("associate-address = %+v", assoc)
	}

	var described struct{ Addresses []cliAddress }
	aws.ok(&described, "describe-addresses", "--filters", "Name=tag:owner,Values=aws-cli")
	want := []cliAddress{{
		AllocationId: alloc.AllocationId, PublicIp: alloc.PublicIp, AssociationId: assoc.AssociationId,
		NetworkInterfaceId: eniID, PrivateIpAddress: podIP, InstanceId: instanceID,
		Tags: []cliTag{{"edgeplane.io/pod", "ns/pod"}, {"owner", "aws-cli"}},
	}}
	if diff := cmp.Diff(want, described.Addresses); diff != "" {
		t.Fatalf("describe-addresses (-want +got):\n%s", diff)
	}

	// Error cases: the CLI must parse the EC2 error envelope.
	aws.fails("InvalidIPAddress.InUse", "release-address", "--allocation-id", alloc.AllocationId)
	aws.fails("Resource.AlreadyAssociated", "associate-address", "--allocation-id", alloc.AllocationId,
		"--network-interface-id", eniID, "--private-ip-address", "10.0.1.10", "--no-allow-reassociation")
	// A second address onto the private IP that already carries the
	// first: refused without reassociation, the first stays where it is.
	var second cliAddress
	aws.ok(&second, "allocate-address", "--domain", "vpc")
	aws.fails("Resource.AlreadyAssociated", "associate-address", "--allocation-id", second.AllocationId,
		"--network-interface-id", eniID, "--private-ip-address", podIP, "--no-allow-reassociation")
	aws.fails("Resource.AlreadyAssociated", "associate-address", "--allocation-id", second.AllocationId,
		"--instance-id", instanceID, "--private-ip-address", podIP, "--no-allow-reassociation")
	aws.ok(nil, "release-address", "--allocation-id", second.AllocationId)

	aws.ok(nil, "delete-tags", "--resources", alloc.AllocationId, "--tags", "Key=edgeplane.io/pod")
	aws.ok(nil, "disassociate-address", "--association-id", assoc.AssociationId)
	aws.ok(nil, "release-address", "--allocation-id", alloc.AllocationId)
	aws.fails("InvalidAllocationID.NotFound", "release-address", "--allocation-id", alloc.AllocationId)

	aws.ok(&described, "describe-addresses")
	if len(described.Addresses) != 0 {
		t.Fatalf("addresses left: %+v", described.Addresses)
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 0 {
		t.Fatalf("the emulator holds %d addresses after release", n)
	}
}

// TestAWSCLIAuthentication: the emulator refuses what EC2 refuses, and the
// AWS CLI reads each refusal as EC2's error code: an unknown access key, a
// wrong secret, a clock more than 15 minutes off (the emulator's clock is
// moved, so the CLI's own signature is the skewed one), and a key revoked
// through the admin API.
func TestAWSCLIAuthentication(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2Credentials: cliCredentials()}})
	newAWSCLI(t, emu.URL()).ok(nil, "describe-addresses")
	newAWSCLIWithKey(t, emu.URL(), "AKIANOBODY0000000000", cliSecretAccessKey).fails("AuthFailure", "describe-addresses")
	newAWSCLIWithKey(t, emu.URL(), cliAccessKeyID, "not-the-secret").fails("SignatureDoesNotMatch", "describe-addresses")

	if err := emu.World().UpdateSettings(func(s *core.Settings) { delete(s.EC2Credentials, cliAccessKeyID) }); err != nil {
		t.Fatal(err)
	}
	newAWSCLI(t, emu.URL()).fails("AuthFailure", "describe-addresses")

	skewed := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2Credentials: cliCredentials()},
		SignatureClock: func() time.Time { return time.Now().Add(20 * time.Minute) }})
	newAWSCLI(t, skewed.URL()).fails("RequestExpired", "describe-addresses")
}

// TestAWSCLIReleaseReallocated: an address released by one account and
// then allocated (recovered by its public IP) by another cannot be released
// by the first again: the AWS CLI reads the refusal as EC2's AuthFailure,
// whether it names the address by public IP or by the old allocation ID
// (that one is gone: InvalidAllocationID.NotFound). The address stays the
// second account's.
func TestAWSCLIReleaseReallocated(t *testing.T) {
	const otherKey, otherSecret = "AKIACOMPATTEST000002", "other-secret"
	creds := cliCredentials()
	creds[otherKey] = core.EC2Credential{SecretAccessKey: otherSecret, AccountID: "222222222222"}
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Settings: core.Settings{EC2Credentials: creds}})
	first, other := newAWSCLI(t, emu.URL()), newAWSCLIWithKey(t, emu.URL(), otherKey, otherSecret)

	var a, b cliAddress
	first.ok(&a, "allocate-address", "--domain", "vpc")
	first.ok(nil, "release-address", "--allocation-id", a.AllocationId)
	other.ok(&b, "allocate-address", "--domain", "vpc", "--address", a.PublicIp)
	if b.PublicIp != a.PublicIp || b.AllocationId == a.AllocationId {
		t.Fatalf("the other account's allocation = %+v, want %s under a new allocation ID", b, a.PublicIp)
	}
	first.fails("AuthFailure", "release-address", "--public-ip", a.PublicIp)
	first.fails("InvalidAllocationID.NotFound", "release-address", "--allocation-id", a.AllocationId)

	var described struct{ Addresses []cliAddress }
	other.ok(&described, "describe-addresses")
	if len(described.Addresses) != 1 || described.Addresses[0].AllocationId != b.AllocationId {
		t.Fatalf("the other account's addresses = %+v, want %s kept", described.Addresses, b.AllocationId)
	}
}

// TestTencentNodeSDKAuthentication: the Tencent front refuses an unknown
// SecretId, a wrong SecretKey and a timestamp more than 5 minutes off
// with Tencent's documented codes, as the official Node.js SDK reports
// them.
func TestTencentNodeSDKAuthentication(t *testing.T) {
	node := requireTool(t, "node")
	nodeDir := nodeSDKDir(t)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 2})
	skewed := cloudsimtest.Start(t, cloudsim.Options{Seed: 2, SignatureClock: func() time.Time { return time.Now().Add(10 * time.Minute) }})
	cases := []struct {
		name, url, id, key, code string
	}{
		{"well-known pair", emu.URL(), core.DefaultTencentSecretID, core.DefaultTencentSecretKey, ""},
		{"unknown SecretId", emu.URL(), "AKIDnobody", core.DefaultTencentSecretKey, core.TCAuthFailureSecretIDNotFound},
		{"wrong SecretKey", emu.URL(), core.DefaultTencentSecretID, "not-the-key", core.TCAuthFailureSignatureFailure},
		{"clock 10 minutes off", skewed.URL(), core.DefaultTencentSecretID, core.DefaultTencentSecretKey, core.TCAuthFailureSignatureExpire},
	}
	for _, tc := range cases {
		stdout, stderr, code := run(t, []string{
			"TC_ENDPOINT=" + strings.TrimPrefix(tc.url, "http://"), "TC_SECRET_ID=" + tc.id, "TC_SECRET_KEY=" + tc.key,
		}, nodeDir, node, "tencent-auth.js")
		var got struct{ Code, RequestID string }
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
			t.Fatalf("%s: tencent-auth.js (exit %d) printed %q: %v\nstderr: %s", tc.name, code, stdout, err, stderr)
		}
		if got.Code != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, got.Code, tc.code)
		}
	}
}

func nodeSDKDir(t *testing.T) string {
	t.Helper()
	nodeDir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "tencentcloud-sdk-nodejs", "package.json")); err != nil {
		t.Fatalf("the Tencent Cloud Node.js SDK is not installed in %s: %s", nodeDir, installHint)
	}
	return nodeDir
}

// nodeResult is what test/compat/node/tencent.js prints.
type nodeResult struct {
	Fatal    string `json:"fatal"`
	Allocate struct {
		AddressSet []string `json:"addressSet"`
		TaskIDType string   `json:"taskIdType"`
		RequestID  string   `json:"requestId"`
	} `json:"allocate"`
	IdempotentAllocate struct {
		AddressSet []string `json:"addressSet"`
	} `json:"idempotentAllocate"`
	TagLookup struct {
		Total int      `json:"total"`
		IDs   []string `json:"ids"`
	} `json:"tagLookup"`
	Instance struct {
		Total      int      `json:"total"`
		PrivateIPs []string `json:"privateIps"`
	} `json:"instance"`
	DescribeBound struct {
		Total      int    `json:"total"`
		Status     string `json:"status"`
		Type       string `json:"type"`
		InstanceID string `json:"instanceId"`
		PrivateIP  string `json:"privateIp"`
		Tags       []struct {
			Key, Value string
		} `json:"tags"`
	} `json:"describeBound"`
	DescribeByFilter struct {
		Total int `json:"total"`
	} `json:"describeByFilter"`
	Retagged struct {
		Tags []struct {
			Key, Value string
		} `json:"tags"`
	} `json:"retagged"`
	ReservedTag struct {
		Code string `json:"code"`
	} `json:"reservedTag"`
	AfterRelease struct {
		Total int `json:"total"`
	} `json:"afterRelease"`
	Error struct {
		Code      string `json:"code"`
		RequestID string `json:"requestId"`
	} `json:"error"`
}

func TestTencentNodeSDK(t *testing.T) {
	node := requireTool(t, "node")
	nodeDir := nodeSDKDir(t)
	const instance = "ins-node0001"
	emu := cloudsimtest.Start(t, cloudsim.Options{
		Seed:     2,
		Settings: core.Settings{TaskDuration: core.Duration(50 * time.Millisecond)},
		Fixtures: &core.Fixtures{Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{
			{InstanceID: instance, InstanceName: "node-1", Zone: "ap-hongkong-2", PrivateIPAddresses: []string{"10.1.0.5"}},
		}}},
	})

	stdout, stderr, code := run(t, []string{
		"TC_ENDPOINT=" + strings.TrimPrefix(emu.URL(), "http://"),
		"TC_SECRET_ID=" + core.DefaultTencentSecretID,
		"TC_SECRET_KEY=" + core.DefaultTencentSecretKey,
		"TC_INSTANCE_ID=" + instance,
	}, nodeDir, node, "tencent.js")
	var got nodeResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("tencent.js (exit %d) printed no JSON: %v\nstdout: %s\nstderr: %s", code, err, stdout, stderr)
	}
	if code != 0 || got.Fatal != "" {
		t.Fatalf("tencent.js failed (exit %d): %s\nstderr: %s", code, got.Fatal, stderr)
	}

	id := got.Allocate.AddressSet
	switch {
	case len(id) != 1 || !strings.HasPrefix(id[0], "eip-"):
		t.Fatalf("AllocateAddresses: %+v", got.Allocate)
	case got.Allocate.TaskIDType != "string":
		t.Fatalf("async TaskId must reach the SDK as a string, was %s", got.Allocate.TaskIDType)
	case !cmp.Equal(got.IdempotentAllocate.AddressSet, id):
		t.Fatalf("the same ClientToken returned %v, want %v", got.IdempotentAllocate.AddressSet, id)
	case got.TagLookup.Total != 1 || !cmp.Equal(got.TagLookup.IDs, id):
		t.Fatalf("DescribeResourcesByTags: %+v", got.TagLookup)
	case got.Instance.Total != 1 || !cmp.Equal(got.Instance.PrivateIPs, []string{"10.1.0.5"}):
		t.Fatalf("DescribeInstances: %+v", got.Instance)
	case got.DescribeBound.Status != "BIND" || got.DescribeBound.InstanceID != instance || got.DescribeBound.PrivateIP != "10.1.0.5" || got.DescribeBound.Type != "AnycastEIP":
		t.Fatalf("DescribeAddresses after binding: %+v", got.DescribeBound)
	case len(got.DescribeBound.Tags) != 1 || got.DescribeBound.Tags[0].Key != "edgeplane.io/owner":
		t.Fatalf("creation tags: %+v", got.DescribeBound.Tags)
	case got.DescribeByFilter.Total != 1:
		t.Fatalf("DescribeAddresses by instance-id and address-type: %+v", got.DescribeByFilter)
	case len(got.Retagged.Tags) != 1 || got.Retagged.Tags[0].Key != "team" || got.Retagged.Tags[0].Value != "edge":
		t.Fatalf("tags after ModifyResourceTags: %+v, want only team=edge", got.Retagged.Tags)
	case got.ReservedTag.Code != "InvalidParameter.ReservedTagKey":
		t.Fatalf("ModifyResourceTags with a reserved key: %+v", got.ReservedTag)
	case got.AfterRelease.Total != 0:
		t.Fatalf("the address is still listed after release: %+v", got.AfterRelease)
	case got.Error.Code != "InvalidAddressId.NotFound" || got.Error.RequestID == "":
		t.Fatalf("error case: %+v, want InvalidAddressId.NotFound with a RequestId", got.Error)
	}
	if n := len(emu.World().Snapshot().Tencent.Addresses); n != 0 {
		t.Fatalf("the emulator holds %d addresses after release", n)
	}
}

// nodeENIResult is what test/compat/node/tencent-eni.js prints.
type nodeENIResult struct {
	Fatal string `json:"fatal"`
	Exact struct {
		Total int           `json:"total"`
		ENIs  []nodeENIView `json:"enis"`
	} `json:"exact"`
	Fuzzy struct {
		Total int `json:"total"`
	} `json:"fuzzy"`
	Page struct {
		Total    int `json:"total"`
		Returned int `json:"returned"`
	} `json:"page"`
	DescribeErrors map[string]string `json:"describeErrors"`
	BindTaskIDType string            `json:"bindTaskIdType"`
	Bound          nodeAddressView   `json:"bound"`
	ENIAfterBind   nodeENIView       `json:"eniAfterBind"`
	ByPrivateIP    []string          `json:"byPrivateIp"`
	AssociateErrs  map[string]string `json:"associateErrors"`
	BoundDangling  nodeAddressView   `json:"boundDangling"`
	Unbound        nodeAddressView   `json:"unbound"`
	ENIAfterUnbind nodeENIView       `json:"eniAfterUnbind"`
	AddressesLeft  int               `json:"addressesLeft"`
}

type nodeENIView struct {
	ID          string  `json:"id"`
	Primary     bool    `json:"primary"`
	InstanceID  *string `json:"instanceId"`
	DeviceIndex *int    `json:"deviceIndex"`
	PrivateIPs  []struct {
		IP        string `json:"ip"`
		Primary   bool   `json:"primary"`
		PublicIP  string `json:"publicIp"`
		AddressID string `json:"addressId"`
	} `json:"privateIps"`
}

type nodeAddressView struct {
	Status             string  `json:"status"`
	InstanceID         *string `json:"instanceId"`
	NetworkInterfaceID *string `json:"networkInterfaceId"`
	PrivateIP          *string `json:"privateIp"`
	InstanceType       *string `json:"instanceType"`
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestTencentNodeSDKENIs: the Tencent Node.js SDK reads the ENI model and
// the ENI-private-IP binding on the wire as the Go SDK does: the pod IP's
// ENI found exactly (the fuzzy single-value address-ip also finds the
// ENI of pod IP + "0"), paging, the documented DescribeNetworkInterfaces
// and AssociateAddress error codes, BIND naming the instance for an
// attached ENI and BIND_ENI for a dangling one.
func TestTencentNodeSDKENIs(t *testing.T) {
	node := requireTool(t, "node")
	nodeDir := nodeSDKDir(t)
	const (
		vpc      = "vpc-compat01"
		instance = "ins-node0001"
		podENI   = "eni-pods0001"
		podIP    = "10.1.1.2"
		dangling = "eni-loose001"
	)
	emu := cloudsimtest.Start(t, cloudsim.Options{
		Seed:     7,
		Settings: core.Settings{TaskDuration: core.Duration(50 * time.Millisecond)},
		Fixtures: &core.Fixtures{Tencent: core.TencentFixtures{
			Instances: []core.TCInstanceFixture{{
				InstanceID: instance, VpcID: vpc, SubnetID: "subnet-1", Zone: "ap-hongkong-2", PrivateIPAddresses: []string{"10.1.0.5"},
				NetworkInterfaces: []core.TCENIFixture{
					{NetworkInterfaceID: podENI, PrivateIPAddresses: []string{"10.1.1.1", podIP}},
					{NetworkInterfaceID: "eni-pods0002", PrivateIPAddresses: []string{"10.1.2.1", podIP + "0"}},
				},
			}},
			NetworkInterfaces: []core.TCENIFixture{{NetworkInterfaceID: dangling, VpcID: vpc, PrivateIPAddresses: []string{"10.1.3.1"}}},
		}},
	})
	stdout, stderr, code := run(t, []string{
		"TC_ENDPOINT=" + strings.TrimPrefix(emu.URL(), "http://"),
		"TC_SECRET_ID=" + core.DefaultTencentSecretID, "TC_SECRET_KEY=" + core.DefaultTencentSecretKey,
		"TC_VPC_ID=" + vpc, "TC_POD_IP=" + podIP, "TC_DANGLING_ENI=" + dangling,
	}, nodeDir, node, "tencent-eni.js")
	var got nodeENIResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("tencent-eni.js (exit %d) printed no JSON: %v\nstdout: %s\nstderr: %s", code, err, stdout, stderr)
	}
	if code != 0 || got.Fatal != "" {
		t.Fatalf("tencent-eni.js failed (exit %d): %s\nstderr: %s", code, got.Fatal, stderr)
	}

	if got.Exact.Total != 1 || len(got.Exact.ENIs) != 1 {
		t.Fatalf("exact address-ip look-up: %+v", got.Exact)
	}
	e := got.Exact.ENIs[0]
	if e.ID != podENI || e.Primary || deref(e.InstanceID) != instance || e.DeviceIndex == nil || *e.DeviceIndex != 1 ||
		len(e.PrivateIPs) != 2 || !e.PrivateIPs[0].Primary || e.PrivateIPs[1].IP != podIP {
		t.Fatalf("the pod IP's ENI: %+v", e)
	}
	if got.Fuzzy.Total != 2 {
		t.Fatalf("a single address-ip value without ip-exact-match found %d ENIs, want 2 (%s and %s0)", got.Fuzzy.Total, podIP, podIP)
	}
	if got.Page.Total != 4 || got.Page.Returned != 1 {
		t.Fatalf("Offset 1 Limit 1 over the VPC's 4 ENIs: %+v", got.Page)
	}
	wantDescribeErrs := map[string]string{
		"coexist": "InvalidParameter.Coexist", "badFilter": "InvalidParameter.FilterInvalidKey", "unknownId": "ResourceNotFound",
	}
	if diff := cmp.Diff(wantDescribeErrs, got.DescribeErrors); diff != "" {
		t.Fatalf("DescribeNetworkInterfaces error codes (-want +got):\n%s", diff)
	}

	if got.BindTaskIDType != "string" {
		t.Fatalf("AssociateAddress TaskId reached the SDK as %s, want string", got.BindTaskIDType)
	}
	if b := got.Bound; b.Status != "BIND" || deref(b.InstanceID) != instance || deref(b.NetworkInterfaceID) != podENI || deref(b.PrivateIP) != podIP || deref(b.InstanceType) != "CVM" {
		t.Fatalf("bound to the pod IP: %+v", b)
	}
	if p := got.ENIAfterBind.PrivateIPs[1]; p.IP != podIP || p.PublicIP == "" || !strings.HasPrefix(p.AddressID, "eip-") {
		t.Fatalf("the ENI's private IP after binding: %+v", p)
	}
	if len(got.ByPrivateIP) != 1 || got.ByPrivateIP[0] != got.ENIAfterBind.PrivateIPs[1].AddressID {
		t.Fatalf("DescribeAddresses by private-ip-address: %v", got.ByPrivateIP)
	}
	wantAssocErrs := map[string]string{
		"privateIpTaken": "InvalidPrivateIpAddress.AlreadyBindEip",
		"ipNotOnEni":     "InvalidNetworkInterfaceId.NotFound",
		"unknownEni":     "InvalidNetworkInterfaceId.NotFound",
		"bothTargets":    "InvalidParameterConflict",
		"noPrivateIp":    "MissingParameter",
		"noTarget":       "InvalidParameterValue.MissingAssociateEntity",
		"boundElsewhere": "InvalidParameterValue.PrivateIpAddressNotMatch",
	}
	if diff := cmp.Diff(wantAssocErrs, got.AssociateErrs); diff != "" {
		t.Fatalf("AssociateAddress error codes (-want +got):\n%s", diff)
	}
	if b := got.BoundDangling; b.Status != "BIND_ENI" || b.InstanceID != nil || deref(b.NetworkInterfaceID) != dangling || deref(b.InstanceType) != "ENI" {
		t.Fatalf("bound to a dangling ENI: %+v", b)
	}
	if u := got.Unbound; u.Status != "UNBIND" || u.InstanceID != nil || u.NetworkInterfaceID != nil || u.PrivateIP != nil {
		t.Fatalf("after unbinding: %+v", u)
	}
	if p := got.ENIAfterUnbind.PrivateIPs[1]; p.PublicIP != "" || p.AddressID != "" {
		t.Fatalf("the ENI's private IP after unbinding: %+v", p)
	}
	if got.AddressesLeft != 0 || len(emu.World().Snapshot().Tencent.Addresses) != 0 {
		t.Fatalf("addresses left after release: %d", got.AddressesLeft)
	}
}

// TestAWSCLINodeAssociation: the AWS CLI on the node EIP path. A node with
// a secondary ENI refuses association by instance (InvalidInstanceID); its
// primary ENI is found by attachment (device index 0, network card 0) and
// addressed directly; a single-ENI instance takes --instance-id; both show
// their instance in describe-addresses.
func TestAWSCLINodeAssociation(t *testing.T) {
	const (
		node    = "i-0a0000000000000a1"
		single  = "i-0a0000000000000b1"
		primary = "eni-0a0000000000000a1"
	)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 8, Settings: core.Settings{EC2Credentials: cliCredentials()}, Fixtures: &core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{
		{InstanceID: node, VpcID: vpcID, SubnetID: "subnet-1", AvailabilityZone: "us-east-1a", NetworkInterfaces: []core.EC2ENIFixture{
			{NetworkInterfaceID: primary, PrivateIPAddresses: []string{"10.0.5.10"}},
			{PrivateIPAddresses: []string{"10.0.5.20", "10.0.5.21"}},
		}},
		{InstanceID: single, VpcID: vpcID, SubnetID: "subnet-1", AvailabilityZone: "us-east-1a", NetworkInterfaces: []core.EC2ENIFixture{
			{PrivateIPAddresses: []string{"10.0.6.10"}},
		}},
	}}}})
	aws := newAWSCLI(t, emu.URL())
	var a, b cliAddress
	aws.ok(&a, "allocate-address", "--domain", "vpc")
	aws.ok(&b, "allocate-address", "--domain", "vpc")

	aws.fails("InvalidInstanceID", "associate-address", "--allocation-id", a.AllocationId, "--instance-id", node)
	aws.fails("InvalidInstanceID.NotFound", "associate-address", "--allocation-id", a.AllocationId, "--instance-id", "i-0a00000000000000f")
	aws.fails("InvalidInstanceID.Malformed", "associate-address", "--allocation-id", a.AllocationId, "--instance-id", "aws:///us-east-1a/"+node)
	aws.fails("InvalidParameterCombination", "associate-address", "--allocation-id", a.AllocationId, "--instance-id", single, "--network-interface-id", primary)

	var enis struct {
		NetworkInterfaces []struct {
			NetworkInterfaceId string
			PrivateIpAddress   string
			Attachment         struct {
				InstanceId       string
				DeviceIndex      int
				NetworkCardIndex int
			}
		}
	}
	aws.ok(&enis, "describe-network-interfaces", "--filters", "Name=attachment.instance-id,Values="+node, "Name=attachment.device-index,Values=0")
	if len(enis.NetworkInterfaces) != 1 {
		t.Fatalf("primary ENI look-up = %+v", enis)
	}
	p := enis.NetworkInterfaces[0]
	if p.NetworkInterfaceId != primary || p.PrivateIpAddress != "10.0.5.10" || p.Attachment.InstanceId != node || p.Attachment.DeviceIndex != 0 || p.Attachment.NetworkCardIndex != 0 {
		t.Fatalf("primary ENI = %+v", p)
	}

	var viaENI, viaInstance struct{ AssociationId string }
	aws.ok(&viaENI, "associate-address", "--allocation-id", a.AllocationId, "--network-interface-id", p.NetworkInterfaceId,
		"--private-ip-address", p.PrivateIpAddress, "--no-allow-reassociation")
	aws.ok(&viaInstance, "associate-address", "--allocation-id", b.AllocationId, "--instance-id", single, "--no-allow-reassociation")
	aws.fails("Resource.AlreadyAssociated", "associate-address", "--allocation-id", a.AllocationId, "--instance-id", single, "--no-allow-reassociation")

	var described struct{ Addresses []cliAddress }
	aws.ok(&described, "describe-addresses", "--filters", "Name=instance-id,Values="+node+","+single)
	if len(described.Addresses) != 2 {
		t.Fatalf("describe-addresses by instance = %+v, want 2 addresses", described.Addresses)
	}
	want := []cliAddress{
		{AllocationId: a.AllocationId, PublicIp: a.PublicIp, AssociationId: viaENI.AssociationId, NetworkInterfaceId: primary, PrivateIpAddress: "10.0.5.10", InstanceId: node},
		{AllocationId: b.AllocationId, PublicIp: b.PublicIp, AssociationId: viaInstance.AssociationId, NetworkInterfaceId: described.Addresses[1].NetworkInterfaceId, PrivateIpAddress: "10.0.6.10", InstanceId: single},
	}
	if diff := cmp.Diff(want, described.Addresses); diff != "" {
		t.Fatalf("describe-addresses by instance (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(described.Addresses[1].NetworkInterfaceId, "eni-") {
		t.Fatalf("association by instance names no ENI: %+v", described.Addresses[1])
	}

	for _, x := range []struct{ assoc, alloc string }{{viaENI.AssociationId, a.AllocationId}, {viaInstance.AssociationId, b.AllocationId}} {
		aws.ok(nil, "disassociate-address", "--association-id", x.assoc)
		aws.ok(nil, "release-address", "--allocation-id", x.alloc)
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 0 {
		t.Fatalf("the emulator holds %d addresses after release", n)
	}
}
