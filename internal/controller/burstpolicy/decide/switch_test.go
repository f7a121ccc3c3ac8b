package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// TestDecideSwitch encodes all nine rows of the legacy chart v1.0.0 table.
func TestDecideSwitch(t *testing.T) {
	on, off := ptr.To(true), ptr.To(false)
	cases := []struct {
		name          string
		global, local *bool
		want          Switch
	}{
		{"global true, local false", on, off, Switch{Burst: false, LocalReplicasEffective: false}},
		{"global true, local unset", on, nil, Switch{Burst: true, LocalReplicasEffective: true}},
		{"global true, local true", on, on, Switch{Burst: true, LocalReplicasEffective: true}},
		{"global false, local false", off, off, Switch{Burst: false, LocalReplicasEffective: false}},
		{"global false, local unset", off, nil, Switch{Burst: false, LocalReplicasEffective: false}},
		{"global false, local true", off, on, Switch{Burst: true, LocalReplicasEffective: true}},
		{"global unset, local false", nil, off, Switch{Burst: false, LocalReplicasEffective: false}},
		{"global unset, local unset", nil, nil, Switch{Burst: true, LocalReplicasEffective: false}},
		{"global unset, local true", nil, on, Switch{Burst: true, LocalReplicasEffective: true}},
	}
	if len(cases) != 9 {
		t.Fatalf("the table has %d rows, want 9", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DecideSwitch(tc.global, tc.local)); diff != "" {
				t.Errorf("DecideSwitch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSwitch(t *testing.T) {
	cases := []struct {
		in      string
		want    *bool
		wantErr bool
	}{
		{in: "true", want: ptr.To(true)},
		{in: "false", want: ptr.To(false)},
		{in: " TRUE ", want: ptr.To(true)},
		{in: `"true"`, want: ptr.To(true)}, // the chart renders "\"true\""
		{in: `'false'`, want: ptr.To(false)},
		{in: "", want: nil},
		{in: `""`, want: nil},
		{in: "yes", wantErr: true},
		{in: "1", wantErr: true},
		{in: `"true`, wantErr: true},
	}
	for _, tc := range cases {
		got, err := ParseSwitch(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseSwitch(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSwitch(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseLocalReplicas(t *testing.T) {
	cases := []struct {
		in      string
		want    int32
		wantErr bool
	}{
		{in: "1", want: 1},
		{in: " 0 ", want: 0},
		{in: `"3"`, want: 3},
		{in: "1073741824", want: 1 << 30},
		{in: "1073741825", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "", wantErr: true},
		{in: "two", wantErr: true},
		{in: "1.5", wantErr: true},
	}
	for _, tc := range cases {
		got, err := ParseLocalReplicas(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseLocalReplicas(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseLocalReplicas(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func FuzzParseSwitch(f *testing.F) {
	for _, s := range []string{"true", "false", `"true"`, "", "  ", `"`, `''`, "TrUe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseSwitch(s)
		if err != nil && b != nil {
			t.Fatalf("ParseSwitch(%q) returned a value with an error", s)
		}
	})
}

func FuzzParseLocalReplicas(f *testing.F) {
	for _, s := range []string{"1", "0", `"2"`, "-1", "", "99999999999", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseLocalReplicas(s)
		if err == nil && (n < 0 || n > maxLocalReplicas) {
			t.Fatalf("ParseLocalReplicas(%q) = %d out of range", s, n)
		}
	})
}

func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"32768 60999", "1024\t65535", "", "1 2 3", "65535 0", "-1 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, err := ParsePortRange(s)
		if err == nil && (lo < 0 || hi > 65535 || lo > hi) {
			t.Fatalf("ParsePortRange(%q) = %d-%d, not a port range", s, lo, hi)
		}
	})
}
