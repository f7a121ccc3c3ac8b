package status

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// fixtureRows reads testdata/objects.yaml and computes the rows, as Collect
// does after listing.
func fixtureRows(t *testing.T) []Row {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	objs, err := manifest.Read("objects.yaml", f)
	if err != nil {
		t.Fatal(err)
	}
	known := Kinds()
	var rows []Row
	for _, o := range objs {
		k, order := Kind{}, len(known)
		for i, kk := range known {
			if kk.Kind == o.Object.GetKind() {
				k, order = kk, i
			}
		}
		r := RowFor(k, o.Object)
		r.order = order
		rows = append(rows, r)
	}
	SortRows(rows)
	return rows
}

func TestPrintTable(t *testing.T) {
	rows := fixtureRows(t)
	for _, tc := range []struct {
		name string
		wide bool
	}{{"table.golden", false}, {"table-wide.golden", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintTable(&b, rows, tc.wide, now); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
	var b bytes.Buffer
	if err := PrintTable(&b, nil, false, now); err != nil || b.String() != "No edgeplane objects found.\n" {
		t.Errorf("empty table = %q, %v", b.String(), err)
	}
}

func TestRowFor(t *testing.T) {
	obj := func(status map[string]any, generation int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.edgeplane.io/v1", "kind": "Thing", "metadata": map[string]any{"name": "a"}}}
		u.SetGeneration(generation)
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	ready := func(s string, og int64) map[string]any {
		return map[string]any{"conditions": []any{
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError"},
			map[string]any{"type": "Ready", "status": s, "reason": "R", "message": "m", "observedGeneration": og},
		}}
	}
	cases := []struct {
		name string
		u    *unstructured.Unstructured
		want Row
	}{
		{name: "no status", u: obj(nil, 1), want: Row{Kind: "Thing", Name: "a", Ready: "Unknown", Reason: ReasonNoStatus, Message: "no Ready condition: not reconciled yet"}},
		{name: "ready", u: obj(ready("True", 2), 2), want: Row{Kind: "Thing", Name: "a", Ready: "True", Reason: "R", Message: "m"}},
		{name: "not ready", u: obj(ready("False", 2), 2), want: Row{Kind: "Thing", Name: "a", Ready: "False", Reason: "R", Message: "m"}},
		{name: "stale", u: obj(ready("True", 1), 2), want: Row{Kind: "Thing", Name: "a", Ready: "Unknown", Reason: ReasonProgressing,
			Message: "generation 2 not yet reconciled (status is for generation 1)"}},
		{name: "no observed generation anywhere", u: obj(ready("True", 0), 5), want: Row{Kind: "Thing", Name: "a", Ready: "True", Reason: "R", Message: "m"}},
		{name: "managed resource: why is in Synced", u: obj(map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "Creating"},
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "AddressLimitExceeded: quota 5"},
		}}, 1), want: Row{Kind: "Thing", Name: "a", Ready: "False", Reason: "ReconcileError", Message: "AddressLimitExceeded: quota 5"}},
		{name: "managed resource: Ready's own message wins", u: obj(map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "Unavailable", "message": "pod is gone"},
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "boom"},
		}}, 1), want: Row{Kind: "Thing", Name: "a", Ready: "False", Reason: "Unavailable", Message: "pod is gone"}},
		{name: "empty status", u: obj(map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}}, 1), want: Row{Kind: "Thing", Name: "a", Ready: "Unknown"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RowFor(Kind{}, tc.u)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Row{})); diff != "" {
				t.Errorf("RowFor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	rows := fixtureRows(t)
	if got, want := Summary(rows), "11 objects, 5 not Ready"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got := Summary([]Row{{Ready: "True"}}); got != "1 object, 0 not Ready" {
		t.Errorf("Summary = %q", got)
	}
}

func TestKindsAreUnique(t *testing.T) {
	seen := map[schema.GroupResource]bool{}
	for _, k := range Kinds() {
		if seen[k.Resource.GroupResource()] || k.Detail == nil || k.Kind == "" {
			t.Errorf("bad or duplicate entry %+v", k)
		}
		seen[k.Resource.GroupResource()] = true
	}
}
