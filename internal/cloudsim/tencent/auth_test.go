package tencent

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

const sig64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseAuthorization(t *testing.T) {
	good := "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64
	got, err := ParseAuthorization(good)
	if err != nil {
		t.Fatal(err)
	}
	want := Authorization{SecretID: "AKID1", Date: "2026-01-02", Service: "vpc", SignedHeaders: []string{"content-type", "host"}, Signature: sig64}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if _, err := ParseAuthorization("TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request,SignedHeaders=content-type;host;x-tc-action,Signature=" + sig64); err != nil {
		t.Fatalf("no spaces and an extra signed header are fine: %v", err)
	}
	bad := map[string]string{
		"other algorithm":        "HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64,
		"no credential":          "TC3-HMAC-SHA256 SignedHeaders=content-type;host, Signature=" + sig64,
		"short credential":       "TC3-HMAC-SHA256 Credential=AKID1/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64,
		"bad date":               "TC3-HMAC-SHA256 Credential=AKID1/20260102/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64,
		"bad terminator":         "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/aws4_request, SignedHeaders=content-type;host, Signature=" + sig64,
		"host not signed":        "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type, Signature=" + sig64,
		"unsorted headers":       "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=host;content-type, Signature=" + sig64,
		"short signature":        "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=abc",
		"duplicate element":      "TC3-HMAC-SHA256 Credential=A/2026-01-02/vpc/tc3_request, Credential=B/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64,
		"unknown element":        "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64 + ", Extra=1",
		"upper-case header name": "TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=Content-Type;host, Signature=" + sig64,
		"empty":                  "",
	}
	for name, h := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseAuthorization(h); err == nil {
				t.Fatalf("accepted %q", h)
			}
		})
	}
}

// captured is what the real Go SDK put on the wire.
type captured struct {
	req  *http.Request
	body []byte
}

