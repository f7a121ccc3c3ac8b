package plugin

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/edgeplane/edgeplane/internal/plugin/why"
)

const whyUsage = `Explain why a pod, a node or an edgeplane object is not served, or say that
it is. It walks from the object to what governs it (its PodElasticIP,
FloatIPs or FloatIPPools, BurstPolicy, AnycastIPBinding, NodeElasticIP,
IngressDaemonSet, and their provider configs), reads their conditions and
recent Events and, where the provider config's credentials can be read, the
cloud's view of the address, and prints one reason.

Usage:
  kubectl edgeplane why (pod/NAME | node/NAME | KIND/NAME | NAME) [flags]

A bare NAME is looked up as a pod in the namespace, then a node, then every
edgeplane kind.

Examples:
  kubectl edgeplane why pod/web-0 -n shop
  kubectl edgeplane why node/edge-node-1
  kubectl edgeplane why peip/web-0 -n shop -o json | jq -r .reason
`

func runWhy(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	fs := flagSet("why")
	cf, _ := kubeFlags(fs)
	output := fs.StringP("output", "o", "", "Output format: json. Default: text.")
	cloud := fs.Bool("cloud", true, "Read the address from the cloud with the provider config's credentials (needs read access to its Secret).")
	clusterName := fs.String("cluster-name", "", "Cluster identity of configs that set no clusterIdentity (the manager's --cluster-name). Empty: the kube-system namespace's UID.")
	tenantEndpoints := fs.StringSlice("tenant-endpoints", nil, "Endpoint overrides tenants' ProviderConfigs may use (the manager's --tenant-endpoints).")
	positional, code, done := parseArgs(fs, whyUsage, args, streams)
	if done {
		return code
	}
	if len(positional) != 1 {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: want one object (pod/NAME, node/NAME, KIND/NAME or NAME), got %d argument(s)\n\n%s", len(positional), whyUsage)
		return ExitUsage
	}
	if err := checkOutput(*output, "", "json"); err != nil {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
		return ExitUsage
	}
	ns, err := namespace(cf, false)
	if err != nil {
		return fail(streams, err)
	}
	target, err := why.ParseTarget(positional[0], ns)
	if err != nil {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
		return ExitUsage
	}
	_, c, err := typedClient(cf)
	if err != nil {
		return fail(streams, err)
	}
	g := &why.Gatherer{Client: c, ClusterName: *clusterName, TenantEndpoints: *tenantEndpoints, Cloud: *cloud}
	facts, err := g.Gather(ctx, target)
	if err != nil {
		return fail(streams, err)
	}
	v := why.Decide(facts)
	v.Cloud = g.CloudState(ctx, facts)
	if *output == "json" {
		err = why.PrintJSON(streams.Out, v)
	} else {
		err = why.PrintText(streams.Out, v)
	}
	if err != nil {
		return fail(streams, err)
	}
	return ExitOK
}
