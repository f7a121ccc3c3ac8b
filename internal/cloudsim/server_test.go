package cloudsim_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/cloudsim/ec2"
	"github.com/edgeplane/edgeplane/internal/cloudsim/tencent"
)

var start = time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC)

// ec2Call posts a raw EC2 Query request and returns status and body.
func ec2Call(t *testing.T, base string, params url.Values) (int, []byte) {
	t.Helper()
	if params.Get("Version") == "" {
		params.Set("Version", ec2.APIVersion)
	}
	resp, err := http.DefaultClient.Do(signedEC2Request(base, params))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// signedEC2Request is a form POST signed with the emulator's well-known
// key pair.
func signedEC2Request(base string, params url.Values) *http.Request {
	body := []byte(params.Encode())
	req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	cloudsimtest.SignEC2Default(req, body)
	return req
}

// xmlDoc is a generic XML tree for asserting on element names.
type xmlDoc struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlDoc   `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (d xmlDoc) child(name string) *xmlDoc {
	for i := range d.Children {
		if d.Children[i].XMLName.Local == name {
			return &d.Children[i]
		}
	}
	return nil
}

func parseXML(t *testing.T, b []byte) xmlDoc {
	t.Helper()
	var d xmlDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("response is not XML: %v\n%s", err, b)
	}
	return d
}

func TestEC2WireFormat(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Clock: core.NewManualClock(start)})

	status, body := ec2Call(t, emu.URL(), url.Values{"Action": {"AllocateAddress"}, "TagSpecification.1.ResourceType": {"elastic-ip"},
		"TagSpecification.1.Tag.1.Key": {"k"}, "TagSpecification.1.Tag.1.Value": {"v"}})
	if status != 200 {
		t.Fatalf("AllocateAddress: HTTP %d: %s", status, body)
	}
	doc := parseXML(t, body)
	if doc.XMLName.Local != "AllocateAddressResponse" || doc.XMLName.Space != ec2.Namespace {
		t.Fatalf("root = %v, want AllocateAddressResponse in %s", doc.XMLName, ec2.Namespace)
	}
	for _, name := range []string{"requestId", "publicIp", "domain", "allocationId"} {
		if doc.child(name) == nil || doc.child(name).Text == "" {
			t.Fatalf("AllocateAddressResponse lacks <%s>: %s", name, body)
		}
	}
	alloc := doc.child("allocationId").Text

	status, body = ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}, "Filter.1.Name": {"tag:k"}, "Filter.1.Value.1": {"v"}})
	doc = parseXML(t, body)
	set := doc.child("addressesSet")
	if status != 200 || set == nil || len(set.Children) != 1 || set.Children[0].XMLName.Local != "item" {
		t.Fatalf("DescribeAddresses: HTTP %d: %s", status, body)
	}
	if tags := set.Children[0].child("tagSet"); tags == nil || tags.Children[0].child("key").Text != "k" {
		t.Fatalf("tagSet missing: %s", body)
	}

	// Errors: <Response><Errors><Error><Code>… with a capitalised RequestID.
	status, body = ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}, "AllocationId.1": {"eipalloc-00000000000000000"}})
	doc = parseXML(t, body)
	if status != 400 || doc.XMLName.Local != "Response" {
		t.Fatalf("NotFound: HTTP %d: %s", status, body)
	}
	errs := doc.child("Errors")
	if errs == nil || errs.child("Error").child("Code").Text != "InvalidAllocationID.NotFound" || doc.child("RequestID") == nil || doc.child("RequestID").Text == "" {
		t.Fatalf("error envelope: %s", body)
	}

	cases := []struct {
		name   string
		params url.Values
		status int
		code   string
	}{
		{"unknown action", url.Values{"Action": {"RunInstances"}}, 400, "InvalidAction"},
		{"missing action", url.Values{}, 400, "MissingAction"},
		{"other version", url.Values{"Action": {"DescribeAddresses"}, "Version": {"2014-01-01"}}, 400, "InvalidParameterValue"},
		{"unknown parameter", url.Values{"Action": {"DescribeAddresses"}, "Colour": {"red"}}, 400, "UnknownParameter"},
		{"dry run", url.Values{"Action": {"ReleaseAddress"}, "AllocationId": {alloc}, "DryRun": {"true"}}, 412, "DryRunOperation"},
		{"release unknown", url.Values{"Action": {"ReleaseAddress"}, "AllocationId": {"eipalloc-00000000000000000"}}, 400, "InvalidAllocationID.NotFound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ec2Call(t, emu.URL(), tc.params)
			doc := parseXML(t, body)
			if status != tc.status || doc.child("Errors") == nil || doc.child("Errors").child("Error").child("Code").Text != tc.code {
				t.Fatalf("HTTP %d %s; want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 1 {
		t.Fatalf("the dry-run release changed state: %d addresses", n)
	}

	// GET with the parameters in the query string works too (signed over
	// the canonical query).
	get, _ := http.NewRequest(http.MethodGet, emu.URL()+"/?Action=DescribeAddresses&Version=2016-11-15", nil)
	cloudsimtest.SignEC2Default(get, nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET DescribeAddresses: HTTP %d", resp.StatusCode)
	}
}

func TestEC2ThrottlingOnTheWire(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 2, Clock: core.NewManualClock(start), Settings: core.Settings{
		RateLimitOverrides: map[string]core.Bucket{"ec2/DescribeAddresses": {Burst: 1, RefillPerSecond: 1}},
	}})
	ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}})
	status, body := ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}})
	if doc := parseXML(t, body); status != 503 || doc.child("Errors").child("Error").child("Code").Text != "RequestLimitExceeded" {
		t.Fatalf("HTTP %d %s; want 503 RequestLimitExceeded", status, body)
	}
}

// tcCall sends a signed Tencent request and returns the decoded body.
func tcCall(t *testing.T, base, service, action, version, region string, body string, secretID, secretKey string) map[string]any {
	t.Helper()
	u, _ := url.Parse(base)
	req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-TC-Action", action)
	req.Header.Set("X-TC-Version", version)
	if region != "" {
		req.Header.Set("X-TC-Region", region)
	}
	now := time.Now()
	req.Header.Set("X-TC-Timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Host = u.Host
	req.Header.Set("Authorization", tencent.Sign(req, []byte(body), secretID, secretKey, service, now))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != 200 {
		t.Fatalf("Tencent answers HTTP 200 even for errors, got %d", resp.StatusCode)
	}
	var out map[string]any
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	r, ok := out["Response"].(map[string]any)
	if !ok || r["RequestId"] == "" {
		t.Fatalf("no Response.RequestId: %v", out)
	}
	return r
}

func errCode(r map[string]any) string {
	e, ok := r["Error"].(map[string]any)
	if !ok {
		return ""
	}
	return e["Code"].(string)
}

func TestTencentWireFormat(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 3})
	id, key := core.DefaultTencentSecretID, core.DefaultTencentSecretKey
	call := func(service, action, version, region, body string) map[string]any {
		return tcCall(t, emu.URL(), service, action, version, region, body, id, key)
	}

	r := call("vpc", "AllocateAddresses", tencent.VersionVPC, "ap-hongkong", `{"AddressType":"AnycastEIP","Tags":[{"Key":"k","Value":"v"}]}`)
	if errCode(r) != "" {
		t.Fatalf("AllocateAddresses: %v", r)
	}
	taskID, isString := r["TaskId"].(string)
	if !isString || taskID == "" {
		t.Fatalf("async actions return TaskId as a string, got %#v", r["TaskId"])
	}
	if set, _ := r["AddressSet"].([]any); len(set) != 1 {
		t.Fatalf("AddressSet = %v", r["AddressSet"])
	}

	r = call("vpc", "DescribeTaskResult", tencent.VersionVPC, "ap-hongkong", `{"TaskId":`+taskID+`}`)
	if _, isNumber := r["TaskId"].(json.Number); !isNumber || (r["Result"] != "RUNNING" && r["Result"] != "SUCCESS") {
		t.Fatalf("DescribeTaskResult returns TaskId as a number: %v", r)
	}
	if r = call("vpc", "DescribeTaskResult", tencent.VersionVPC, "ap-hongkong", `{"TaskId":"`+taskID+`"}`); errCode(r) != "InvalidParameter" {
		t.Fatalf("a string TaskId must be rejected: %v", r)
	}

	cases := []struct {
		name                                   string
		service, action, version, region, body string
		secretID, secretKey                    string
		code                                   string
	}{
		{"wrong version", "vpc", "DescribeAddresses", "2020-01-01", "ap-hongkong", `{}`, id, key, "NoSuchVersion"},
		{"action of another service", "cvm", "DescribeAddresses", tencent.VersionVPC, "ap-hongkong", `{}`, id, key, "InvalidAction"},
		{"unknown action", "vpc", "CreateVpc", tencent.VersionVPC, "ap-hongkong", `{}`, id, key, "InvalidAction"},
		{"missing region", "vpc", "DescribeAddresses", tencent.VersionVPC, "", `{}`, id, key, "MissingParameter"},
		{"unknown SecretId", "vpc", "DescribeAddresses", tencent.VersionVPC, "ap-hongkong", `{}`, "AKIDnobody", key, "AuthFailure.SecretIdNotFound"},
		{"wrong key", "vpc", "DescribeAddresses", tencent.VersionVPC, "ap-hongkong", `{}`, id, "nope", "AuthFailure.SignatureFailure"},
		{"case-sensitive parameters", "vpc", "DescribeAddresses", tencent.VersionVPC, "ap-hongkong", `{"addressIds":[]}`, id, key, "UnknownParameter"},
		{"tag API needs no region", "tag", "DescribeResourcesByTags", tencent.VersionTag, "", `{"TagFilters":[{"TagKey":"k","TagValue":["v"]}]}`, id, key, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tcCall(t, emu.URL(), tc.service, tc.action, tc.version, tc.region, tc.body, tc.secretID, tc.secretKey)
			if got := errCode(r); got != tc.code {
				t.Fatalf("code = %q, want %q: %v", got, tc.code, r)
			}
		})
	}
}

func TestCommitThenDropOnTheWire(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 4})
	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AllocateAddress", DropRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 200 * time.Millisecond}
	form := url.Values{"Action": {"AllocateAddress"}, "Version": {ec2.APIVersion}}
	_, err := client.Do(signedEC2Request(emu.URL(), form))
	var ue *url.Error
	if !errors.As(err, &ue) || !ue.Timeout() {
		t.Fatalf("err = %v, want a client timeout", err)
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 1 {
		t.Fatalf("%d addresses after a dropped allocation, want 1 (committed)", n)
	}
	// A fixed hold closes the connection without an answer.
	if err := emu.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AllocateAddress", DropRate: 1, DropHold: core.Duration(time.Millisecond), Times: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := http.DefaultClient.Do(signedEC2Request(emu.URL(), form)); err == nil {
		t.Fatal("a dropped response reached the client")
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 2 {
		t.Fatalf("%d addresses, want 2", n)
	}
}

func TestSameSeedSameAnswers(t *testing.T) {
	run := func() []string {
		emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 77, Clock: core.NewManualClock(start)})
		var out []string
		for range 3 {
			_, body := ec2Call(t, emu.URL(), url.Values{"Action": {"AllocateAddress"}})
			out = append(out, string(body))
		}
		_, body := ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}})
		out = append(out, string(body))
		snap, _ := json.Marshal(emu.World().Snapshot())
		return append(out, string(snap))
	}
	if diff := cmp.Diff(run(), run()); diff != "" {
		t.Fatalf("same seed, different answers (-first +second):\n%s", diff)
	}
}

// adminDo calls the admin API of an emulator cloudsimtest started, with
// its token.
func adminDo(t *testing.T, method, u, body string) (int, []byte) {
	t.Helper()
	req, err := cloudsim.NewAdminRequest(t.Context(), method, u, cloudsimtest.AdminToken, body)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestAdminAPI(t *testing.T) {
	clock := core.NewManualClock(start)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 5, Clock: clock, Fixtures: &core.Fixtures{
		Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{{InstanceID: "ins-start001", PrivateIPAddresses: []string{"10.1.0.1"}}}},
	}})
	base := emu.URL() + "/admin"

	if status, body := adminDo(t, http.MethodGet, base+"/healthz", ""); status != 200 || string(body) != "ok\n" {
		t.Fatalf("healthz: %d %s", status, body)
	}

	fixtures := `
ec2:
  instances:
  - instanceId: i-0123456789abcdef0
    vpcId: vpc-1
    networkInterfaces:
    - privateIpAddresses: [10.0.0.10, 10.0.0.11]
  addresses:
  - tags: {pool: fixed}
tencent:
  instances:
  - instanceId: ins-node0001
    privateIpAddresses: [10.1.0.5]
`
	status, body := adminDo(t, http.MethodPost, base+"/fixtures", fixtures)
	var res core.FixtureResult
	if status != 200 || json.Unmarshal(body, &res) != nil || len(res.EC2Addresses) != 1 || res.EC2Instances[0] != "i-0123456789abcdef0" {
		t.Fatalf("POST fixtures: %d %s", status, body)
	}
	if status, body := adminDo(t, http.MethodPost, base+"/fixtures", "ec2: {instanses: []}"); status != 400 {
		t.Fatalf("a misspelt fixture field must be rejected: %d %s", status, body)
	}

	status, body = adminDo(t, http.MethodGet, base+"/state", "")
	var snap core.Snapshot
	if status != 200 || json.Unmarshal(body, &snap) != nil {
		t.Fatalf("GET state: %d %s", status, body)
	}
	if len(snap.EC2.Addresses) != 1 || len(snap.EC2.NetworkInterfaces) != 1 || len(snap.Tencent.Instances) != 2 {
		t.Fatalf("state = %s", body)
	}

	status, body = adminDo(t, http.MethodPut, base+"/faults", `[{"provider":"ec2","action":"AllocateAddress","errorRate":1,"errorCode":"Unavailable","latency":"1ms","times":1}]`)
	if status != 200 {
		t.Fatalf("PUT faults: %d %s", status, body)
	}
	if status, body := ec2Call(t, emu.URL(), url.Values{"Action": {"AllocateAddress"}}); status != 503 || !bytes.Contains(body, []byte("<Code>Unavailable</Code>")) {
		t.Fatalf("injected fault: %d %s", status, body)
	}
	if _, body := adminDo(t, http.MethodGet, base+"/faults", ""); string(bytes.TrimSpace(body)) != "[]" {
		t.Fatalf("a used-up fault must disappear: %s", body)
	}
	if status, body := adminDo(t, http.MethodPost, base+"/faults", `{"provider":"aws"}`); status != 400 {
		t.Fatalf("bad provider: %d %s", status, body)
	}
	if status, _ := adminDo(t, http.MethodPost, base+"/faults", `{"provider":"tencent","latency":"5ms"}`); status != 200 {
		t.Fatal("POST fault failed")
	}
	if _, body := adminDo(t, http.MethodDelete, base+"/faults", ""); string(bytes.TrimSpace(body)) != "[]" {
		t.Fatalf("DELETE faults: %s", body)
	}

	status, body = adminDo(t, http.MethodPatch, base+"/settings", `{"ec2AddressQuota": 1}`)
	if status != 200 || !bytes.Contains(body, []byte(`"ec2AddressQuota": 1`)) || bytes.Contains(body, []byte(core.DefaultTencentSecretKey)) {
		t.Fatalf("PATCH settings: %d %s", status, body)
	}
	if status, body := ec2Call(t, emu.URL(), url.Values{"Action": {"AllocateAddress"}}); status != 400 || !bytes.Contains(body, []byte("AddressLimitExceeded")) {
		t.Fatalf("quota 1 with 1 address: %d %s", status, body)
	}
	if status, _ := adminDo(t, http.MethodPatch, base+"/settings", `{"rateLimitScale": -1}`); status != 400 {
		t.Fatal("a negative scale was accepted")
	}
	if status, _ := adminDo(t, http.MethodPatch, base+"/settings", `{"nope": 1}`); status != 400 {
		t.Fatal("an unknown setting was accepted")
	}

	if status, body := adminDo(t, http.MethodPost, base+"/clock/advance", `{"by":"90s"}`); status != 200 || !clock.Now().Equal(start.Add(90*time.Second)) {
		t.Fatalf("clock advance: %d %s", status, body)
	}

	if status, _ := adminDo(t, http.MethodPost, base+"/reset", ""); status != 200 {
		t.Fatal("reset failed")
	}
	snap = emu.World().Snapshot()
	if len(snap.EC2.Addresses) != 0 || len(snap.Tencent.Instances) != 1 || snap.Tencent.Instances[0].InstanceID != "ins-start001" {
		t.Fatalf("reset must keep only the start-up fixtures: %+v", snap.Tencent.Instances)
	}
	adminDo(t, http.MethodPost, base+"/reset?fixtures=false", "")
	if n := len(emu.World().Snapshot().Tencent.Instances); n != 0 {
		t.Fatalf("reset without fixtures kept %d instances", n)
	}
	if status, _ := adminDo(t, http.MethodGet, base+"/nothing", ""); status != 404 {
		t.Fatalf("unknown admin path: %d", status)
	}
}

func TestAdminClockNeedsAManualClock(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 6})
	if status, _ := adminDo(t, http.MethodPost, emu.URL()+"/admin/clock/advance", `{"by":"1s"}`); status != 409 {
		t.Fatalf("advancing the wall clock: HTTP %d, want 409", status)
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fixtures.yaml")
	if err := os.WriteFile(path, []byte(`
settings:
  ec2AddressQuota: 7
  taskDuration: 250ms
  tencentCredentials: {AKIDx: secret}
  ec2Credentials:
    AKIATENANT: {secretAccessKey: tenant-secret, accountId: "210987654321"}
ec2:
  instances:
  - instanceId: i-0123456789abcdef0
tencent:
  addresses:
  - addressType: AnycastEIP
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := cloudsim.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.EC2AddressQuota != 7 || c.Settings.TaskDuration.D() != 250*time.Millisecond || len(c.EC2.Instances) != 1 || len(c.Tencent.Addresses) != 1 ||
		c.Settings.EC2Credentials["AKIATENANT"] != (core.EC2Credential{SecretAccessKey: "tenant-secret", AccountID: "210987654321"}) {
		t.Fatalf("config = %+v", c)
	}
	if _, err := cloudsim.New(cloudsim.Options{Settings: c.Settings, Fixtures: &c.Fixtures}); err != nil {
		t.Fatalf("the loaded config does not start an emulator: %v", err)
	}
	if err := os.WriteFile(path, []byte("settings: {ec2Quota: 1}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cloudsim.LoadConfig(path); err == nil {
		t.Fatal("an unknown config field was accepted")
	}
}

func TestRequestsAreCountedForAssertions(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 8})
	ec2Call(t, emu.URL(), url.Values{"Action": {"DescribeAddresses"}})
	ec2Call(t, emu.URL(), url.Values{"Action": {"ReleaseAddress"}, "AllocationId": {"eipalloc-00000000000000000"}})
	want := map[string]int64{"ec2/DescribeAddresses/OK": 1, "ec2/ReleaseAddress/InvalidAllocationID.NotFound": 1}
	if diff := cmp.Diff(want, emu.World().Stats()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestEC2Authentication: the EC2 front checks SigV4 against its
// credentials map and answers each failure with EC2's code and status; a
// key revoked through the admin API stops working at once, and the admin
// API never shows a secret.
func TestEC2Authentication(t *testing.T) {
	const key, secret = "AKIATENANTA000000001", "tenant-a-secret"
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 12, Settings: core.Settings{EC2Credentials: map[string]core.EC2Credential{
		core.DefaultEC2AccessKeyID: {SecretAccessKey: core.DefaultEC2SecretAccessKey},
		key:                        {SecretAccessKey: secret, AccountID: "210987654321"},
	}}})
	describe := url.Values{"Action": {"DescribeAddresses"}, "Version": {ec2.APIVersion}}
	send := func(sign func(r *http.Request, body []byte)) (int, string) {
		t.Helper()
		body := []byte(describe.Encode())
		req, _ := http.NewRequest(http.MethodPost, emu.URL(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		sign(req, body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			return resp.StatusCode, "OK"
		}
		doc := parseXML(t, b)
		return resp.StatusCode, doc.child("Errors").child("Error").child("Code").Text
	}
	signWith := func(k, s string, at time.Time) func(*http.Request, []byte) {
		return func(r *http.Request, body []byte) { cloudsimtest.SignEC2(r, body, k, s, at) }
	}
	cases := []struct {
		name   string
		sign   func(*http.Request, []byte)
		status int
		code   string
	}{
		{"well-known emulator key", cloudsimtest.SignEC2Default, 200, "OK"},
		{"configured key", signWith(key, secret, time.Time{}), 200, "OK"},
		{"unsigned", func(*http.Request, []byte) {}, 401, core.EC2MissingAuthenticationToken},
		{"unknown access key", signWith("AKIANOBODY0000000000", secret, time.Time{}), 401, core.EC2AuthFailure},
		{"wrong secret", signWith(key, "not-the-secret", time.Time{}), 403, core.EC2SignatureDoesNotMatch},
		{"body changed after signing", func(r *http.Request, body []byte) {
			cloudsimtest.SignEC2Default(r, []byte("Action=ReleaseAddress"))
		}, 403, core.EC2SignatureDoesNotMatch},
		{"signed 16 minutes ago", signWith(key, secret, time.Now().Add(-16*time.Minute)), 400, core.EC2RequestExpired},
		{"signed 16 minutes ahead", signWith(key, secret, time.Now().Add(16*time.Minute)), 400, core.EC2RequestExpired},
		{"signed 10 minutes ago", signWith(key, secret, time.Now().Add(-10*time.Minute)), 200, "OK"},
		{"malformed Authorization", func(r *http.Request, _ []byte) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Signature=00") }, 400, core.EC2IncompleteSignature},
	}
	for _, tc := range cases {
		if status, code := send(tc.sign); status != tc.status || code != tc.code {
			t.Errorf("%s: HTTP %d %s, want %d %s", tc.name, status, code, tc.status, tc.code)
		}
	}

	if status, body := adminDo(t, http.MethodPatch, emu.URL()+"/admin/settings", `{"ec2Credentials": {"`+key+`": null}}`); status != 200 {
		t.Fatalf("revoking: %d %s", status, body)
	}
	if status, code := send(signWith(key, secret, time.Time{})); status != 401 || code != core.EC2AuthFailure {
		t.Fatalf("revoked key: HTTP %d %s, want 401 AuthFailure", status, code)
	}
	if status, code := send(cloudsimtest.SignEC2Default); status != 200 {
		t.Fatalf("the other key stopped working after the revocation: %d %s", status, code)
	}
	// Tencent keys are revoked the same way.
	describeTC := func() string {
		return errCode(tcCall(t, emu.URL(), "vpc", "DescribeAddresses", tencent.VersionVPC, "ap-hongkong", "{}", core.DefaultTencentSecretID, core.DefaultTencentSecretKey))
	}
	if code := describeTC(); code != "" {
		t.Fatalf("Tencent call before the revocation: %s", code)
	}
	if status, body := adminDo(t, http.MethodPatch, emu.URL()+"/admin/settings", `{"tencentCredentials": {"`+core.DefaultTencentSecretID+`": null}}`); status != 200 {
		t.Fatalf("revoking the Tencent key: %d %s", status, body)
	}
	if code := describeTC(); code != core.TCAuthFailureSecretIDNotFound {
		t.Fatalf("revoked Tencent key: %q, want %s", code, core.TCAuthFailureSecretIDNotFound)
	}
	status, body := adminDo(t, http.MethodGet, emu.URL()+"/admin/settings", "")
	if status != 200 || bytes.Contains(body, []byte(core.DefaultEC2SecretAccessKey)) || !bytes.Contains(body, []byte(core.DefaultEC2AccessKeyID)) {
		t.Fatalf("GET /admin/settings must list access key IDs and no secret: %d %s", status, body)
	}
}

// TestTencentENIFixturesAndWireFormat: the fixture YAML docs/cloudsim.md
// shows goes through the admin API, and DescribeNetworkInterfaces answers
// with vpc.NetworkInterface's field names and types: CreatedTime as
// "YYYY-MM-DD hh:mm:ss", Attachment null for a dangling ENI, EniType 1 for
// a primary ENI, the bound EIP on its private IP.
func TestTencentENIFixturesAndWireFormat(t *testing.T) {
	clock := core.NewManualClock(start)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 6, Clock: clock})
	fixtures := `
tencent:
  instances:
  - instanceId: ins-node0001
    vpcId: vpc-1
    subnetId: subnet-1
    zone: ap-hongkong-2
    networkInterfaceId: eni-node0001      # primary ENI
    privateIpAddresses: [10.0.0.5]
    networkInterfaces:                    # secondary ENIs, attached in order
    - networkInterfaceId: eni-pods0001
      privateIpAddresses: [10.0.1.2, 10.0.1.20]
  networkInterfaces:                      # more ENIs: attached (instanceId) or dangling
  - networkInterfaceId: eni-loose001
    vpcId: vpc-1
    privateIpAddresses: [10.0.2.7]
  privateIpAddresses:                     # further IPs on an existing ENI (a new pod)
  - networkInterfaceId: eni-pods0001
    privateIpAddresses: [10.0.1.21]
  addresses:                              # pre-bound to an ENI private IP
  - networkInterfaceId: eni-pods0001
    privateIpAddress: 10.0.1.20
`
	status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/fixtures", fixtures)
	var res core.FixtureResult
	if status != 200 || json.Unmarshal(body, &res) != nil {
		t.Fatalf("POST fixtures: %d %s", status, body)
	}
	if diff := cmp.Diff([]string{"eni-node0001", "eni-pods0001", "eni-loose001"}, res.TencentNetworkInterfaces); diff != "" {
		t.Fatalf("created ENIs (-want +got):\n%s", diff)
	}

	r := tcCall(t, emu.URL(), "vpc", "DescribeNetworkInterfaces", tencent.VersionVPC, "ap-hongkong", `{"Filters":[{"Name":"vpc-id","Values":["vpc-1"]}]}`,
		core.DefaultTencentSecretID, core.DefaultTencentSecretKey)
	if errCode(r) != "" || r["TotalCount"] != json.Number("3") {
		t.Fatalf("DescribeNetworkInterfaces: %v", r)
	}
	set := r["NetworkInterfaceSet"].([]any)
	primary, pods, loose := set[0].(map[string]any), set[1].(map[string]any), set[2].(map[string]any)
	if primary["Primary"] != true || primary["EniType"] != json.Number("1") || pods["EniType"] != json.Number("0") {
		t.Fatalf("Primary/EniType: %v / %v", primary, pods)
	}
	if primary["CreatedTime"] != start.Format("2006-01-02 15:04:05") {
		t.Fatalf("CreatedTime = %v, want YYYY-MM-DD hh:mm:ss", primary["CreatedTime"])
	}
	att, _ := pods["Attachment"].(map[string]any)
	if att["InstanceId"] != "ins-node0001" || att["DeviceIndex"] != json.Number("1") || pods["NetworkInterfaceState"] != "INUSE" {
		t.Fatalf("secondary ENI attachment: %v", pods)
	}
	if v, present := loose["Attachment"]; !present || v != nil {
		t.Fatalf("a dangling ENI's Attachment must be null: %v", loose)
	}
	ips := pods["PrivateIpAddressSet"].([]any)
	bound := ips[1].(map[string]any)
	if len(ips) != 3 || bound["PrivateIpAddress"] != "10.0.1.20" || !strings.HasPrefix(bound["AddressId"].(string), "eip-") || bound["PublicIpAddress"] == "" {
		t.Fatalf("pod ENI private IPs: %v", ips)
	}
	if free := ips[2].(map[string]any); free["PrivateIpAddress"] != "10.0.1.21" || free["PublicIpAddress"] != "" || free["Primary"] != false {
		t.Fatalf("a private IP without an EIP: %v", free)
	}
	if r := tcCall(t, emu.URL(), "vpc", "DescribeNetworkInterfaces", tencent.VersionVPC, "ap-hongkong", `{"Filters":[{"Values":["x"]}]}`,
		core.DefaultTencentSecretID, core.DefaultTencentSecretKey); errCode(r) != "InvalidParameter.FilterInvalidKey" {
		t.Fatalf("a filter without a name: %v", r)
	}
	if status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/fixtures", "tencent: {privateIpAddresses: [{networkInterfaceId: eni-loose001, privateIpAddresses: [10.0.1.2]}]}"); status != 400 {
		t.Fatalf("a private IP already used in the VPC was accepted: %d %s", status, body)
	}

	// The pod of 10.0.1.20 goes: its IP is handed back, its EIP unbound.
	removal := "tencent: {privateIpAddresses: [{networkInterfaceId: eni-pods0001, privateIpAddresses: [10.0.1.20]}]}"
	if status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/remove", removal); status != 200 {
		t.Fatalf("POST remove: %d %s", status, body)
	}
	if status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/remove", removal); status != 400 {
		t.Fatalf("removing an IP that is gone: %d %s", status, body)
	}
	if status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/remove", "ec2: {instanses: []}"); status != 400 {
		t.Fatalf("a misspelt removal field must be rejected: %d %s", status, body)
	}
	snap := emu.World().Snapshot()
	if a := snap.Tencent.Addresses[0]; a.AddressStatus != core.TCStatusUnbind || a.NetworkInterfaceID != "" {
		t.Fatalf("the pod EIP after its IP was handed back: %+v", a)
	}
}