type recorder struct{ got *captured }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	r.got = &captured{req: req, body: body}
	return &http.Response{
		StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"Response":{"TotalCount":0,"AddressSet":[],"RequestId":"r"}}`)),
	}, nil
}

// sdkRequest signs a DescribeAddresses call with tencentcloud-sdk-go and
// returns it as the server would receive it.
func sdkRequest(t *testing.T, secretID, secretKey string) *http.Request {
	t.Helper()
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = "127.0.0.1:8080"
	cpf.HttpProfile.Scheme = "HTTP"
	c, err := vpc.NewClient(common.NewCredential(secretID, secretKey), "ap-hongkong", cpf)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c.WithHttpTransport(rec)
	req := vpc.NewDescribeAddressesRequest()
	req.AddressIds = common.StringPtrs([]string{"eip-12345678"})
	if _, err := c.DescribeAddresses(req); err != nil {
		t.Fatal(err)
	}
	server := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(rec.got.body))
	server.Host = rec.got.req.Host
	if server.Host == "" {
		server.Host = rec.got.req.URL.Host
	}
	server.Header = rec.got.req.Header.Clone()
	return server
}

func TestVerifyAcceptsWhatTheGoSDKSigns(t *testing.T) {
	r := sdkRequest(t, "AKIDtest", "secret")
	req, apiErr := DecodeRequest(r)
	if apiErr != nil {
		t.Fatalf("DecodeRequest: %v", apiErr)
	}
	if req.Action != "DescribeAddresses" || req.Version != VersionVPC || req.Region != "ap-hongkong" || req.Auth.Service != "vpc" || req.Auth.SecretID != "AKIDtest" {
		t.Fatalf("decoded %+v", req)
	}
	if err := req.Verify(r, "secret", time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("a signature made by the SDK was rejected: %v", err)
	}
	if err := req.Verify(r, "other-secret", time.Now(), 5*time.Minute); err == nil || err.Code != core.TCAuthFailureSignatureFailure {
		t.Fatalf("wrong key: %v", err)
	}
	if err := req.Verify(r, "secret", time.Now().Add(10*time.Minute), 5*time.Minute); err == nil || err.Code != core.TCAuthFailureSignatureExpire {
		t.Fatalf("stale timestamp: %v", err)
	}
	if err := req.Verify(r, "secret", time.Now().Add(10*time.Minute), -1); err != nil {
		t.Fatalf("with the freshness check disabled: %v", err)
	}

	tampered := *req
	tampered.Body = bytes.Replace(req.Body, []byte("12345678"), []byte("87654321"), 1)
	if err := tampered.Verify(r, "secret", time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a tampered body passed verification")
	}
	r2 := r.Clone(r.Context())
	r2.Host = "127.0.0.1:9999"
	if err := req.Verify(r2, "secret", time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a different Host passed verification")
	}
}

func TestSignRoundTrip(t *testing.T) {
	body := []byte(`{"TaskId":1}`)
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Host = "localhost:1"
	r.Header.Set("Content-Type", "application/json")
	now := time.Unix(1767225600, 0)
	a, err := ParseAuthorization(Sign(r, body, "AKID", "key", "vpc", now))
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{Timestamp: now.Unix(), Auth: a, Body: body}
	if err := req.Verify(r, "key", now, time.Minute); err != nil {
		t.Fatalf("Sign and Verify disagree: %v", err)
	}
}

func TestDecodeRequestRejects(t *testing.T) {
	base := func() *http.Request {
		r := sdkRequest(t, "AKIDtest", "secret")
		return r
	}
	cases := map[string]struct {
		mutate func(r *http.Request)
		code   string
	}{
		"GET":                {func(r *http.Request) { r.Method = http.MethodGet }, core.TCUnsupportedProtocol},
		"form content type":  {func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, core.TCUnsupportedProtocol},
		"no version":         {func(r *http.Request) { r.Header.Del("X-TC-Version") }, core.TCMissingParameter},
		"no timestamp":       {func(r *http.Request) { r.Header.Del("X-TC-Timestamp") }, core.TCMissingParameter},
		"bad timestamp":      {func(r *http.Request) { r.Header.Set("X-TC-Timestamp", "soon") }, core.TCInvalidParameter},
		"no authorization":   {func(r *http.Request) { r.Header.Del("Authorization") }, core.TCAuthFailureInvalidAuthz},
		"bad authorization":  {func(r *http.Request) { r.Header.Set("Authorization", "Basic abc") }, core.TCAuthFailureInvalidAuthz},
		"scope date differs": {func(r *http.Request) { r.Header.Set("X-TC-Timestamp", "86400") }, core.TCAuthFailureSignatureFailure},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := base()
			tc.mutate(r)
			if _, err := DecodeRequest(r); err == nil || err.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

func TestDecodeParams(t *testing.T) {
	cases := map[string]struct {
		body string
		code string
	}{
		"empty body is no parameters": {body: "", code: ""},
		"integer TaskId":              {body: `{"TaskId": 1385262431}`, code: ""},
		"string TaskId":               {body: `{"TaskId": "1385262431"}`, code: core.TCInvalidParameter},
		"negative TaskId":             {body: `{"TaskId": -1}`, code: core.TCInvalidParameter},
		"unknown parameter":           {body: `{"TaskID": 1}`, code: core.TCUnknownParameter},
		"not JSON":                    {body: `TaskId=1`, code: core.TCInvalidParameter},
		"truncated":                   {body: `{"TaskId": 1`, code: core.TCInvalidParameter},
		"two values":                  {body: `{"TaskId": 1} {}`, code: core.TCInvalidParameter},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var p describeTaskResultParams
			err := decodeParams([]byte(tc.body), &p)
			got := ""
			if err != nil {
				got = err.Code
			}
			if got != tc.code {
				t.Fatalf("err = %v, want %q", err, tc.code)
			}
		})
	}
}

// FuzzParseAuthorization: the Authorization parser never panics, and what
// it accepts is well-formed.
func FuzzParseAuthorization(f *testing.F) {
	f.Add("TC3-HMAC-SHA256 Credential=AKID1/2026-01-02/vpc/tc3_request, SignedHeaders=content-type;host, Signature=" + sig64)
	f.Add("TC3-HMAC-SHA256 Credential=/2026-01-02/vpc/tc3_request, SignedHeaders=;, Signature=")
	f.Add("TC3-HMAC-SHA256 ,,,===")
	f.Add("TC3-HMAC-SHA256")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		a, err := ParseAuthorization(h)
		if err != nil {
			return
		}
		if a.SecretID == "" || len(a.Signature) != 64 || len(a.SignedHeaders) < 2 {
			t.Fatalf("accepted a malformed header %q as %+v", h, a)
		}
	})
}

// FuzzDecodeRequest: the envelope decoder, signature check and parameter
// decoding never panic on arbitrary headers and bodies.
func FuzzDecodeRequest(f *testing.F) {
	f.Add("DescribeAddresses", "2017-03-12", "1767225600", "TC3-HMAC-SHA256 Credential=AKID1/2026-01-01/vpc/tc3_request, SignedHeaders=content-type;host, Signature="+sig64, `{"AddressIds":["eip-12345678"]}`)
	f.Add("DescribeTaskResult", "2017-03-12", "1", "TC3-HMAC-SHA256 Credential=AKID1/1970-01-01/vpc/tc3_request, SignedHeaders=content-type;host, Signature="+sig64, `{"TaskId":"1"}`)
	f.Add("", "", "-5", "garbage", `{`)
	f.Add("AllocateAddresses", "2017-03-12", "99999999999999999999", "", `{"Tags":[{"Key":null}],"AddressCount":1e309}`)
	f.Fuzz(func(t *testing.T, action, version, ts, authz, body string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-TC-Action", action)
		r.Header.Set("X-TC-Version", version)
		r.Header.Set("X-TC-Timestamp", ts)
		r.Header.Set("Authorization", authz)
		req, err := DecodeRequest(r)
		if err != nil {
			return
		}
		_ = req.Verify(r, "key", time.Now(), time.Minute)
		var a allocateAddressesParams
		_ = decodeParams(req.Body, &a)
		var d describeAddressesParams
		_ = decodeParams(req.Body, &d)
		var tr describeTaskResultParams
		_ = decodeParams(req.Body, &tr)
	})
}
