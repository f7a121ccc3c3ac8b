// Package plugin implements kubectl-edgeplane, the kubectl plugin:
//
//	kubectl edgeplane status   one table over every edgeplane object
//	kubectl edgeplane convert  legacy manifests → edgeplane CRs (GitOps)
//	kubectl edgeplane orphans  cloud addresses no CR owns (report only)
//	kubectl edgeplane why      why a pod, node or object is not served
//	kubectl edgeplane release  let go of a resource whose cloud account is gone
//
// The command glue (flags, clients, output) lives here, one file per verb;
// the logic is in the subpackages status, convert, orphans, why and release. Flags follow
// kubectl: the kubeconfig flags of cli-runtime (--kubeconfig, --context,
// -n/--namespace, ...), -A/--all-namespaces and -o/--output.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitNotReady: status --require-ready found an object that is not Ready.
	ExitNotReady = 3
)

// command is one verb.
type command struct {
	name, short, usage string
	run                func(ctx context.Context, args []string, streams genericiooptions.IOStreams) int
}

func commands() []command {
	return []command{
		{name: "status", short: "One table of every edgeplane object: Ready or not and why, pool usage, bound IPs", usage: statusUsage, run: runStatus},
		{name: "convert", short: "Convert legacy manifests into edgeplane CRs (stdout, for GitOps repositories)", usage: convertUsage, run: runConvert},
		{name: "orphans", short: "List cloud addresses tagged for this cluster that no CR owns (read-only)", usage: orphansUsage, run: runOrphans},
		{name: "why", short: "Why a pod, node or edgeplane object is not served (or that it is): the one reason, what governs it, Events, the cloud", usage: whyUsage, run: runWhy},
		{name: "release", short: "Let a deleted resource go, keeping its cloud object (--keep-cloud; for an account that is gone)", usage: releaseUsage, run: runRelease},
	}
}

// Run runs the plugin with args (without the program name) and returns the
// exit code: 0 on success, 1 on errors, 2 on usage errors.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	// The libraries shared with the manager log through controller-runtime;
	// the plugin reports errors itself.
	ctrllog.SetLogger(logr.Discard())
	if len(args) == 0 {
		usage(streams.ErrOut)
		return ExitUsage
	}
	verb := args[0]
	switch verb {
	case "-h", "--help", "help":
		if verb == "help" && len(args) > 1 {
			return Run(ctx, []string{args[1], "--help"}, streams)
		}
		usage(streams.Out)
		return ExitOK
	}
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == verb })
	if i < 0 {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: unknown command %q\n\n", verb)
		usage(streams.ErrOut)
		return ExitUsage
	}
	return commands()[i].run(ctx, args[1:], streams)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("kubectl edgeplane: inspect and migrate to edgeplane.\n\nUsage:\n  kubectl edgeplane <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.short)
	}
	b.WriteString("\nUse \"kubectl edgeplane <command> --help\" for a command's flags.\n")
	_, _ = io.WriteString(w, b.String())
}

// flagSet is a verb's flags with kubectl's --help behaviour.
func flagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubectl edgeplane "+name, pflag.ContinueOnError)
	fs.SortFlags = false
	return fs
}

// parse parses args; done is true when the command must stop with code
// (help printed, or a usage error).
func parse(fs *pflag.FlagSet, help string, args []string, streams genericiooptions.IOStreams) (code int, done bool) {
	positional, code, done := parseArgs(fs, help, args, streams)
	if !done && len(positional) > 0 {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: unexpected arguments: %s\n\n%s\nFlags:\n%s", strings.Join(positional, " "), help, fs.FlagUsages())
		return ExitUsage, true
	}
	return code, done
}

// parseArgs is parse for a command that takes arguments: they may come
// before, between or after the flags, as with kubectl.
func parseArgs(fs *pflag.FlagSet, help string, args []string, streams genericiooptions.IOStreams) (positional []string, code int, done bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		_, _ = fmt.Fprintf(streams.Out, "%s\nFlags:\n%s", help, fs.FlagUsages())
		return nil, ExitOK, true
	}
	if err != nil {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n\n%s\nFlags:\n%s", err, help, fs.FlagUsages())
		return nil, ExitUsage, true
	}
	return fs.Args(), ExitOK, false
}

// kubeFlags adds kubectl's connection flags and -A.
func kubeFlags(fs *pflag.FlagSet) (*genericclioptions.ConfigFlags, *bool) {
	cf := genericclioptions.NewConfigFlags(false)
	cf.AddFlags(fs)
	all := fs.BoolP("all-namespaces", "A", false, "List across all namespaces (cluster-scoped objects are always listed).")
	return cf, all
}

// namespace is the namespace to list: "" with -A, else -n or the context's.
func namespace(cf *genericclioptions.ConfigFlags, all bool) (string, error) {
	if all {
		return "", nil
	}
	ns, _, err := cf.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// checkOutput validates -o.
func checkOutput(o string, allowed ...string) error {
	if slices.Contains(allowed, o) {
		return nil
	}
	var names []string
	for _, a := range allowed {
		if a != "" {
			names = append(names, a)
		}
	}
	return fmt.Errorf("unknown output format %q: want one of %s", o, strings.Join(names, ", "))
}

func fail(streams genericiooptions.IOStreams, err error) int {
	_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
	return ExitError
}

// typedClient returns the REST config of the kubeconfig flags and a client
// with edgeplane's scheme.
func typedClient(cf *genericclioptions.ConfigFlags) (*rest.Config, client.Client, error) {
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	scheme, err := edgescheme.New()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	return cfg, c, nil
}
