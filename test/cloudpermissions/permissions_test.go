// Package cloudpermissions_test checks the cloud permissions each
// cloud-backed kind's page (docs/<kind>.md, section "Cloud permissions")
// gives: its AWS IAM and Tencent Cloud CAM policies must allow exactly the
// SDK actions the kind's code can reach — found in the code, from the
// kind's calls into edgeplane's cloud clients down to the SDK interfaces
// (internal/cloud/aws EC2API, internal/cloud/tencentcloud VPCAPI, TagAPI,
// CVMAPI) — and every write they allow must be scoped by a condition (tags)
// or to the network interfaces and instances an address is associated
// with. A new call without its permission, a permission no call needs, or a
// write left unscoped fails here.
package cloudpermissions_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

const (
	awsPkg     = "github.com/edgeplane/edgeplane/internal/cloud/aws"
	tencentPkg = "github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	ec2SDK     = "github.com/aws/aws-sdk-go-v2/service/ec2"
)

// sdkInterfaces are the SDK interfaces of edgeplane's clients and the
// action prefix of each.
var sdkInterfaces = map[string]string{
	awsPkg + ".EC2API":     "ec2",
	tencentPkg + ".VPCAPI": "vpc",
	tencentPkg + ".TagAPI": "tag",
	tencentPkg + ".CVMAPI": "cvm",
}

// kinds are the cloud-backed kinds, their packages, pages and clouds.
var kinds = []struct {
	name, pkg, page string
	aws, tencent    bool
}{
	{"PodElasticIP", "github.com/edgeplane/edgeplane/internal/controller/podelasticip", "docs/podelasticip.md", true, true},
	{"NodeElasticIP", "github.com/edgeplane/edgeplane/internal/controller/nodeelasticip", "docs/nodeelasticip.md", true, false},
	{"AnycastIPBinding", "github.com/edgeplane/edgeplane/internal/controller/anycastipbinding", "docs/anycastipbinding.md", false, true},
}

func TestEachKindsPageGrantsWhatItsCodeCalls(t *testing.T) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	patterns := []string{awsPkg, tencentPkg}
	for _, k := range kinds {
		patterns = append(patterns, k.pkg)
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  root,
	}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("loading %s: %v", p.PkgPath, p.Errors)
		}
		byPath[p.PkgPath] = p
	}
	reach := clientActions(byPath[awsPkg])
	for f, acts := range clientActions(byPath[tencentPkg]) {
		reach[f] = acts
	}
	if len(reach) == 0 {
		t.Fatal("found no client function reaching the SDK")
	}
	client := func(path string) types.Type {
		return types.NewPointer(byPath[path].Types.Scope().Lookup("Client").Type())
	}

	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var clients []types.Type
			if k.aws {
				clients = append(clients, client(awsPkg))
			}
			if k.tencent {
				clients = append(clients, client(tencentPkg))
			}
			calls := kindActions(byPath[k.pkg], reach, clients)
			page, err := os.ReadFile(filepath.Join(root, k.page))
			if err != nil {
				t.Fatal(err)
			}
			aws, cam := policies(t, string(page))
			for _, c := range []struct {
				cloud    string
				want     bool
				prefixes []string
				policy   []statement
			}{
				{"AWS IAM", k.aws, []string{"ec2"}, aws},
				{"Tencent Cloud CAM", k.tencent, []string{"vpc", "tag", "cvm"}, cam},
			} {
				code := sets.New[string]()
				for a := range calls {
					if slices.Contains(c.prefixes, strings.SplitN(a, ":", 2)[0]) {
						code.Insert(a)
					}
				}
				if !c.want {
					if len(c.policy) > 0 {
						t.Errorf("%s has a %s policy, but %s uses no such cloud", k.page, c.cloud, k.name)
					}
					continue
				}
				if len(c.policy) == 0 {
					t.Errorf("%s has no %s policy in its %q section", k.page, c.cloud, section)
					continue
				}
				granted := sets.New[string]()
				for _, s := range c.policy {
					granted.Insert(s.actions...)
				}
				if missing := sets.List(code.Difference(granted)); len(missing) > 0 {
					t.Errorf("%s's %s policy lacks %v, which the code calls", k.page, c.cloud, missing)
				}
				if extra := sets.List(granted.Difference(code)); len(extra) > 0 {
					t.Errorf("%s's %s policy grants %v, which no code of %s calls", k.page, c.cloud, extra, k.name)
				}
				for i, s := range c.policy {
					if err := s.scoped(); err != nil {
						t.Errorf("%s's %s policy, statement %d (%s): %v", k.page, c.cloud, i, s.sid, err)
					}
				}
				if !mentionsClusterTag(c.policy) {
					t.Errorf("%s's %s policy never scopes a write by the edgeplane.io/cluster tag", k.page, c.cloud)
				}
			}
			t.Logf("%s calls %v", k.name, sets.List(calls))
		})
	}
}

