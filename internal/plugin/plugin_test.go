package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// result is one in-process run of the plugin.
type result struct {
	code        int
	out, errOut string
}

// run runs kubectl-edgeplane in-process against envtest, as kubectl would
// run the binary: with a kubeconfig file.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if len(args) > 0 && args[0] != "convert" && !strings.HasPrefix(args[0], "-") && args[0] != "help" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	var out, errOut bytes.Buffer
	code := Run(testenv.Context(t), args, genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "no arguments", args: nil, wantCode: ExitUsage, wantErr: "Commands:"},
		{name: "help", args: []string{"--help"}, wantCode: ExitOK, wantOut: "kubectl edgeplane <command>"},
		{name: "help verb", args: []string{"help", "orphans"}, wantCode: ExitOK, wantOut: "--grace-period"},
		{name: "unknown verb", args: []string{"statsu"}, wantCode: ExitUsage, wantErr: `unknown command "statsu"`},
		{name: "verb help", args: []string{"status", "--help"}, wantCode: ExitOK, wantOut: "--all-namespaces"},
		{name: "verb help lists kubeconfig flags", args: []string{"orphans", "-h"}, wantCode: ExitOK, wantOut: "--kubeconfig"},
		{name: "convert help", args: []string{"convert", "--help"}, wantCode: ExitOK, wantOut: "--filename"},
		{name: "unknown flag", args: []string{"status", "--frobnicate"}, wantCode: ExitUsage, wantErr: "unknown flag: --frobnicate"},
		{name: "extra argument", args: []string{"status", "pods"}, wantCode: ExitUsage, wantErr: "unexpected arguments: pods"},
		{name: "bad output", args: []string{"status", "-o", "xml"}, wantCode: ExitUsage, wantErr: `unknown output format "xml"`},
		{name: "convert without files", args: []string{"convert"}, wantCode: ExitUsage, wantErr: "at least one -f"},
		{name: "convert bad output", args: []string{"convert", "-f", "-", "-o", "wide"}, wantCode: ExitUsage, wantErr: `unknown output format "wide"`},
		// Arguments may follow the flags, as with kubectl: these reach the
		// lookup (and find nothing) instead of failing as usage errors.
		{name: "why, flags first", args: []string{"why", "-n", "default", "pod/nope"}, wantCode: ExitError, wantErr: `"nope" not found`},
		{name: "release, flags first", args: []string{"release", "-n", "default", "--keep-cloud", "podelasticip", "nope"}, wantCode: ExitError, wantErr: `"nope" not found`},
		{name: "why without an object", args: []string{"why", "-n", "default"}, wantCode: ExitUsage, wantErr: "want one object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.wantCode || !strings.Contains(r.out, tc.wantOut) || !strings.Contains(r.errOut, tc.wantErr) {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout containing %q, stderr containing %q",
					r.code, r.out, r.errOut, tc.wantCode, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// decodeList reads a -o json v1 List.
func decodeList(t *testing.T, s string) []map[string]any {
	t.Helper()
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("not a v1 List: %s/%s", list.APIVersion, list.Kind)
	}
	return list.Items
}

func ctx(t *testing.T) context.Context { return testenv.Context(t) }

func ioStreams(out, errOut *strings.Builder) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
}

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }
