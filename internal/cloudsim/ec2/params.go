package ec2

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// maxListIndex bounds the N in "Name.N": EC2 lists are short, and a bound
// keeps a hostile request from making the decoder allocate per index.
const maxListIndex = 1000

// Params is a decoded EC2 Query request: flat form values with helpers for
// EC2's 1-indexed list encoding ("Filter.1.Name", "Filter.1.Value.1"). Every
// accessor marks the keys it read, so an action can reject parameters it does
// not know (UnknownParameter) after reading the ones it does.
type Params struct {
	values url.Values
	used   map[string]bool
}

// ParamError is a malformed request; it maps to an EC2 client error.
type ParamError struct {
	Code    string
	Message string
}

func (e *ParamError) Error() string { return e.Code + ": " + e.Message }

func paramErr(code, format string, args ...any) *ParamError {
	return &ParamError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ignoredParams are protocol parameters that are not action inputs: the
// action and version, and query-string authentication (SigV2 and presigned
// SigV4), which the emulator does not verify.
var ignoredParams = []string{
	"Action", "Version",
	"AWSAccessKeyId", "SignatureMethod", "SignatureVersion", "Signature", "Timestamp", "Expires", "SecurityToken",
	"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Security-Token", "X-Amz-Expires",
}

// DecodeParams parses a form body (or query string) into Params. It rejects
// what EC2 rejects before looking at the action: repeated keys and keys that
// are not printable ASCII.
func DecodeParams(raw string) (*Params, error) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, paramErr("MalformedQueryString", "the request body is not a valid form: %v", err)
	}
	return NewParams(values)
}

// NewParams validates already-parsed values.
func NewParams(values url.Values) (*Params, error) {
	for k, vs := range values {
		if k == "" {
			return nil, paramErr("MalformedQueryString", "empty parameter name")
		}
		for i := 0; i < len(k); i++ {
			if k[i] <= 0x20 || k[i] >= 0x7f {
				return nil, paramErr("MalformedQueryString", "parameter name %q is not printable ASCII", k)
			}
		}
		if len(vs) > 1 {
			return nil, paramErr(core.EC2InvalidParameterValue, "parameter %s is given %d times", k, len(vs))
		}
	}
	p := &Params{values: values, used: map[string]bool{}}
	for _, k := range ignoredParams {
		p.used[k] = true
	}
	return p, nil
}

// Action is the Action parameter.
func (p *Params) Action() string { return p.values.Get("Action") }

// Version is the Version parameter.
func (p *Params) Version() string { return p.values.Get("Version") }

// Has reports whether name was sent.
func (p *Params) Has(name string) bool {
	_, ok := p.values[name]
	return ok
}

// HasPrefix reports whether any parameter "<prefix>.…" was sent.
func (p *Params) HasPrefix(prefix string) bool {
	for k := range p.values {
		if strings.HasPrefix(k, prefix+".") {
			return true
		}
	}
	return false
}

// String returns a scalar parameter ("" when absent).
func (p *Params) String(name string) string {
	p.used[name] = true
	return p.values.Get(name)
}

// Bool returns a boolean parameter, nil when absent.
func (p *Params) Bool(name string) (*bool, error) {
	p.used[name] = true
	v, ok := p.values[name]
	if !ok {
		return nil, nil
	}
	switch strings.ToLower(v[0]) {
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	}
	return nil, paramErr(core.EC2InvalidParameterValue, "Value (%s) for parameter %s is invalid. Expected: 'true' or 'false'.", v[0], name)
}

// Int returns an integer parameter, 0 when absent.
func (p *Params) Int(name string) (int, error) {
	p.used[name] = true
	v, ok := p.values[name]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil {
		return 0, paramErr(core.EC2InvalidParameterValue, "Value (%s) for parameter %s is invalid. Expected an integer.", v[0], name)
	}
	return n, nil
}

