package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/plugin/orphans"
)

const orphansUsage = `List, for every ClusterProviderConfig and ProviderConfig, the cloud
addresses tagged with this cluster's identity that no live CR owns: what
the manager's orphan sweep reports in report mode. Read-only: nothing is
deleted. ProviderConfigs are read in -n (or the context's namespace), or
everywhere with -A; ClusterProviderConfigs always. Reading a config's
credentials Secret needs the same access the manager has. In a tenant's
account (a ProviderConfig) an address without that tenant's namespace tag
is only reported: the manager's sweep never touches it. Pass the manager's
--tenant-endpoints for tenants' configs that use an endpoint override.

AWS Elastic IPs carry no creation time: with --grace-period > 0 they are
listed as unowned within the grace period (ACTION Keep in -o wide).

Examples:
  kubectl edgeplane orphans
  kubectl edgeplane orphans -A -o wide
  kubectl edgeplane orphans --cluster-name prod-eu -o json
`

func runOrphans(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	fs := flagSet("orphans")
	cf, all := kubeFlags(fs)
	output := fs.StringP("output", "o", "", "Output format: wide, yaml or json. Default: a table.")
	clusterName := fs.String("cluster-name", "", "Cluster identity of configs that set no clusterIdentity (the manager's --cluster-name). Empty: the kube-system namespace's UID, as the manager does.")
	tenantEndpoints := fs.StringSlice("tenant-endpoints", nil, "Endpoint overrides tenants' ProviderConfigs may use (the manager's --tenant-endpoints); a ProviderConfig with another endpoint is not listed, as the manager never uses it.")
	grace := fs.Duration("grace-period", 0, "List unowned addresses younger than this as within the grace period instead of orphaned.")
	if code, done := parse(fs, orphansUsage, args, streams); done {
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
	cfg, c, err := typedClient(cf)
	if err != nil {
		return fail(streams, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail(streams, fmt.Errorf("creating a client: %w", err))
	}
	found, reportErr := orphans.Report(ctx, orphans.Options{
		Client: c, Dynamic: dyn, Namespace: ns, ClusterName: *clusterName, TenantEndpoints: *tenantEndpoints, GracePeriod: *grace,
	})
	switch *output {
	case "json", "yaml":
		doc := map[string]any{"items": found}
		if found == nil {
			doc["items"] = []orphans.Finding{}
		}
		var b []byte
		if *output == "json" {
			b, err = json.MarshalIndent(doc, "", "    ")
			b = append(b, '\n')
		} else {
			b, err = yaml.Marshal(doc)
		}
		if err == nil {
			_, err = streams.Out.Write(b)
		}
		if err != nil {
			return fail(streams, fmt.Errorf("writing the report: %w", err))
		}
	default:
		if err := orphans.PrintTable(streams.Out, found, *output == "wide", time.Now()); err != nil {
			return fail(streams, err)
		}
	}
	if reportErr != nil {
		return fail(streams, reportErr)
	}
	return ExitOK
}