// clientActions maps each function and method of a cloud client package to
// the SDK actions it reaches, through the package's own functions.
func clientActions(p *packages.Package) map[*types.Func]sets.Set[string] {
	direct := map[*types.Func]sets.Set[string]{}
	calls := map[*types.Func][]*types.Func{}
	for _, file := range p.Syntax {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			direct[fn] = sets.New[string]()
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				used, ok := p.TypesInfo.Uses[id].(*types.Func)
				if !ok {
					return true
				}
				if a, ok := sdkAction(used); ok {
					direct[fn].Insert(a)
				} else if used.Pkg() == p.Types {
					calls[fn] = append(calls[fn], used.Origin())
				}
				return true
			})
		}
	}
	out := map[*types.Func]sets.Set[string]{}
	var visit func(fn *types.Func, seen sets.Set[*types.Func]) sets.Set[string]
	visit = func(fn *types.Func, seen sets.Set[*types.Func]) sets.Set[string] {
		acts := sets.New[string]()
		if seen.Has(fn) {
			return acts
		}
		seen.Insert(fn)
		acts = acts.Union(direct[fn])
		for _, c := range calls[fn] {
			acts = acts.Union(visit(c, seen))
		}
		return acts
	}
	for fn := range direct {
		out[fn] = visit(fn, sets.New[*types.Func]())
	}
	return out
}

// sdkAction names the SDK action a function stands for: a method of one of
// the SDK interfaces, or an EC2 paginator's constructor.
func sdkAction(fn *types.Func) (string, bool) {
	if fn.Pkg() != nil && fn.Pkg().Path() == ec2SDK {
		if a, ok := strings.CutPrefix(fn.Name(), "New"); ok && strings.HasSuffix(a, "Paginator") {
			return "ec2:" + strings.TrimSuffix(a, "Paginator"), true
		}
		return "", false
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return "", false
	}
	named, ok := types.Unalias(sig.Recv().Type()).(*types.Named)
	if !ok {
		return "", false
	}
	prefix, ok := sdkInterfaces[named.Obj().Pkg().Path()+"."+named.Obj().Name()]
	if !ok {
		return "", false
	}
	return prefix + ":" + strings.TrimSuffix(fn.Name(), "WithContext"), true
}

// kindActions are the SDK actions a kind's package reaches through the
// cloud clients' functions it uses, directly or through an interface of
// its own that a client (of clients, the kind's clouds') implements.
func kindActions(p *packages.Package, reach map[*types.Func]sets.Set[string], clients []types.Type) sets.Set[string] {
	out := sets.New[string]()
	for _, obj := range p.TypesInfo.Uses {
		fn, ok := obj.(*types.Func)
		if !ok {
			continue
		}
		out = out.Union(reach[fn.Origin()])
		sig, _ := fn.Type().(*types.Signature)
		if sig == nil || sig.Recv() == nil {
			continue
		}
		iface, ok := sig.Recv().Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for _, c := range clients {
			if !types.Implements(c, iface) {
				continue
			}
			if m, _, _ := types.LookupFieldOrMethod(c, true, nil, fn.Name()); m != nil {
				if mf, ok := m.(*types.Func); ok {
					out = out.Union(reach[mf.Origin()])
				}
			}
		}
	}
	return out
}

// section is the heading of each kind's page that holds its policies.
const section = "## Cloud permissions"

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// statement is one Allow statement of an IAM or CAM policy.
type statement struct {
	sid       string
	actions   []string
	resources []string
	condition map[string]any
}

// policies reads the AWS IAM and Tencent Cloud CAM policies of a page's
// "Cloud permissions" section.
func policies(t *testing.T, page string) (aws, cam []statement) {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n"+section+"\n")
	if !ok {
		return nil, nil
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	for _, m := range jsonBlock.FindAllStringSubmatch(rest, -1) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(m[1]), &doc); err != nil {
			t.Fatalf("a policy of %q does not parse: %v\n%s", section, err, m[1])
		}
		switch {
		case doc["Version"] == "2012-10-17":
			aws = append(aws, statements(t, doc, "Statement", "Effect", "Action", "Resource", "Condition", "Sid", "")...)
		case doc["version"] == "2.0":
			cam = append(cam, statements(t, doc, "statement", "effect", "action", "resource", "condition", "sid", "name/")...)
		default:
			t.Fatalf("a JSON block of %q is neither an IAM nor a CAM policy:\n%s", section, m[1])
		}
	}
	return aws, cam
}

func statements(t *testing.T, doc map[string]any, stmtKey, effectKey, actionKey, resourceKey, conditionKey, sidKey, trim string) []statement {
	t.Helper()
	list, _ := doc[stmtKey].([]any)
	var out []statement
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		if m[effectKey] != "Allow" && m[effectKey] != "allow" {
			t.Fatalf("only Allow statements are expected: %v", m)
		}
		s := statement{sid: fmt.Sprint(m[sidKey]), resources: strs(m[resourceKey])}
		for _, a := range strs(m[actionKey]) {
			s.actions = append(s.actions, strings.TrimPrefix(a, trim))
		}
		s.condition, _ = m[conditionKey].(map[string]any)
		out = append(out, s)
	}
	return out
}

func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// attachable are the resources an address is associated with: granting
// the association on them needs no tag.
var attachable = regexp.MustCompile(`^arn:aws:ec2:\*:\*:(network-interface|instance)/\*$`)

// scoped reports a statement that allows a write (anything but a
// Describe) on addresses without a condition.
func (s statement) scoped() error {
	var writes []string
	for _, a := range s.actions {
		if !strings.Contains(a, ":Describe") {
			writes = append(writes, a)
		}
	}
	if len(writes) == 0 || len(s.condition) > 0 {
		return nil
	}
	for _, r := range s.resources {
		if !attachable.MatchString(r) {
			return fmt.Errorf("allows %v on %s without a condition", writes, r)
		}
	}
	return nil
}

// mentionsClusterTag: some statement is conditioned on this cluster's tag.
func mentionsClusterTag(policy []statement) bool {
	for _, s := range policy {
		b, _ := json.Marshal(s.condition)
		if strings.Contains(string(b), "edgeplane.io/cluster") {
			return true
		}
	}
	return false
}
