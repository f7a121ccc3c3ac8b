package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("250ms", "2s") in JSON and YAML; a bare JSON number is taken as
// nanoseconds.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON accepts "1.5s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("parsing duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration must be a string like \"2s\" or a number of nanoseconds: %w", err)
	}
	*d = Duration(n)
	return nil
}

// Tag is one key/value pair as both clouds model it.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// sortedTags turns a tag map into a slice ordered by key, so every response
// and snapshot is deterministic.
func sortedTags(m map[string]string) []Tag {
	if len(m) == 0 {
		return nil
	}
	out := make([]Tag, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Tag{Key: k, Value: m[k]})
	}
	return out
}

// Filter is a name with a list of accepted values (EC2 Filter.N and Tencent
// Filters share this shape).
type Filter struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// globMatch implements the EC2 filter wildcard syntax: '*' matches any run of
// characters (including none) and '?' exactly one; there is no escaping
// beyond a backslash before '*', '?' or '\'.
func globMatch(pattern, s string) bool {
	if !strings.ContainsAny(pattern, `*?\`) {
		return pattern == s
	}
	return globMatchRunes([]rune(pattern), []rune(s))
}

func globMatchRunes(p, s []rune) bool {
	// Iterative matcher with single-star backtracking: linear in practice and
	// never recursive, so a hostile filter value cannot blow the stack.
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				starP, starS = pi, si
				pi++
				continue
			case c == '?':
				pi++
				si++
				continue
			case c == '\\' && pi+1 < len(p):
				if p[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			case c == s[si]:
				pi++
				si++
				continue
			}
		}
		if starP >= 0 {
			starS++
			pi, si = starP+1, starS
			continue
		}
		return false
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// anyGlob reports whether s matches any of the patterns.
func anyGlob(patterns []string, s string) bool {
	for _, p := range patterns {
		if globMatch(p, s) {
			return true
		}
	}
	return false
}

// anyEqual reports whether s equals any of the values (Tencent filters match
// exactly; they have no wildcard syntax).
func anyEqual(values []string, s string) bool {
	return slices.Contains(values, s)
}
