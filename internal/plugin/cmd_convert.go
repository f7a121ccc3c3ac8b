package plugin

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/edgeplane/edgeplane/internal/plugin/convert"
	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

const convertUsage = `Convert legacy manifests into edgeplane CRs, for a GitOps repository. Reads
YAML or JSON (several documents, or a List from kubectl get -o yaml) and
writes the CRs to stdout, sorted, without status; warnings go to stderr.
Nothing is sent to a cluster.

Converted inputs:
  ingressdaemonsets.mumoshu.github.io IngressDaemonSet  → IngressDaemonSet
  Deployment/StatefulSet with AUTO_SCALE_EKS or LOCAL_REPLICAS
    pod-template annotations (TKE resilience)            → BurstPolicy
  ConfigMap kube-system/eks-config (AUTO_SCALE_EKS)      → ClusterBurstPolicy
  ConfigMap kube-system/floatingip-config (galaxy-ipam)  → FloatIPPools
  pools.galaxy.k8s.io Pool                               → FloatIPPool
  floatingips.galaxy.k8s.io FloatingIP                   → FloatIP
  kubeip DaemonSet (doitintl/kubeip-agent)              → the --nodeelasticip-* settings (a warning)
  Node on EC2 that a kubeip DaemonSet in the input picks → NodeElasticIP
Other objects are skipped with a warning.

Examples:
  kubectl get deploy,sts -A -o yaml | kubectl edgeplane convert -f - > burstpolicies.yaml
  kubectl edgeplane convert -f legacy/ -f eks-config.yaml > gitops/edgeplane.yaml
`

func runConvert(_ context.Context, args []string, streams genericiooptions.IOStreams) int {
	fs := flagSet("convert")
	files := fs.StringArrayP("filename", "f", nil, "Manifest file, directory (its *.yaml, *.yml, *.json) or - for stdin; repeatable.")
	output := fs.StringP("output", "o", "yaml", "Output format: yaml (a multi-document stream) or json (a v1 List).")
	if code, done := parse(fs, convertUsage, args, streams); done {
		return code
	}
	if err := checkOutput(*output, "yaml", "json"); err != nil {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
		return ExitUsage
	}
	if len(*files) == 0 {
		_, _ = fmt.Fprintln(streams.ErrOut, "Error: at least one -f is required (-f - reads stdin)")
		return ExitUsage
	}
	objs, err := manifest.ReadFiles(*files, streams.In)
	if err != nil {
		var merr *manifest.Error
		if errors.As(err, &merr) {
			return fail(streams, fmt.Errorf("malformed input: %w", err))
		}
		return fail(streams, err)
	}
	scheme, err := edgescheme.New()
	if err != nil {
		return fail(streams, err)
	}
	res, err := convert.Run(scheme, convert.Converters(), objs)
	for _, w := range res.Warnings {
		_, _ = fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	if err != nil {
		return fail(streams, err)
	}
	if *output == "json" {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
		for _, o := range res.Objects {
			list.Items = append(list.Items, *o)
		}
		if err := (&printers.JSONPrinter{}).PrintObj(list, streams.Out); err != nil {
			return fail(streams, err)
		}
		return ExitOK
	}
	if err := convert.WriteYAML(streams.Out, res.Objects); err != nil {
		return fail(streams, err)
	}
	return ExitOK
}
