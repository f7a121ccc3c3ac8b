package floatippool

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ledger"
)

// admitAttempts bounds the ledger writes one reconcile tries when another
// writer (a second replica) keeps changing it first; the reconcile is then
// retried with backoff.
const admitAttempts = 5

// admit brings the FloatIPPoolLedger up to date with pools (the cache's
// list): it drops the claims of pools that are gone (confirmed by a fresh
// list, so a lagging cache never frees a live pool's IPs) and admits every
// pool it can (ledger.Book.Admit). Each write is an update with the
// resourceVersion it read, so a concurrent writer makes it fail and start
// again from a fresh read: the claims stay disjoint whoever writes. It
// returns the claims as written (or read, when nothing changed) and
// whether a pool was newly admitted.
func (r *PoolReconciler) admit(ctx context.Context, pools []networkingv1alpha1.FloatIPPool) (*ledger.Book, bool, error) {
	var cands []ledger.Pool
	var sets []ipam.Set
	existing := make(map[string]types.UID, len(pools))
	for i := range pools {
		p := &pools[i]
		existing[p.Name] = p.UID
		if p.DeletionTimestamp != nil || len(p.Spec.Ranges) == 0 {
			continue
		}
		set, err := ipam.ParseSet(p.Spec.Ranges, p.Spec.ExcludeIPs)
		if err != nil {
			continue // InvalidRanges, reported by the status
		}
		cands, sets = append(cands, ledger.FromPool(p)), append(sets, set)
	}
	var reader client.Reader = r.Client
	for range admitAttempts {
		book, obj, err := readLedger(ctx, reader)
		if err != nil {
			return nil, false, err
		}
		if r.Limits != (ledger.Limits{}) {
			book.SetLimits(r.Limits)
		}
		reader = r.live() // after a conflict, read what the other writer wrote
		dropped := false
		if len(book.Orphans(existing)) > 0 {
			gone, err := r.gonePools(ctx, book)
			if err != nil {
				return nil, false, err
			}
			book.Drop(gone)
			dropped = len(gone) > 0
		}
		admitted := book.Admit(cands, sets)
		if !admitted && !dropped {
			return book, false, nil
		}
		err = r.writeLedger(ctx, obj, book.Claims())
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		return book, admitted, nil
	}
	return nil, false, fmt.Errorf("updating the FloatIPPoolLedger: another writer changed it %d times in a row", admitAttempts)
}

// gonePools returns the pools of book's claims that a fresh list does not
// have (with the claim's UID): they were deleted, or deleted and created
// again, since they were admitted.
func (r *PoolReconciler) gonePools(ctx context.Context, book *ledger.Book) ([]string, error) {
	var live metav1.PartialObjectMetadataList
	live.SetGroupVersionKind(networkingv1alpha1.GroupVersion.WithKind("FloatIPPoolList"))
	if err := r.live().List(ctx, &live); err != nil {
		return nil, fmt.Errorf("listing FloatIPPools: %w", err)
	}
	existing := make(map[string]types.UID, len(live.Items))
	for _, p := range live.Items {
		existing[p.Name] = p.UID
	}
	return book.Orphans(existing), nil
}

// writeLedger creates the ledger (obj nil) or updates obj, preconditioned
// on obj's resourceVersion.
func (r *PoolReconciler) writeLedger(ctx context.Context, obj *networkingv1alpha1.FloatIPPoolLedger, claims []networkingv1alpha1.FloatIPPoolClaim) error {
	if obj == nil {
		l := &networkingv1alpha1.FloatIPPoolLedger{ObjectMeta: metav1.ObjectMeta{Name: networkingv1alpha1.FloatIPPoolLedgerName}}
		l.Spec.Claims = claims
		if err := r.Client.Create(ctx, l); err != nil {
			return fmt.Errorf("creating the FloatIPPoolLedger: %w", err)
		}
		return nil
	}
	l := obj.DeepCopy()
	l.Spec.Claims = claims
	if err := r.Client.Update(ctx, l); err != nil {
		return fmt.Errorf("updating the FloatIPPoolLedger: %w", err)
	}
	return nil
}

// live is the reader of fresh reads (the cache's client when Live is unset).
func (r *PoolReconciler) live() client.Reader {
	if r.Live != nil {
		return r.Live
	}
	return r.Client
}
