package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/edgeplane/edgeplane/internal/plugin/release"
)

const releaseUsage = `Let go of a PodElasticIP or AnycastIPBinding whose deletion cannot finish
because its cloud account is gone (credentials revoked, account closed):
the cloud object is left as it is, and the finalizer is removed without
any cloud call.

It only unblocks a deletion: the resource must already be deleted
(kubectl delete) and --keep-cloud must be given. It switches the
resource's managementPolicies to leave out Delete (crossplane's orphan
policy) and records the decision, with the cloud object left behind, in
the annotation edgeplane.io/released-keeping-cloud. The manager then
removes the finalizer. Clean the cloud object up by hand if it still
exists.

Usage:
  kubectl edgeplane release KIND NAME --keep-cloud [--reason TEXT] [-n NAMESPACE]

KIND is podelasticip or anycastipbinding (cluster-scoped).

Examples:
  kubectl delete podelasticip web-0 -n shop
  kubectl edgeplane release podelasticip web-0 -n shop --keep-cloud --reason "account 1234 closed"
`

func runRelease(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	fs := flagSet("release")
	cf, _ := kubeFlags(fs)
	keep := fs.Bool("keep-cloud", false, "Required: leave the cloud object as it is and let the resource go.")
	reason := fs.String("reason", "", "Why, recorded in the annotation.")
	positional, code, done := parseArgs(fs, releaseUsage, args, streams)
	if done {
		return code
	}
	if len(positional) != 2 {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: want KIND and NAME, got %d argument(s)\n\n%s", len(positional), releaseUsage)
		return ExitUsage
	}
	if !*keep {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: release leaves the cloud object behind; pass --keep-cloud to confirm\n\n%s", releaseUsage)
		return ExitUsage
	}
	kind, ok := release.FindKind(positional[0])
	if !ok {
		_, _ = fmt.Fprintf(streams.ErrOut, "Error: unknown kind %q: want podelasticip or anycastipbinding\n", positional[0])
		return ExitUsage
	}
	ns, err := namespace(cf, false)
	if err != nil {
		return fail(streams, err)
	}
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return fail(streams, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail(streams, fmt.Errorf("creating a client: %w", err))
	}
	res, err := release.Release(ctx, dyn, release.Request{Kind: kind, Namespace: ns, Name: positional[1], Reason: *reason, Now: time.Now()})
	if err != nil {
		if errors.Is(err, release.ErrNotDeleting) {
			_, _ = fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
			return ExitUsage
		}
		return fail(streams, err)
	}
	left := res.Cloud
	if left == "" {
		left = "no cloud object recorded in its status"
	}
	_, _ = fmt.Fprintf(streams.Out, "%s %s released; the cloud side is kept (%s). The manager removes its finalizer.\n", kind.Name, positional[1], left)
	return ExitOK
}
