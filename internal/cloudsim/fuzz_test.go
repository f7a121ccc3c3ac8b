package cloudsim_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/cloudsim/tencent"
)

func fuzzServer(f *testing.F) *cloudsim.Server {
	f.Helper()
	s, err := cloudsim.New(cloudsim.Options{
		Seed:     1,
		Clock:    core.NewManualClock(start),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Settings: core.Settings{RateLimitsDisabled: true},
		Fixtures: &core.Fixtures{
			EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{{
				InstanceID: "i-0123456789abcdef0", VpcID: "vpc-1",
				NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: "eni-0aaaaaaaaaaaaaaa1", PrivateIPAddresses: []string{"10.0.0.1"}, IPv4Prefixes: []string{"10.0.64.0/28"}}},
			}}},
			Tencent: core.TencentFixtures{Instances: []core.TCInstanceFixture{{InstanceID: "ins-node0001", PrivateIPAddresses: []string{"10.1.0.5"}}}},
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	return s
}

// FuzzEC2Request sends arbitrary form bodies through the whole EC2
// front-end and state: it never panics and always answers well-formed XML.
func FuzzEC2Request(f *testing.F) {
	for _, seed := range []string{
		"Action=AllocateAddress&Version=2016-11-15&TagSpecification.1.ResourceType=elastic-ip&TagSpecification.1.Tag.1.Key=k&TagSpecification.1.Tag.1.Value=v",
		"Action=AssociateAddress&Version=2016-11-15&AllocationId=eipalloc-1&NetworkInterfaceId=eni-0aaaaaaaaaaaaaaa1&PrivateIpAddress=10.0.64.3&AllowReassociation=false",
		"Action=DescribeAddresses&Version=2016-11-15&Filter.1.Name=tag%3Ak&Filter.1.Value.1=*",
		"Action=DescribeNetworkInterfaces&Version=2016-11-15&MaxResults=5&NextToken=b2Zmc2V0OjE",
		"Action=DeleteTags&Version=2016-11-15&ResourceId.1=eni-0aaaaaaaaaaaaaaa1",
		"Action=ReleaseAddress&Version=2016-11-15&PublicIp=198.18.0.1&DryRun=true",
		"Action=CreateTags&Version=2016-11-15&ResourceId.1=i-0123456789abcdef0&Tag.1.Key=a",
	} {
		f.Add(seed)
	}
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		cloudsimtest.SignEC2Default(r, []byte(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		var doc struct{ XMLName xml.Name }
		if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("HTTP %d answer is not XML: %v\n%s", rec.Code, err, rec.Body)
		}
		if (rec.Code == 200) == (doc.XMLName.Local == "Response") {
			t.Fatalf("HTTP %d with root <%s>", rec.Code, doc.XMLName.Local)
		}
	})
}

// FuzzTencentRequest sends arbitrary, correctly signed JSON bodies for each
// action through the whole Tencent front-end and state: it never panics and
// always answers the API 3.0 envelope with HTTP 200.
func FuzzTencentRequest(f *testing.F) {
	for _, seed := range []struct{ action, body string }{
		{"AllocateAddresses", `{"AddressType":"AnycastEIP","Tags":[{"Key":"k","Value":"v"}],"ClientToken":"t"}`},
		{"AssociateAddress", `{"AddressId":"eip-00000000","InstanceId":"ins-node0001"}`},
		{"DisassociateAddress", `{"AddressId":"eip-00000000"}`},
		{"ReleaseAddresses", `{"AddressIds":["eip-00000000"]}`},
		{"DescribeAddresses", `{"Filters":[{"Name":"tag:k","Values":["v"]}],"Offset":0,"Limit":100}`},
		{"DescribeTaskResult", `{"TaskId":1300000001}`},
		{"DescribeInstances", `{"InstanceIds":["ins-node0001"]}`},
		{"DescribeResourcesByTags", `{"TagFilters":[{"TagKey":"k","TagValue":["v"]}],"Limit":1}`},
		{"DescribeNetworkInterfaces", `{"Filters":[{"Name":"address-ip","Values":["10.1"]},{"Name":"ip-exact-match","Values":["true"]}],"Offset":18446744073709551615,"Limit":100}`},
		{"AssociateAddress", `{"AddressId":"eip-00000000","NetworkInterfaceId":"eni-00000000","PrivateIpAddress":"10.1.0.5"}`},
	} {
		f.Add(seed.action, seed.body)
	}
	s := fuzzServer(f)
	services := map[string]string{"DescribeInstances": "cvm", "DescribeResourcesByTags": "tag"}
	f.Fuzz(func(t *testing.T, action, body string) {
		service, version := "vpc", tencent.VersionVPC
		if svc, ok := services[action]; ok {
			service = svc
			if svc == "tag" {
				version = tencent.VersionTag
			}
		}
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Host = "127.0.0.1:1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-TC-Action", action)
		r.Header.Set("X-TC-Version", version)
		r.Header.Set("X-TC-Region", "ap-hongkong")
		now := time.Now()
		r.Header.Set("X-TC-Timestamp", strconv.FormatInt(now.Unix(), 10))
		r.Header.Set("Authorization", tencent.Sign(r, []byte(body), core.DefaultTencentSecretID, core.DefaultTencentSecretKey, service, now))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		var out struct {
			Response map[string]json.RawMessage
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.Response["RequestId"] == nil {
			t.Fatalf("HTTP %d, body %s", rec.Code, rec.Body)
		}
	})
}
