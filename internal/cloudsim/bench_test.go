package cloudsim_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	epaws "github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/cloudsim/ec2"
	"github.com/edgeplane/edgeplane/internal/cloudsim/tencent"
)

// Emulator throughput over loopback TCP with server-side rate limits off.
// These measure the emulator (parsing, state, encoding, HTTP), so the
// client sends pre-built requests; BenchmarkEC2DescribeAddressesViaSDK adds
// the real SDK for comparison. Run with `make bench` or
//
//	go test -run '^$' -bench . -benchtime 2s ./internal/cloudsim/
//
// Each reports req/s; nothing here asserts on time.

func benchEmulator(b *testing.B, f *core.Fixtures) *cloudsimtest.Emulator {
	b.Helper()
	return cloudsimtest.Start(b, cloudsim.Options{Seed: 1, Fixtures: f, Settings: core.Settings{
		RateLimitsDisabled:   true,
		EC2AddressQuota:      1 << 30,
		TencentAddressQuota:  1 << 30,
		EC2PublicIPv4Pools:   map[string]string{"amazon": "10.0.0.0/8"},
		TencentAddressPrefix: "11.0.0.0/8",
	}})
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
}

// send posts body and drains the answer; it fails the benchmark on a
// non-200 answer.
func send(b *testing.B, c *http.Client, req func() *http.Request) {
	resp, err := c.Do(req())
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("HTTP %d", resp.StatusCode)
	}
}

func reportThroughput(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func ec2Request(base string, form url.Values) func() *http.Request {
	form.Set("Version", ec2.APIVersion)
	body := []byte(form.Encode())
	return func() *http.Request {
		r, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		cloudsimtest.SignEC2Default(r, body)
		return r
	}
}

func tencentRequest(base, service, action, version, body string) func() *http.Request {
	u, _ := url.Parse(base)
	now := time.Now()
	proto, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	proto.Host = u.Host
	proto.Header.Set("Content-Type", "application/json")
	proto.Header.Set("X-TC-Action", action)
	proto.Header.Set("X-TC-Version", version)
	proto.Header.Set("X-TC-Region", "ap-hongkong")
	proto.Header.Set("X-TC-Timestamp", strconv.FormatInt(now.Unix(), 10))
	// Signed once: a signature stays valid for five minutes.
	proto.Header.Set("Authorization", tencent.Sign(proto, []byte(body), core.DefaultTencentSecretID, core.DefaultTencentSecretKey, service, now))
	return func() *http.Request {
		r, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
		r.Host = u.Host
		r.Header = proto.Header.Clone()
		return r
	}
}

func tenAddresses() *core.Fixtures {
	f := &core.Fixtures{}
	for i := range 10 {
		f.EC2.Addresses = append(f.EC2.Addresses, core.EC2AddressFixture{Tags: map[string]string{"owner": "pod-" + strconv.Itoa(i)}})
		f.Tencent.Addresses = append(f.Tencent.Addresses, core.TCAddressFixture{AddressType: "AnycastEIP", Tags: map[string]string{"owner": "node-" + strconv.Itoa(i)}})
	}
	return f
}

func BenchmarkEC2DescribeAddresses(b *testing.B) {
	emu := benchEmulator(b, tenAddresses())
	req := ec2Request(emu.URL(), url.Values{"Action": {"DescribeAddresses"}, "Filter.1.Name": {"tag:owner"}, "Filter.1.Value.1": {"pod-3"}})
	c := benchClient()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, c, req)
		}
	})
	reportThroughput(b)
}

func BenchmarkEC2AllocateAddress(b *testing.B) {
	emu := benchEmulator(b, nil)
	req := ec2Request(emu.URL(), url.Values{"Action": {"AllocateAddress"}, "TagSpecification.1.ResourceType": {"elastic-ip"},
		"TagSpecification.1.Tag.1.Key": {"owner"}, "TagSpecification.1.Tag.1.Value": {"bench"}})
	c := benchClient()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, c, req)
		}
	})
	reportThroughput(b)
}

func BenchmarkTencentDescribeAddresses(b *testing.B) {
	emu := benchEmulator(b, tenAddresses())
	req := tencentRequest(emu.URL(), "vpc", "DescribeAddresses", tencent.VersionVPC, `{"Filters":[{"Name":"tag:owner","Values":["node-3"]}]}`)
	c := benchClient()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, c, req)
		}
	})
	reportThroughput(b)
}

func BenchmarkTencentAllocateAddresses(b *testing.B) {
	emu := benchEmulator(b, nil)
	req := tencentRequest(emu.URL(), "vpc", "AllocateAddresses", tencent.VersionVPC, `{"AddressType":"AnycastEIP","Tags":[{"Key":"owner","Value":"bench"}]}`)
	c := benchClient()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, c, req)
		}
	})
	reportThroughput(b)
}

// BenchmarkEC2DescribeAddressesViaSDK is the same call made by edgeplane's
// aws-sdk-go-v2 client (client-side limits off), to show SDK overhead.
func BenchmarkEC2DescribeAddressesViaSDK(b *testing.B) {
	emu := benchEmulator(b, tenAddresses())
	c, err := epaws.New(context.Background(), epaws.Options{
		Region: "us-east-1", Endpoint: emu.URL(), Credentials: epaws.Credentials{Source: epaws.CredentialsNone},
		RateLimits: epaws.RateLimits{Disabled: true}, HTTPClient: benchClient(),
	})
	if err != nil {
		b.Fatal(err)
	}
	q := epaws.AddressQuery{Tags: map[string]string{"owner": "pod-3"}}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.DescribeAddresses(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	})
	reportThroughput(b)
}

// podENIs is 50 nodes with a secondary ENI of 10 pod IPs each, every pod IP
// carrying an EIP: the 500-pod world of issue 22's Tencent benchmark.
func podENIs() *core.Fixtures {
	f := &core.Fixtures{}
	for n := range 50 {
		var ips []string
		for p := range 10 {
			ips = append(ips, "10.1."+strconv.Itoa(n)+"."+strconv.Itoa(p+10))
		}
		eni := "eni-p" + strconv.Itoa(1000000 + n)[1:] + "0"
		f.Tencent.Instances = append(f.Tencent.Instances, core.TCInstanceFixture{
			VpcID: "vpc-bench", PrivateIPAddresses: []string{"10.0." + strconv.Itoa(n) + ".1"},
			NetworkInterfaces: []core.TCENIFixture{{NetworkInterfaceID: eni, PrivateIPAddresses: ips}},
		})
		for _, ip := range ips {
			f.Tencent.Addresses = append(f.Tencent.Addresses, core.TCAddressFixture{NetworkInterfaceID: eni, PrivateIPAddress: ip})
		}
	}
	return f
}

// BenchmarkTencentDescribeNetworkInterfacesByPodIP: the pod path's ENI
// look-up (exact address-ip in a VPC) in the 500-pod world; Tencent allows
// 100 of these per second.
func BenchmarkTencentDescribeNetworkInterfacesByPodIP(b *testing.B) {
	emu := benchEmulator(b, podENIs())
	req := tencentRequest(emu.URL(), "vpc", "DescribeNetworkInterfaces", tencent.VersionVPC,
		`{"Filters":[{"Name":"vpc-id","Values":["vpc-bench"]},{"Name":"address-ip","Values":["10.1.37.15"]},{"Name":"ip-exact-match","Values":["true"]}]}`)
	c := benchClient()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, c, req)
		}
	})
	reportThroughput(b)
}
