package decide

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// TestDecideSwitch encodes all nine rows of the legacy chart v1.0.0 table
// (LocalOverride), as edgeplane reads them.
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
			if diff := cmp.Diff(tc.want, DecideSwitch(schedulingv1alpha1.SwitchTableLocalOverride, tc.global, tc.local)); diff != "" {
				t.Errorf("DecideSwitch (-want +got):\n%s", diff)
			}
		})
	}
}

// seedSwitchTable is section 2 of the TKE resilience documentation (the
// chart's README before v1.0.0, and the product docs), its nine rows copied
// literally: global switch, local switch, behaviour. 未定义 is "unset",
// 调度成功 "scheduled" (the pod bursts when local room is short), 调度失败
// "not scheduled".
var seedSwitchTable = []string{
	"| `AUTO_SCALE_EKS=true`  | `AUTO_SCALE_EKS=false` | `调度成功` |",
	"| `AUTO_SCALE_EKS=true`  | `未定义`               | `调度成功` |",
	"| `AUTO_SCALE_EKS=true`  | `AUTO_SCALE_EKS=true`  | `调度成功` |",
	"| `AUTO_SCALE_EKS=false` | `AUTO_SCALE_EKS=false` | `调度失败` |",
	"| `AUTO_SCALE_EKS=false` | `未定义`               | `调度失败` |",
	"| `AUTO_SCALE_EKS=false` | `AUTO_SCALE_EKS=true`  | `调度成功` |",
	"| `未定义`               | `AUTO_SCALE_EKS=false` | `调度成功` |",
	"| `未定义`               | `未定义`               | `调度成功` |",
	"| `未定义`               | `AUTO_SCALE_EKS=true`  | `调度成功` |",
}

// chartV1SwitchTable is the table of the chart v1.0.0 README, its nine rows
// copied literally: global, local, burst to EKS, LOCAL_REPLICAS effective.
var chartV1SwitchTable = []string{
	"| true | false | no | no |",
	"| true | unset | yes | yes (local over global) |",
	"| true | true | yes | yes |",
	"| false | false | no | no |",
	"| false | unset | no | no |",
	"| false | true | yes | yes |",
	"| unset | false | no | no |",
	"| unset | unset | yes | no |",
	"| unset | true | yes | yes |",
}

// parseTableRow splits a markdown table row into its trimmed cells, with
// the code quotes removed.
func parseTableRow(row string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(row), "|"), "|")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), "`")
	}
	return parts
}

// legacySwitch reads a switch cell of either table.
func legacySwitch(t *testing.T, cell string) *bool {
	t.Helper()
	switch cell {
	case "AUTO_SCALE_EKS=true", "true":
		return ptr.To(true)
	case "AUTO_SCALE_EKS=false", "false":
		return ptr.To(false)
	case "未定义", "unset":
		return nil
	}
	t.Fatalf("unknown switch cell %q", cell)
	return nil
}

// legacyOutcome reads an outcome cell of either table.
func legacyOutcome(t *testing.T, cell string) bool {
	t.Helper()
	switch {
	case cell == "调度成功", strings.HasPrefix(cell, "yes"):
		return true
	case cell == "调度失败", cell == "no":
		return false
	}
	t.Fatalf("unknown outcome cell %q", cell)
	return false
}

// TestDecideSwitchLegacyTables checks all nine rows of each documented
// table: the documentation's under LocalOptIn, chart v1.0.0's under
// LocalOverride. The documentation has no floor column: its LOCAL_REPLICAS
// applies whenever the workload bursts (feature 4: "满足全局和局部开关中
// 调度成功的行为设定").
func TestDecideSwitchLegacyTables(t *testing.T) {
	for _, tc := range []struct {
		table schedulingv1alpha1.LegacySwitchTable
		rows  []string
		cells int
	}{
		{schedulingv1alpha1.SwitchTableLocalOptIn, seedSwitchTable, 3},
		{schedulingv1alpha1.SwitchTableLocalOverride, chartV1SwitchTable, 4},
	} {
		if len(tc.rows) != 9 {
			t.Fatalf("the %s table has %d rows, want 9", tc.table, len(tc.rows))
		}
		for _, row := range tc.rows {
			t.Run(string(tc.table)+" "+row, func(t *testing.T) {
				c := parseTableRow(row)
				if len(c) != tc.cells {
					t.Fatalf("row has %d cells, want %d", len(c), tc.cells)
				}
				burst := legacyOutcome(t, c[2])
				want := Switch{Burst: burst, LocalReplicasEffective: burst}
				if tc.cells == 4 {
					want.LocalReplicasEffective = legacyOutcome(t, c[3])
				}
				if got := DecideSwitch(tc.table, legacySwitch(t, c[0]), legacySwitch(t, c[1])); got != want {
					t.Errorf("DecideSwitch(%s) = %+v, want %+v", tc.table, got, want)
				}
			})
		}
	}
}

// TestDecideSwitchTablesDiffer: the two tables disagree exactly on the two
// rows where the local switch is false and the global one is not.
func TestDecideSwitchTablesDiffer(t *testing.T) {
	var differ []string
	for _, global := range []*bool{ptr.To(true), ptr.To(false), nil} {
		for _, local := range []*bool{ptr.To(true), ptr.To(false), nil} {
			a := DecideSwitch(schedulingv1alpha1.SwitchTableLocalOptIn, global, local).Burst
			b := DecideSwitch(schedulingv1alpha1.SwitchTableLocalOverride, global, local).Burst
			if a != b {
				differ = append(differ, fmt.Sprintf("global %s local %s", fmtSwitch(global), fmtSwitch(local)))
			}
		}
	}
	want := []string{"global true local false", "global unset local false"}
	if diff := cmp.Diff(want, differ); diff != "" {
		t.Errorf("rows where the tables differ (-want +got):\n%s", diff)
	}
}

func fmtSwitch(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
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
