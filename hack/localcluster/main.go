// Command localcluster runs the local Kubernetes cluster of
// internal/testsupport/localcluster (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok with fake nodes, optionally real nodes) for `make demo`
// and manual testing.
//
//	localcluster up     --dir DIR [--nodes N] [--virtual-nodes M] [--real-nodes R] [--scheduler-flag F]...   # foreground; Ctrl-C stops
//	localcluster down   --dir DIR
//	localcluster status --dir DIR
//
// `up` writes DIR/localcluster.pid at once and DIR/kubeconfig when the
// cluster is ready, then prints one line to stdout. Everything else (progress,
// errors) goes to stderr; component logs are in DIR/logs/.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
)

// Files `up` maintains in --dir besides the cluster's own sub-directories.
const (
	pidFileName    = "localcluster.pid"
	kubeconfigName = "kubeconfig"
)

// Exit codes. status uses the LSB convention of 3 for "not running".
const (
	exitOK         = 0
	exitFailure    = 1
	exitUsage      = 2
	exitNotRunning = 3
)

// command is one subcommand: its flags, and run, which returns an exit code.
type command struct {
	name    string
	summary string
	flags   *flag.FlagSet
	run     func() int
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	log := logr.FromSlogHandler(slog.NewTextHandler(stderr, nil))
	commands := []*command{newUpCommand(stdout, stderr, log), newDownCommand(stdout, stderr, log), newStatusCommand(stdout, stderr)}

	usage := func() {
		_, _ = fmt.Fprintf(stderr, "localcluster runs a local Kubernetes cluster (etcd, kube-apiserver,\n"+
			"kube-controller-manager, kube-scheduler, kwok) on 127.0.0.1.\n\nUsage:\n")
		for _, cmd := range commands {
			_, _ = fmt.Fprintf(stderr, "\n  localcluster %s\n    %s\n", cmd.name, cmd.summary)
			var flags strings.Builder
			cmd.flags.SetOutput(&flags)
			cmd.flags.PrintDefaults()
			_, _ = fmt.Fprint(stderr, indent(flags.String(), "  "))
		}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, cmd := range commands {
		if cmd.name != args[0] {
			continue
		}
		cmd.flags.SetOutput(stderr)
		if err := cmd.flags.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if cmd.flags.NArg() > 0 {
			_, _ = fmt.Fprintf(stderr, "localcluster %s: unexpected arguments %v\n", cmd.name, cmd.flags.Args())
			return exitUsage
		}
		return cmd.run()
	}
	_, _ = fmt.Fprintf(stderr, "localcluster: unknown command %q\n\n", args[0])
	usage()
	return exitUsage
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// newFlagSet returns a flag set whose -h output names the command.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: localcluster %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// clusterDir validates --dir and returns it as an absolute path.
func clusterDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("--dir is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving --dir %s: %w", dir, err)
	}
	return abs, nil
}
