package localcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeFlags(t *testing.T) {
	defaults := []string{"--controllers=*,-nodeipam", "--leader-elect=false", "-c", "--v=0"}
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{"no extras", nil, defaults},
		{"appends new flags", []string{"--feature-gates=A=true"},
			[]string{"--controllers=*,-nodeipam", "--leader-elect=false", "-c", "--v=0", "--feature-gates=A=true"}},
		{"replaces a default by name", []string{"--controllers=*"},
			[]string{"--leader-elect=false", "-c", "--v=0", "--controllers=*"}},
		{"single dash and bare flags match too", []string{"-v=4", "--c"},
			[]string{"--controllers=*,-nodeipam", "--leader-elect=false", "-v=4", "--c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergeFlags(defaults, tt.extra)); diff != "" {
				t.Errorf("mergeFlags (-want +got):\n%s", diff)
			}
		})
	}
}
