// Package convert turns legacy manifests into edgeplane CRs for GitOps
// repositories: `kubectl edgeplane convert`. Each legacy input kind is one
// registered Converter; the conversions themselves are the translators' pure
// functions (internal/controller/.../translate, .../importer), so a
// converted manifest is exactly what the in-cluster translator would create.
//
// The output is stable (sorted by API group, kind, namespace, name) and
// carries no status or server-set metadata, so it diffs well.
package convert

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/translate"
	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
)

// AnnotationConvertedFrom records, on every converted CR, the legacy object
// it came from: "<Kind>/<namespace>/<name>" or "<Kind>/<name>". Unlike the
// in-cluster translator's labels it does not mark the CR as translated, so
// the translator treats it as hand-made and never changes or deletes it.
const AnnotationConvertedFrom = "edgeplane.io/converted-from"

// Context is what converters share during one run.
type Context struct {
	// Pools are the FloatIPPools converted so far (from floatingip-config
	// and galaxy Pools), for converters of a later phase.
	Pools []translate.Pool
	// KubeIP are the kubeip agents (DaemonSets) converted so far, for the
	// nodes they serve.
	KubeIP []KubeIPAgent
	// notes are warnings reported once per run (after every object).
	notes map[string]bool
}

// Note records a warning that is printed once, however many objects cause it.
func (c *Context) Note(msg string) {
	if c.notes == nil {
		c.notes = map[string]bool{}
	}
	c.notes[msg] = true
}

// Converter converts one legacy input kind.
type Converter struct {
	// Name describes the input, for messages (e.g. "mumoshu IngressDaemonSet").
	Name string
	// Phase orders converters: every object of phase 0 is converted before
	// any object of phase 1, so a later converter can use what earlier ones
	// put in the Context.
	Phase int
	// Match reports whether the object is this converter's input.
	Match func(obj *unstructured.Unstructured) bool
	// Convert returns the CRs for obj and warnings about what it adjusted.
	// An error means obj is a legacy input that cannot be converted.
	Convert func(c *Context, obj *unstructured.Unstructured) ([]client.Object, []string, error)
}

// Result is the outcome of a run.
type Result struct {
	// Objects are the converted CRs, sorted, cleaned for a GitOps repo.
	Objects []*unstructured.Unstructured
	// Warnings are for stderr: skipped inputs and adjusted fields.
	Warnings []string
}

// Run converts objs with the converters (the first match wins). Inputs
// that no converter matches are skipped with a warning; a matched input
// that does not convert is an error naming its file and document.
func Run(scheme *runtime.Scheme, converters []Converter, objs []manifest.Object) (Result, error) {
	var res Result
	cctx := &Context{}
	type job struct {
		idx  int
		in   manifest.Object
		conv *Converter
	}
	type warning struct {
		idx int
		msg string
	}
	var warnings []warning
	var jobs []job
	for idx, in := range objs {
		var conv *Converter
		for i := range converters {
			if converters[i].Match(in.Object) {
				conv = &converters[i]
				break
			}
		}
		if conv == nil {
			why := "not a legacy input edgeplane converts"
			if gv, err := schema.ParseGroupVersion(in.Object.GetAPIVersion()); err == nil && strings.HasSuffix(gv.Group, ".edgeplane.io") {
				why = "already an edgeplane object"
			}
			warnings = append(warnings, warning{idx, fmt.Sprintf("%s: %s %s skipped: %s", in.Where(), kindOf(in.Object), nameOf(in.Object), why)})
			continue
		}
		jobs = append(jobs, job{idx, in, conv})
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(a.conv.Phase, b.conv.Phase) })

	seen := map[string]string{}
	for _, j := range jobs {
		out, warns, err := j.conv.Convert(cctx, j.in.Object)
		if err != nil {
			return res, fmt.Errorf("%s: %s %s: %w", j.in.Where(), j.conv.Name, nameOf(j.in.Object), err)
		}
		for _, w := range warns {
			warnings = append(warnings, warning{j.idx, fmt.Sprintf("%s: %s %s: %s", j.in.Where(), kindOf(j.in.Object), nameOf(j.in.Object), w)})
		}
		for _, o := range out {
			u, err := Clean(scheme, o)
			if err != nil {
				return res, fmt.Errorf("%s: %w", j.in.Where(), err)
			}
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[AnnotationConvertedFrom] = sourceKey(j.in.Object)
			u.SetAnnotations(ann)
			key := u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
			if prev, dup := seen[key]; dup {
				warnings = append(warnings, warning{j.idx, fmt.Sprintf("%s: %s %s skipped: %s already produced it", j.in.Where(), u.GetKind(), nameOf(u), prev)})
				continue
			}
			seen[key] = j.in.Where()
			res.Objects = append(res.Objects, u)
		}
	}
	// Warnings in input order, then the notes.
	slices.SortStableFunc(warnings, func(a, b warning) int { return cmp.Compare(a.idx, b.idx) })
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, w.msg)
	}
	res.Warnings = append(res.Warnings, slices.Sorted(maps.Keys(cctx.notes))...)
	Sort(res.Objects)
	return res, nil
}

// Sort orders objects by API group, kind, namespace and name.
func Sort(objs []*unstructured.Unstructured) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
		return cmp.Or(cmp.Compare(ga.Group, gb.Group), cmp.Compare(ga.Kind, gb.Kind),
			cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

// Clean turns a typed object into the manifest a GitOps repository holds:
// apiVersion and kind set, and no status or server-set metadata.
func Clean(scheme *runtime.Scheme, obj client.Object) (*unstructured.Unstructured, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		var err error
		if gvk, err = apiutil.GVKForObject(obj, scheme); err != nil {
			return nil, fmt.Errorf("finding the kind of %s: %w", obj.GetName(), err)
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	delete(u.Object, "status")
	for _, f := range []string{"creationTimestamp", "managedFields", "uid", "resourceVersion", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u, nil
}

// WriteYAML writes objs as a multi-document YAML stream.
func WriteYAML(w io.Writer, objs []*unstructured.Unstructured) error {
	for i, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return fmt.Errorf("writing: %w", err)
			}
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("writing: %w", err)
		}
	}
	return nil
}

func kindOf(u *unstructured.Unstructured) string {
	return u.GetAPIVersion() + "/" + u.GetKind()
}

func nameOf(u client.Object) string {
	if u.GetName() == "" {
		return "(unnamed)"
	}
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

func sourceKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + "/" + u.GetName()
	}
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// isKind matches group (any version) and kind.
func isKind(u *unstructured.Unstructured, group, kind string) bool {
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	return err == nil && gv.Group == group && u.GetKind() == kind
}

var errNoName = errors.New("metadata.name is missing")

// requireName is the minimum every converted input needs.
func requireName(u *unstructured.Unstructured) error {
	if strings.TrimSpace(u.GetName()) == "" {
		return errNoName
	}
	return nil
}
