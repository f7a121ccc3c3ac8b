// Package testsupport holds the machinery tests use and the product does
// not: testenv (a shared envtest API server and etcd per test binary),
// testbin (builds this repository's commands for tests that run them as
// processes), localcluster (a throw-away local cluster with a real scheduler,
// controller-manager and kwok nodes, also behind `make demo`), k8sbin (where
// `make k8s-bin` put the control-plane binaries), readywatch (benchmarks
// wait for convergence from an informer), promtext (reading a process's
// Prometheus metrics and how its counters moved) and bptest (BurstPolicy's
// envtest fixtures). Fixtures that belong to one package stay beside it as
// <package>test, as net/http/httptest does (cloudsim/cloudsimtest,
// tenancy/tenancytest).
package testsupport
