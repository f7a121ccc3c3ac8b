package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []string // kind/name@document.item
		wantErr string
	}{
		{name: "empty", in: "", want: nil},
		{name: "comments and separators only", in: "# hi\n---\n# more\n---\n", want: nil},
		{name: "two documents", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n",
			want: []string{"Pod/a@1.0", "Node/b@2.0"}},
		{name: "leading separator", in: "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", want: []string{"Pod/a@1.0"}},
		{name: "json", in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`, want: []string{"ConfigMap/c@1.0"}},
		{name: "json stream", in: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}`, want: []string{"Pod/a@1.0", "Pod/b@1.0"}},
		{name: "yaml flow mapping", in: "{apiVersion: v1, kind: Pod, metadata: {name: a}}\n", want: []string{"Pod/a@1.0"}},
		{name: "bad json stream", in: `{"apiVersion":"v1","kind":"Pod"} {"kind":`, wantErr: "JSON object 2"},
		{name: "list", in: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n",
			want: []string{"Pod/a@1.1", "Pod/b@1.2"}},
		{name: "typed list", in: "apiVersion: v1\nkind: PodList\nitems: []\n", want: nil},
		{name: "missing kind", in: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "- document 1: kind is missing"},
		{name: "bad second document", in: "apiVersion: v1\nkind: Pod\n---\nkind: [\n", wantErr: "- document 2:"},
		{name: "scalar document", in: "just a string\n", wantErr: "document 1"},
		{name: "numeric name", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: 3}\n", wantErr: "metadata.name is not a string"},
		{name: "non-string annotation", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {x: 1}}\n", wantErr: `metadata.annotations["x"] is not a string`},
		{name: "bad list item", in: "apiVersion: v1\nkind: List\nitems: [3]\n", wantErr: "items[0] is not an object"},
		{name: "nested list", in: "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: List, items: []}]\n", wantErr: "nested lists"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Read("-", strings.NewReader(tc.in))
			if tc.wantErr != "" {
				var merr *Error
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &merr) {
					t.Fatalf("Read() error = %v, want an *Error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read() error = %v", err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.Object.GetKind()+"/"+o.Object.GetName()+"@"+itoa(o.Document)+"."+itoa(o.Item))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Read() (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")
	write("b.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}`)
	write("notes.txt", "not a manifest")
	objs, err := ReadFiles([]string{dir, "-", a}, strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, filepath.Base(o.Source)+":"+o.Object.GetName())
	}
	if diff := cmp.Diff([]string{"a.yaml:a", "b.json:b", "-:s", "a.yaml:a"}, got); diff != "" {
		t.Errorf("ReadFiles (-want +got):\n%s", diff)
	}
	if _, err := ReadFiles([]string{"-", "-"}, strings.NewReader("")); err == nil {
		t.Error("stdin twice: want an error")
	}
	if _, err := ReadFiles([]string{filepath.Join(dir, "missing.yaml")}, nil); err == nil {
		t.Error("missing file: want an error")
	}
	bad := write("bad.yaml", "apiVersion: v1\nkind: Pod\n---\n- 1\n")
	if _, err := ReadFiles([]string{bad}, nil); err == nil || !strings.Contains(err.Error(), "bad.yaml document 2") {
		t.Errorf("malformed file: error = %v, want the file and document index", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod}]\n")
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"v"}}`)
	f.Add("# only a comment\n---\n")
	f.Add("kind: [\n")
	f.Fuzz(func(t *testing.T, in string) {
		objs, err := Read("fuzz", strings.NewReader(in))
		if err != nil {
			var merr *Error
			if !errors.As(err, &merr) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		for _, o := range objs {
			if o.Object.GetAPIVersion() == "" || o.Object.GetKind() == "" {
				t.Fatalf("object without apiVersion or kind: %v", o.Object.Object)
			}
			_ = o.Object.GetName()
			_ = o.Object.GetAnnotations()
			_ = o.Object.GetLabels()
		}
	})
}
