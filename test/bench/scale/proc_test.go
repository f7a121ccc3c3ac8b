package scale

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Memory
		wantErr bool
	}{
		{name: "every line", in: "Name:\tedgeplane\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t 81920 kB\nRssFile:\t 20480 kB\nRssShmem:\t0 kB\nThreads:\t9\n",
			want: Memory{RSS: 100 << 20, HWM: 200 << 20, Anon: 80 << 20, File: 20 << 20}},
		{name: "missing peak", in: "VmRSS:\t1 kB\nRssAnon:\t1 kB\nRssFile:\t0 kB\n", wantErr: true},
		{name: "bad unit", in: "VmRSS:\t1 MB\nVmHWM:\t1 kB\nRssAnon:\t1 kB\nRssFile:\t0 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStatus([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr bool
	}{
		{name: "plain", in: "1234 (edgeplane-mana) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 1000 200\n", want: 3 * time.Second},
		{name: "spaces and parentheses in the name", in: "7 (a b) c)) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 1 1", want: 30 * time.Millisecond},
		{name: "truncated", in: "7 (x) R 1 2 3", wantErr: true},
		{name: "no name", in: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMutations(t *testing.T) {
	before := map[string]int64{"ec2/AllocateAddress/OK": 5, "ec2/DescribeAddresses/OK": 10}
	after := map[string]int64{
		"ec2/AllocateAddress/OK":                   6,
		"ec2/AllocateAddress/AddressLimitExceeded": 3, // failed: changed nothing
		"ec2/DescribeAddresses/OK":                 90,
		"ec2/AssociateAddress/OK":                  2,
		"tencent/DescribeTaskResult/OK":            4,
		"tencent/AllocateAddresses/OK":             1,
		"tencent/InquiryPriceAllocateAddresses/OK": 7,
		"tencent/ModifyAddressAttribute/OK":        0,
		"malformed":                                1,
	}
	want := map[string]int64{"ec2/AllocateAddress": 1, "ec2/AssociateAddress": 2, "tencent/AllocateAddresses": 1}
	if diff := cmp.Diff(want, Mutations(before, after)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
