package ec2

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

func TestDecodeParamsLists(t *testing.T) {
	p, err := DecodeParams("Action=DescribeAddresses&Version=2016-11-15" +
		"&Filter.2.Name=tag%3Aowner&Filter.2.Value.1=a&Filter.2.Value.2=b" +
		"&Filter.1.Name=tag-key&Filter.1.Value.1=k" +
		"&AllocationId.10=x10&AllocationId.2=x2")
	if err != nil {
		t.Fatal(err)
	}
	filters, err := p.Filters()
	if err != nil {
		t.Fatal(err)
	}
	want := []core.Filter{{Name: "tag-key", Values: []string{"k"}}, {Name: "tag:owner", Values: []string{"a", "b"}}}
	if diff := cmp.Diff(want, filters); diff != "" {
		t.Fatalf("filters in index order (-want +got):\n%s", diff)
	}
	ids, err := p.List("AllocationId")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x2", "x10"}, ids); diff != "" {
		t.Fatalf("numeric, not lexical, index order (-want +got):\n%s", diff)
	}
	if err := p.Unknown(); err != nil {
		t.Fatalf("every parameter was read: %v", err)
	}
}

func TestDecodeParamsTagSpecifications(t *testing.T) {
	p, err := DecodeParams("TagSpecification.1.ResourceType=elastic-ip&TagSpecification.1.Tag.1.Key=k1&TagSpecification.1.Tag.1.Value=v1" +
		"&TagSpecification.1.Tag.2.Key=k2&TagSpecification.1.Tag.2.Value=")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.TagSpecifications()
	if err != nil {
		t.Fatal(err)
	}
	want := []core.EC2TagSpec{{ResourceType: "elastic-ip", Tags: []core.Tag{{Key: "k1", Value: "v1"}, {Key: "k2", Value: ""}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestDecodeParamsDeleteTagsValues(t *testing.T) {
	p, err := DecodeParams("Tag.1.Key=a&Tag.2.Key=b&Tag.2.Value=&Tag.3.Key=c&Tag.3.Value=x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.DeleteTags()
	if err != nil {
		t.Fatal(err)
	}
	empty, x := "", "x"
	want := []core.EC2DeleteTag{{Key: "a"}, {Key: "b", Value: &empty}, {Key: "c", Value: &x}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("absent vs empty Value must differ (-want +got):\n%s", diff)
	}
}

func TestDecodeParamsRejects(t *testing.T) {
	cases := map[string]struct {
		raw  string
		read func(p *Params) error
		code string
	}{
		"repeated key":      {raw: "Action=A&Action=B", code: core.EC2InvalidParameterValue},
		"bad escape":        {raw: "Action=%zz", code: "MalformedQueryString"},
		"zero index":        {raw: "AllocationId.0=x", read: func(p *Params) error { _, err := p.List("AllocationId"); return err }, code: core.EC2InvalidParameterValue},
		"leading zero":      {raw: "AllocationId.01=x", read: func(p *Params) error { _, err := p.List("AllocationId"); return err }, code: core.EC2InvalidParameterValue},
		"huge index":        {raw: "AllocationId.99999999999=x", read: func(p *Params) error { _, err := p.List("AllocationId"); return err }, code: core.EC2InvalidParameterValue},
		"index not numeric": {raw: "Filter.x.Name=a", read: func(p *Params) error { _, err := p.Filters(); return err }, code: core.EC2InvalidParameterValue},
		"filter w/o name":   {raw: "Filter.1.Value.1=a", read: func(p *Params) error { _, err := p.Filters(); return err }, code: core.EC2InvalidParameterValue},
		"tag w/o key":       {raw: "Tag.1.Value=a", read: func(p *Params) error { _, err := p.Tags("Tag"); return err }, code: core.EC2MissingParameter},
		"bad bool":          {raw: "DryRun=yes", read: func(p *Params) error { _, err := p.Bool("DryRun"); return err }, code: core.EC2InvalidParameterValue},
		"bad int":           {raw: "MaxResults=ten", read: func(p *Params) error { _, err := p.Int("MaxResults"); return err }, code: core.EC2InvalidParameterValue},
		"unknown parameter": {raw: "Action=A&Colour=red", read: func(p *Params) error { return p.Unknown() }, code: core.EC2UnknownParameter},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := DecodeParams(tc.raw)
			if err == nil && tc.read != nil {
				err = tc.read(p)
			}
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
		})
	}
}

func TestReadParamsMergesQueryAndBody(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/?Action=DescribeAddresses", strings.NewReader("Version=2016-11-15"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	p, err := ReadParams(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Action() != "DescribeAddresses" || p.Version() != APIVersion {
		t.Fatalf("Action %q Version %q", p.Action(), p.Version())
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadParams(r); err == nil {
		t.Fatal("a JSON body was accepted by the EC2 front-end")
	}
}

func TestSigningRegion(t *testing.T) {
	cases := map[string]string{
		"AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/ec2/aws4_request, SignedHeaders=host, Signature=abc": "eu-west-1",
		"":                                  "",
		"AWS4-HMAC-SHA256 Credential=short": "",
	}
	for in, want := range cases {
		if got := SigningRegion(in); got != want {
			t.Errorf("SigningRegion(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecodeParams: the form decoder and every list accessor never panic
// and never accept a list index outside 1..maxListIndex.
func FuzzDecodeParams(f *testing.F) {
	for _, seed := range []string{
		"Action=AllocateAddress&Version=2016-11-15&TagSpecification.1.ResourceType=elastic-ip&TagSpecification.1.Tag.1.Key=k&TagSpecification.1.Tag.1.Value=v",
		"Action=DescribeAddresses&Version=2016-11-15&Filter.1.Name=tag%3Aa&Filter.1.Value.1=b&AllocationId.1=eipalloc-1",
		"Action=DeleteTags&ResourceId.1=eipalloc-1&Tag.1.Key=a&Tag.2.Key=b&Tag.2.Value=",
		"Filter.1.Value.1000=x&Filter.1000.Name=y",
		"Filter.1..Name=x",
		"Tag.1=x&Tag.1.Key=y",
		"%ff%fe=%00",
		"a=b;c=d",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := DecodeParams(raw)
		if err != nil {
			return
		}
		_ = p.Action()
		_, _ = p.Filters()
		_, _ = p.TagSpecifications()
		_, _ = p.Tags("Tag")
		_, _ = p.DeleteTags()
		for _, prefix := range []string{"AllocationId", "PublicIp", "ResourceId", "NetworkInterfaceId"} {
			if vs, err := p.List(prefix); err == nil && len(vs) > maxListIndex {
				t.Fatalf("List(%s) returned %d values", prefix, len(vs))
			}
		}
		_, _ = p.Bool("DryRun")
		_, _ = p.Int("MaxResults")
		_ = p.Unknown()
	})
}
