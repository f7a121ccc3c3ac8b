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
	case got.AfterRelease.Total != 0:
		t.Fatalf("the address is still listed after release: %+v", got.AfterRelease)
	case got.Error.Code != "InvalidAddressId.NotFound" || got.Error.RequestID == "":
		t.Fatalf("error case: %+v, want InvalidAddressId.NotFound with a RequestId", got.Error)
	}
	if n := len(emu.World().Snapshot().Tencent.Addresses); n != 0 {
		t.Fatalf("the emulator holds %d addresses after release", n)
	}
}
