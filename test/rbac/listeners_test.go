package rbac_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listenerFlag is a flag, registered in the code, that says where a binary
// listens.
type listenerFlag struct {
	pkg  string // directory of the package that registers it, from the root
	name string
}

// flagNameArg is where a flag registration takes the flag's name: the
// first argument of flag.String and kin, the second of the *Var kind
// (the first is the variable).
var flagNameArg = map[string]int{
	"String": 0, "Int": 0, "Uint": 0, "Func": 0, "Duration": 0,
	"StringVar": 1, "IntVar": 1, "UintVar": 1, "Var": 1, "TextVar": 1, "DurationVar": 1,
}

// isListenerFlag: the flag's last word is addr, address or port (a bind
// address, or the port of a server whose host is another flag).
func isListenerFlag(name string) bool {
	words := strings.Split(name, "-")
	return slices.Contains([]string{"addr", "address", "port"}, words[len(words)-1])
}

// scanListeners parses the non-test Go files of dirs under root and returns
// the listener flags they register and the package directories whose code
// listens: net.Listen, tls.Listen, ListenAndServe(TLS) on anything, or an
// address handed to controller-runtime to listen on (a BindAddress,
// HealthProbeBindAddress or PprofBindAddress field, or a webhook server's
// Port).
func scanListeners(t *testing.T, root string, dirs ...string) ([]listenerFlag, map[string]bool) {
	t.Helper()
	var flags []listenerFlag
	sites := map[string]bool{}
	fset := token.NewFileSet()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if e.IsDir() && (rel == filepath.Join("internal", "testsupport") || e.Name() == "testdata") {
				return filepath.SkipDir
			}
			if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			pkg := filepath.Dir(rel)
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if i, ok := flagNameArg[sel.Sel.Name]; ok && len(n.Args) > i+1 {
						if lit, ok := n.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if name, err := strconv.Unquote(lit.Value); err == nil && isListenerFlag(name) {
								flags = append(flags, listenerFlag{pkg: pkg, name: name})
							}
						}
					}
					x, _ := sel.X.(*ast.Ident)
					switch {
					case sel.Sel.Name == "Listen" && x != nil && (x.Name == "net" || x.Name == "tls"),
						sel.Sel.Name == "ListenAndServe", sel.Sel.Name == "ListenAndServeTLS":
						sites[pkg] = true
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && slices.Contains([]string{"BindAddress", "HealthProbeBindAddress", "PprofBindAddress"}, k.Name) {
						sites[pkg] = true
					}
				case *ast.CompositeLit:
					if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Options" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "webhook" {
							sites[pkg] = true
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return flags, sites
}

// binaries maps each command under root's cmd/ to the package directories
// it is built from (go list -deps), so a flag registered in an internal
// package is attributed to the binaries that contain it.
func binaries(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/edgeplane/edgeplane/"
	out := map[string]map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/"+e.Name())
		cmd.Dir = root
		list, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./cmd/%s: %v", e.Name(), err)
		}
		pkgs := map[string]bool{}
		for _, p := range strings.Fields(string(list)) {
			if rel, ok := strings.CutPrefix(p, module); ok {
				pkgs[filepath.FromSlash(rel)] = true
			}
		}
		out[e.Name()] = pkgs
	}
	return out
}

// TestScanListeners: the scanner finds flag registrations of both shapes,
// ignores flags that do not say where to listen, and finds each way code
// listens.
func TestScanListeners(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("cmd/a/main.go", `package main
import ("flag"; "net")
func main() {
	var addr, file string
	flag.StringVar(&addr, "addr", ":1", "")
	flag.StringVar(&file, "addr-file", "", "")
	_ = flag.Int("admin-port", 2, "")
	_, _ = net.Listen("tcp", addr)
}`)
	write("internal/b/b.go", `package b
func f(fs interface{}, o *struct{ X string }) {
	fs.StringVar(&o.X, "b-bind-address", "", "")
	fs.StringVar(&o.X, "b-address-type", "", "")
	_ = metricsserver.Options{BindAddress: o.X}
}`)
	write("internal/c/c.go", `package c
func serve(s *http.Server) { _ = s.ListenAndServe() }`)
	write("internal/d/d.go", `package d
var o = webhook.Options{Port: 1}`)
	write("internal/testsupport/e/e.go", `package e
import "net"
func f() { flag.String("test-addr", "", ""); _, _ = net.Listen("tcp", "") }`)
	write("internal/f/f_test.go", `package f
import "net"
func f() { _, _ = net.Listen("tcp", "") }`)
	flags, sites := scanListeners(t, root, "cmd", "internal")
	wantFlags := []listenerFlag{{"cmd/a", "addr"}, {"cmd/a", "admin-port"}, {"internal/b", "b-bind-address"}}
	slices.SortFunc(flags, func(a, b listenerFlag) int { return strings.Compare(a.pkg+a.name, b.pkg+b.name) })
	if !slices.Equal(flags, wantFlags) {
		t.Errorf("flags %v, want %v", flags, wantFlags)
	}
	for _, want := range []string{"cmd/a", "internal/b", "internal/c", "internal/d"} {
		if !sites[want] {
			t.Errorf("no listener found in %s", want)
		}
	}
	if sites["internal/testsupport/e"] || sites["internal/f"] || len(sites) != 4 {
		t.Errorf("sites %v", sites)
	}
}
