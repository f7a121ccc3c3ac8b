package plugin

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/edgeplane/edgeplane/internal/plugin/status"
)

const statusUsage = `Show every edgeplane object the API server serves in one table: whether it
is Ready, and if not why (reason and message), with a per-kind detail: pool
usage, the IP a pod or node is bound to, a burst policy's target.
Cluster-scoped kinds are always listed; namespaced kinds in -n (or the
context's namespace), or everywhere with -A. Kinds whose CRD is not
installed are skipped.

With --require-ready the command exits 3 when any object it lists is not
Ready (after printing them all), so a script or CI job can wait on it.

Examples:
  kubectl edgeplane status -A
  kubectl edgeplane status -A --require-ready || echo "not everything is Ready"
  kubectl edgeplane status -n team-a -o wide
  kubectl edgeplane status -A -o json | jq '.items[].metadata.name'
`

func runStatus(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	fs := flagSet("status")
	cf, all := kubeFlags(fs)
	output := fs.StringP("output", "o", "", "Output format: wide, yaml or json (the objects as a v1 List). Default: a table.")
	requireReady := fs.Bool("require-ready", false, "Exit 3 when any listed object is not Ready (errors still exit 1).")
	if code, done := parse(fs, statusUsage, args, streams); done {
		return code
	}
	if err := checkOutput(*output, "", "wide", "yaml", "json"); err != nil {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
		return ExitUsage
	}
	ns, err := namespace(cf, *all)
	if err != nil {
		return fail(streams, err)
	}
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return fail(streams, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fail(streams, fmt.Errorf("creating a discovery client: %w", err))
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail(streams, fmt.Errorf("creating a client: %w", err))
	}
	kinds, err := status.Discover(disc, status.Kinds())
	if err != nil {
		return fail(streams, err)
	}
	// A kind that cannot be listed is reported after the others are shown.
	rows, objs, listErr := status.Collect(ctx, dyn, kinds, ns)
	switch *output {
	case "json", "yaml":
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
		for _, o := range objs {
			o.SetManagedFields(nil)
			list.Items = append(list.Items, *o)
		}
		var p printers.ResourcePrinter = &printers.JSONPrinter{}
		if *output == "yaml" {
			p = &printers.YAMLPrinter{}
		}
		if err := p.PrintObj(list, streams.Out); err != nil {
			return fail(streams, err)
		}
	default:
		if err := status.PrintTable(streams.Out, rows, *output == "wide", time.Now()); err != nil {
			return fail(streams, err)
		}
	}
	if listErr != nil {
		return fail(streams, listErr)
	}
	if *requireReady {
		if notReady := countNotReady(rows); notReady > 0 {
			_, _ = fmt.Fprintf(streams.ErrOut, "%d of %d objects are not Ready\n", notReady, len(rows))
			return ExitNotReady
		}
	}
	return ExitOK
}

func countNotReady(rows []status.Row) int {
	n := 0
	for _, r := range rows {
		if !r.IsReady() {
			n++
		}
	}
	return n
}
