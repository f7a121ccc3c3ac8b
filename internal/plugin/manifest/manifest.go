// Package manifest reads Kubernetes manifests the way kubectl does: YAML or
// JSON, several documents per stream, and List kinds (the output of
// `kubectl get -o yaml`) flattened into their items. It is the user-input
// parser of `kubectl edgeplane convert`, kept pure so it can be fuzzed.
package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Stdin is the file name that means standard input.
const Stdin = "-"

// Object is one manifest read from a stream.
type Object struct {
	// Source is the file it came from ("-" for standard input).
	Source string
	// Document is its 1-based position among the stream's documents.
	Document int
	// Item is its 1-based position in a List document; 0 when the document
	// is not a List.
	Item int
	// Object is the manifest.
	Object *unstructured.Unstructured
}

// Where describes the object's position for messages: "file.yaml document 2"
// or "file.yaml document 2 item 3".
func (o Object) Where() string {
	if o.Item > 0 {
		return fmt.Sprintf("%s document %d item %d", o.Source, o.Document, o.Item)
	}
	return fmt.Sprintf("%s document %d", o.Source, o.Document)
}

// Error is a malformed document.
type Error struct {
	Source   string
	Document int
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s document %d: %v", e.Source, e.Document, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// maxDocument bounds one document (the decoder buffers it whole).
const maxDocument = 16 << 20

// Read reads every object of r. source names r in messages. Empty documents
// (comments only, "---" at the start or end) are skipped; a document that is
// not an object with apiVersion and kind, or a List whose items are not, is
// an *Error.
func Read(source string, r io.Reader) ([]Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReaderSize(r, 64<<10))
	var out []Object
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &Error{Source: source, Document: doc, Err: err}
		}
		if len(raw) > maxDocument {
			return nil, &Error{Source: source, Document: doc, Err: fmt.Errorf("document larger than %d bytes", maxDocument)}
		}
		objs, err := decodeDocument(raw)
		if err != nil {
			return nil, &Error{Source: source, Document: doc, Err: err}
		}
		for i, o := range objs {
			item := 0
			if o.fromList {
				item = i + 1
			}
			out = append(out, Object{Source: source, Document: doc, Item: item, Object: o.obj})
		}
	}
}

type decoded struct {
	obj      *unstructured.Unstructured
	fromList bool
}

// decodeDocument decodes one YAML document, or a stream of JSON objects
// (`{...}{...}`, as concatenated `kubectl get -o json` outputs give). A
// document whose first value is not valid JSON is read as YAML (a flow
// mapping also starts with "{").
func decodeDocument(raw []byte) ([]decoded, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return decode(raw)
	}
	var values []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var m json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(values) == 0 {
				return decode(raw)
			}
			return nil, fmt.Errorf("JSON object %d: %w", len(values)+1, err)
		}
		values = append(values, m)
	}
	var out []decoded
	for _, v := range values {
		objs, err := decode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// decode turns one document into objects: none for an empty document, the
// items of a List, or the object itself.
func decode(raw []byte) ([]decoded, error) {
	if strings.TrimSpace(stripComments(string(raw))) == "" {
		return nil, nil
	}
	var m map[string]any
	if err := utilyaml.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{Object: m}
	if err := check(u); err != nil {
		return nil, err
	}
	if !u.IsList() {
		return []decoded{{obj: u}}, nil
	}
	items, _ := m["items"].([]any)
	out := make([]decoded, 0, len(items))
	for i, it := range items {
		im, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("items[%d] is not an object", i)
		}
		o := &unstructured.Unstructured{Object: im}
		if err := check(o); err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		if o.IsList() {
			return nil, fmt.Errorf("items[%d]: nested lists are not supported", i)
		}
		out = append(out, decoded{obj: o, fromList: true})
	}
	return out, nil
}

// check requires what every manifest has: a string apiVersion and kind, and
// string name and namespace when present.
func check(u *unstructured.Unstructured) error {
	for _, f := range []string{"apiVersion", "kind"} {
		v, ok := u.Object[f].(string)
		if !ok || v == "" {
			return fmt.Errorf("%s is missing or not a string", f)
		}
	}
	if md, ok := u.Object["metadata"]; ok && md != nil {
		mm, ok := md.(map[string]any)
		if !ok {
			return errors.New("metadata is not an object")
		}
		for _, f := range []string{"name", "namespace"} {
			if v, ok := mm[f]; ok && v != nil {
				if _, ok := v.(string); !ok {
					return fmt.Errorf("metadata.%s is not a string", f)
				}
			}
		}
		for _, f := range []string{"labels", "annotations"} {
			if v, ok := mm[f]; ok && v != nil {
				m, ok := v.(map[string]any)
				if !ok {
					return fmt.Errorf("metadata.%s is not a map", f)
				}
				for k, val := range m {
					if _, ok := val.(string); !ok {
						return fmt.Errorf("metadata.%s[%q] is not a string", f, k)
					}
				}
			}
		}
	}
	return nil
}

// stripComments drops YAML comment lines, so a document made only of
// comments is empty.
func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// ReadFiles reads each file in order ("-" is stdin, read at most once; a
// directory contributes its *.yaml, *.yml and *.json files in name order).
func ReadFiles(files []string, stdin io.Reader) ([]Object, error) {
	var out []Object
	stdinRead := false
	for _, f := range files {
		var objs []Object
		var err error
		if f == Stdin {
			if stdinRead {
				return nil, errors.New("standard input (-f -) given more than once")
			}
			stdinRead = true
			objs, err = Read(Stdin, stdin)
		} else {
			objs, err = readPath(f)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func readPath(name string) ([]Object, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	if !st.IsDir() {
		return readFile(name)
	}
	entries, err := os.ReadDir(name)
	if err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	var out []Object
	for _, e := range entries { // ReadDir sorts by name
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		objs, err := readFile(filepath.Join(name, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func readFile(name string) ([]Object, error) {
	f, err := os.Open(name) //nolint:gosec // reading the files the user names is the command's job
	if err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	defer func() { _ = f.Close() }()
	return Read(name, f)
}
