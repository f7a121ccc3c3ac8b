package podelasticip

import (
	"context"
	"errors"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/status"
)

// addressCloud is one account's elastic IP API as PodElasticIP uses it, on
// either cloud (cloud_aws.go, cloud_tencent.go). It answers in the
// provider-neutral address model of ./decide, so the reconciler's steps are
// written once. A call that starts a cloud task (every change on Tencent
// Cloud) returns the task's ID and the address in its transitional state
// (decide.Address.Pending); a call that finishes at once (EC2) returns task
// 0 and the address as it now is.
type addressCloud interface {
	// Provider is the cloud.
	Provider() cloudv1alpha1.Provider
	// CredentialsRejected is the cloud's last refusal of the account's
	// credentials (nil while they are not known to be rejected).
	CredentialsRejected() *cloud.CredentialsRejectedError

	// Allocate allocates one Auto address with its ownership tags.
	Allocate(ctx context.Context, req allocateRequest) (decide.Address, uint64, error)
	// Describe lists the addresses matching q.
	Describe(ctx context.Context, q addressQuery) ([]decide.Address, error)
	// Associate associates a with ip on the ENI eniID, never taking the
	// address from another target nor the target from another address:
	// such a refusal is errAddressTaken or errPrivateIPInUse (wrapping the
	// cloud's error). errBusy: a task on the address is still running.
	Associate(ctx context.Context, a decide.Address, eniID, ip string) (decide.Address, uint64, error)
	// Disassociate ends a's association (gone already: not an error).
	Disassociate(ctx context.Context, a decide.Address) (decide.Address, uint64, error)
	// Release releases an unassociated address (gone already: not an
	// error).
	Release(ctx context.Context, a decide.Address) (uint64, error)
	// Tag sets tags on the address; Untag removes keys (none: nothing).
	Tag(ctx context.Context, id string, tags map[string]string) error
	Untag(ctx context.Context, id string, keys ...string) error
	// Withdraw removes the claim tags a lost claim wrote, each only where
	// it still has this claimer's value, so the winner's tags survive.
	Withdraw(ctx context.Context, id string, tags map[string]string) error
	// FindENIs resolves pod IPs (with their nodes' IPs) to ENIs in as
	// few calls as the cloud allows.
	FindENIs(ctx context.Context, asked []podHost) (eniAnswer, error)
	// StaleENI reports whether a refused association says the pod IP's
	// cached ENI is wrong (the IP moved, the ENI went).
	StaleENI(err error) bool
	// TaskResult is how a task ended (tencentcloud.TaskRunning,
	// TaskSuccess, TaskFailed); WaitForTask blocks until it has (for the
	// orphan sweep, never a reconcile). Task 0 (none) has succeeded.
	TaskResult(ctx context.Context, task uint64) (string, error)
	WaitForTask(ctx context.Context, task uint64) error
	// MaxIDs is the most address IDs one describe takes.
	MaxIDs() int
}

// allocateRequest is one Auto allocation.
type allocateRequest struct {
	Tags map[string]string
	// PublicIPv4Pool is AWS's pool (empty: amazon).
	PublicIPv4Pool string
	// Tencent are Tencent Cloud's settings, ClientToken its idempotency
	// token (EC2's AllocateAddress has none).
	Tencent     networkingv1alpha1.PodElasticIPTencent
	ClientToken string
}

// addressQuery selects addresses; set fields are ANDed. Tags match exact
// values, TagKeys only need the key.
type addressQuery struct {
	IDs     []string
	Tags    map[string]string
	TagKeys []string
}

// eniAnswer is what one ENI look-up learnt: every private IP of every ENI
// it saw (All, cached for later look-ups) and the ENI of each pod IP asked
// for that it found (Found), by ENI ID.
type eniAnswer struct {
	All   map[string]string
	Found map[string]string
}

// Errors of addressCloud's calls the steps act on.
var (
	// errAddressTaken: the address is associated (or being associated)
	// elsewhere; for a claim, another claimer won it.
	errAddressTaken = errors.New("the address is associated with another target")
	// errPrivateIPInUse: the pod's private IP carries another elastic IP,
	// so the cloud refuses ours there (reason PrivateIPInUse).
	errPrivateIPInUse = errors.New("the pod's private IP already carries another elastic IP")
	// errBusy: a task on the address is still running, or its state
	// changed since it was observed; look again soon.
	errBusy = errors.New("the address is busy with a cloud task")
	// errNoENI: no ENI holds the pod IP (reason NetworkInterfaceNotFound).
	errNoENI = errors.New("no ENI holds the pod IP")
)

// isNotFound: the address (or ENI) does not exist, on either cloud.
func isNotFound(err error) bool {
	return errors.Is(err, errNoENI) || aws.IsNotFound(err) || tencentcloud.IsNotFound(err)
}

// ignoreNotFound is nil for a not-found error.
func ignoreNotFound(err error) error {
	if isNotFound(err) {
		return nil
	}
	return err
}

// classify maps a cloud error to a stable reason. The clouds' error types
// differ, so each classifier recognises its own cloud's errors only.
func classify(err error) xpv2.ConditionReason {
	r := status.ReasonFor(err, string(networkingv1alpha1.PodElasticIPReasonCloudError),
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonPrivateIPInUse), Matches: func(err error) bool { return errors.Is(err, errPrivateIPInUse) }},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonNetworkInterfaceNotFound), Matches: func(err error) bool { return errors.Is(err, errNoENI) }},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonCredentialsRejected), Matches: either(aws.IsCredentialsRejected, tencentcloud.IsCredentialsRejected)},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonQuotaExceeded), Matches: either(aws.IsQuotaExceeded, tencentcloud.IsQuotaExceeded)},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonThrottled), Matches: either(aws.IsThrottled, tencentcloud.IsThrottled)},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonTaskFailed), Matches: tencentcloud.IsTaskFailed},
		status.Classifier{Reason: string(networkingv1alpha1.PodElasticIPReasonInvalidSpec), Matches: either(aws.IsInvalidParameter, tencentcloud.IsInvalidParameter)},
	)
	return xpv2.ConditionReason(r)
}

func either(a, b func(error) bool) func(error) bool {
	return func(err error) bool { return a(err) || b(err) }
}