// indices returns the sorted distinct N of keys "<prefix>.N" and
// "<prefix>.N.…".
func (p *Params) indices(prefix string) ([]int, error) {
	seen := map[int]bool{}
	for k := range p.values {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > maxListIndex || strconv.Itoa(n) != num {
			return nil, paramErr(core.EC2InvalidParameterValue, "parameter %s has an invalid list index %q (want 1 to %d)", k, num, maxListIndex)
		}
		seen[n] = true
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// List returns the values of "<prefix>.N" in index order.
func (p *Params) List(prefix string) ([]string, error) {
	idx, err := p.indices(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(idx))
	for _, n := range idx {
		key := prefix + "." + strconv.Itoa(n)
		if !p.Has(key) {
			return nil, paramErr(core.EC2InvalidParameterValue, "parameter %s.%d is not a scalar", prefix, n)
		}
		out = append(out, p.String(key))
	}
	return out, nil
}

// Filters decodes "Filter.N.Name" / "Filter.N.Value.M".
func (p *Params) Filters() ([]core.Filter, error) {
	idx, err := p.indices("Filter")
	if err != nil {
		return nil, err
	}
	out := make([]core.Filter, 0, len(idx))
	for _, n := range idx {
		base := "Filter." + strconv.Itoa(n)
		name := p.String(base + ".Name")
		if name == "" {
			return nil, paramErr(core.EC2InvalidParameterValue, "The filter 'null' is invalid")
		}
		values, err := p.List(base + ".Value")
		if err != nil {
			return nil, err
		}
		out = append(out, core.Filter{Name: name, Values: values})
	}
	return out, nil
}

// Tags decodes "<prefix>.N.Key" / "<prefix>.N.Value".
func (p *Params) Tags(prefix string) ([]core.Tag, error) {
	idx, err := p.indices(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]core.Tag, 0, len(idx))
	for _, n := range idx {
		base := prefix + "." + strconv.Itoa(n)
		if !p.Has(base + ".Key") {
			return nil, paramErr(core.EC2MissingParameter, "The request must contain the parameter %s.Key", base)
		}
		out = append(out, core.Tag{Key: p.String(base + ".Key"), Value: p.String(base + ".Value")})
	}
	return out, nil
}

// DeleteTags decodes DeleteTags' "Tag.N.Key" / optional "Tag.N.Value".
func (p *Params) DeleteTags() ([]core.EC2DeleteTag, error) {
	idx, err := p.indices("Tag")
	if err != nil {
		return nil, err
	}
	out := make([]core.EC2DeleteTag, 0, len(idx))
	for _, n := range idx {
		base := "Tag." + strconv.Itoa(n)
		if !p.Has(base + ".Key") {
			return nil, paramErr(core.EC2MissingParameter, "The request must contain the parameter %s.Key", base)
		}
		d := core.EC2DeleteTag{Key: p.String(base + ".Key")}
		if p.Has(base + ".Value") {
			v := p.String(base + ".Value")
			d.Value = &v
		}
		out = append(out, d)
	}
	return out, nil
}

// TagSpecifications decodes "TagSpecification.N.ResourceType" and
// "TagSpecification.N.Tag.M.Key/Value".
func (p *Params) TagSpecifications() ([]core.EC2TagSpec, error) {
	idx, err := p.indices("TagSpecification")
	if err != nil {
		return nil, err
	}
	out := make([]core.EC2TagSpec, 0, len(idx))
	for _, n := range idx {
		base := "TagSpecification." + strconv.Itoa(n)
		tags, err := p.Tags(base + ".Tag")
		if err != nil {
			return nil, err
		}
		out = append(out, core.EC2TagSpec{ResourceType: p.String(base + ".ResourceType"), Tags: tags})
	}
	return out, nil
}

// Unknown returns an UnknownParameter error for the first (sorted) key no
// accessor has read.
func (p *Params) Unknown() error {
	var unknown []string
	for k := range p.values {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return paramErr(core.EC2UnknownParameter, "The parameter %s is not recognized", unknown[0])
}