// TestAdminAPIOffWithoutToken: an emulator started without an admin token
// answers its health check and nothing else of the admin API.
func TestAdminAPIOffWithoutToken(t *testing.T) {
	sim, err := cloudsim.New(cloudsim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/admin/state", ""},
		{http.MethodPost, "/admin/fixtures", `{"ec2": {"instances": []}}`},
		{http.MethodPatch, "/admin/settings", `{"ec2AddressQuota": 1000}`},
		{http.MethodDelete, "/admin/faults", ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer ")
		if status, body := do(t, req); status != http.StatusForbidden {
			t.Errorf("%s %s without an admin token configured: %d %s, want 403", tc.method, tc.path, status, body)
		}
	}
	if got := sim.World().Settings().EC2AddressQuota; got == 1000 {
		t.Error("the settings were changed through an admin API that is off")
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/healthz", nil)
	if status, _ := do(t, req); status != http.StatusOK {
		t.Errorf("healthz: %d, want 200", status)
	}
}

// TestAdminAPIRefusesUntrustedRequests: what a web page (or anything else
// that is not the emulator's operator) could send is refused before it
// does anything: no or a wrong token, a Host that is not loopback (DNS
// rebinding) or configured, a body that is not JSON or YAML (a cross-site
// form or text/plain), a body over the cap.
func TestAdminAPIRefusesUntrustedRequests(t *testing.T) {
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, AdminHosts: []string{"emulator.internal:9600"}})
	patch := `{"ec2AddressQuota": 1000}`
	cases := []struct {
		name   string
		edit   func(*http.Request)
		status int
	}{
		{"the operator", func(*http.Request) {}, http.StatusOK},
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"a wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer guess") }, http.StatusUnauthorized},
		{"the token without Bearer", func(r *http.Request) { r.Header.Set("Authorization", cloudsimtest.AdminToken) }, http.StatusUnauthorized},
		{"a rebound DNS name", func(r *http.Request) { r.Host = "attacker.example:80" }, http.StatusForbidden},
		{"a configured host", func(r *http.Request) { r.Host = "emulator.internal:9600" }, http.StatusOK},
		{"the configured host on another port", func(r *http.Request) { r.Host = "emulator.internal:80" }, http.StatusForbidden},
		{"localhost", func(r *http.Request) { r.Host = "localhost" }, http.StatusOK},
		{"IPv6 loopback", func(r *http.Request) { r.Host = "[::1]:9600" }, http.StatusOK},
		{"a form", func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, http.StatusUnsupportedMediaType},
		{"text/plain", func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType},
		{"no content type", func(r *http.Request) { r.Header.Del("Content-Type") }, http.StatusUnsupportedMediaType},
		{"JSON with a charset", func(r *http.Request) { r.Header.Set("Content-Type", "application/json; charset=utf-8") }, http.StatusOK},
	}
	for _, tc := range cases {
		req, err := cloudsim.NewAdminRequest(t.Context(), http.MethodPatch, emu.URL()+"/admin/settings", cloudsimtest.AdminToken, patch)
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(req)
		if status, body := do(t, req); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
	}

	// A body over the cap is refused whole.
	big := `{"ec2": {"instances": [], "addresses": [` + strings.Repeat(`{"tags": {"k": "v"}},`, 300000) + `{}]}}`
	if status, body := adminDo(t, http.MethodPost, emu.URL()+"/admin/fixtures", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body: %d %.200s, want 413", len(big), status, body)
	}
	if n := len(emu.World().Snapshot().EC2.Addresses); n != 0 {
		t.Errorf("%d addresses after a refused body", n)
	}
	// Health checks need no token, but the Host must still be this emulator's.
	req, _ := http.NewRequest(http.MethodGet, emu.URL()+"/admin/healthz", nil)
	if status, _ := do(t, req); status != http.StatusOK {
		t.Errorf("healthz without a token: %d, want 200", status)
	}
	req.Host = "attacker.example"
	if status, _ := do(t, req); status != http.StatusForbidden {
		t.Errorf("healthz for a rebound name: %d, want 403", status)
	}
}
