package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestProcStat(t *testing.T) {
	tests := []struct {
		stat      string
		wantState string
		wantPPID  int
		wantOK    bool
	}{
		{"1234 (localcluster) S 77 1234 77 0 -1", "S", 77, true},
		{"1234 (odd) name (x)) Z 1 1234", "Z", 1, true},
		{"garbage", "", 0, false},
	}
	for _, tt := range tests {
		state, ppid, ok := procStat([]byte(tt.stat))
		if state != tt.wantState || ppid != tt.wantPPID || ok != tt.wantOK {
			t.Errorf("procStat(%q) = %q, %d, %v; want %q, %d, %v", tt.stat, state, ppid, ok, tt.wantState, tt.wantPPID, tt.wantOK)
		}
	}
}

func TestNodeSpecs(t *testing.T) {
	specs := nodeSpecs(2, 1)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"local-1", "local-2", "virtual-1"}, names); diff != "" {
		t.Errorf("node names (-want +got):\n%s", diff)
	}
	virtual := specs[2]
	if got := virtual.Labels[corev1.LabelInstanceTypeStable]; got != "eklet" {
		t.Errorf("virtual node instance type = %q, want eklet", got)
	}
	if got := virtual.Labels["type"]; got != "virtual-kubelet" {
		t.Errorf("virtual node type label = %q, want virtual-kubelet", got)
	}
	wantTaints := []corev1.Taint{{Key: "eks.tke.cloud.tencent.com/eklet", Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(wantTaints, virtual.Taints); diff != "" {
		t.Errorf("virtual node taints (-want +got):\n%s", diff)
	}
	if len(specs[0].Taints) != 0 {
		t.Errorf("worker node has taints %v", specs[0].Taints)
	}
}

func TestReadFlagsFile(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		content string
		want    []string
		wantErr bool
	}{
		"one flag":               {content: "--config=/d/kube-scheduler-config.yaml\n", want: []string{"--config=/d/kube-scheduler-config.yaml"}},
		"blank lines and spaces": {content: "\n  --v=2  \n\n--config=/c\n", want: []string{"--v=2", "--config=/c"}},
		"empty":                  {content: ""},
		"not a flag":             {content: "--v=2\nconfig=/c\n", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readFlagsFile(path)
			if (err != nil) != c.wantErr {
				t.Fatalf("error = %v, want one: %v", err, c.wantErr)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("flags = %q, want %q", got, c.want)
			}
		})
	}
	if _, err := readFlagsFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file read without an error")
	}
}
