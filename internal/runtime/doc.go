// Package runtime is the toolbox the controllers share, one job per
// sub-package:
//
//   - batch: one cloud call per window and account for the reads that
//     concurrent reconciles make;
//   - cloudtask: an allocation by an asynchronous cloud task with an
//     idempotency token (Tencent Cloud's AllocateAddresses) kept on the
//     object: the attempt in its token, the task of the attempt;
//   - clientcache: one cloud client per account, resolved once for a burst
//     of reconciles (singleflight) and evicted when unused (LRUExpireCache);
//   - expect: read-your-writes, so that a pass served a stale copy by a
//     cache uses what this process wrote instead of writing again;
//   - informerstore: reads from an informer's store without the copy a
//     List through the cached client makes;
//   - admissionbody: an admission request's body read in one read;
//   - clientlimit: the manager's client-side limit on its Kubernetes API
//     requests (none by default), shared with the benchmarks.
//
// Time comes from k8s.io/utils/clock everywhere, so tests move a fake one.
package runtime
