package manager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnabledControllers(t *testing.T) {
	all := []Controller{{Name: "a"}, {Name: "b"}, {Name: "c", DisabledByDefault: true}}
	cases := map[string]struct {
		flag    []string
		want    []string
		wantErr bool
	}{
		"star enables the defaults":         {flag: []string{"*"}, want: []string{"a", "b"}},
		"star plus an opt-in":               {flag: []string{"*", "c"}, want: []string{"a", "b", "c"}},
		"star minus one":                    {flag: []string{"*", "-a"}, want: []string{"b"}},
		"minus wins wherever it stands":     {flag: []string{"-a", "*", "a"}, want: []string{"b"}},
		"only named":                        {flag: []string{"b"}, want: []string{"b"}},
		"empty entries and spaces":          {flag: []string{" b ", ""}, want: []string{"b"}},
		"nothing named enables nothing":     {flag: nil, want: nil},
		"unknown name is an error":          {flag: []string{"*", "nope"}, wantErr: true},
		"unknown disabled name is an error": {flag: []string{"-nope"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EnabledControllers(all, tc.flag)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("enabled controllers (-want +got):\n%s", diff)
			}
		})
	}
}
