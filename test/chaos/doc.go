// Package chaos is edgeplane's chaos run (issue 10, `make chaos`): two
// edgeplane-manager processes with leader election run against a local
// cluster (internal/localcluster) and the cloud emulator
// (cmd/edgeplane-cloudsim) while annotated pods, labelled nodes, float-IP
// workloads, IngressDaemonSet rollouts and burst workloads churn, the leader
// is killed with SIGKILL, fault windows (the emulator's fault sets, revoked
// credentials, shrunk quotas, a webhook outage) follow one another and etcd
// is paused once. At the end the run waits for convergence and checks the
// invariants, and that it reached its profile's minimum of leader kills and
// completed failovers and proved every fault kind (issue 17).
//
// The run itself is TestChaos, behind the build tag `chaos` (see
// docs/chaos.md). The files without that tag hold what it is built from and
// is tested on its own: the invariants (pure functions over listed objects
// and an emulator snapshot), the profiles and the fault deck, the tally of
// kills, failovers and fault windows, and the replica proxy.
package chaos
