// Package localcluster runs a real, throw-away Kubernetes cluster on loopback
// for end-to-end tests and the demo: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, which plays the kubelet
// for fake nodes so that pods really get scheduled and reach Running without
// containers.
//
// Options.RealNodes adds nodes that run real containers beside the kwok
// ones (Linux, root): each a network and mount namespace of its own with
// containerd, runc, the reference CNI plugins, a kubelet and kube-proxy, all
// on one bridge in a further namespace that the control plane reaches the
// nodes through. realnodes_linux.go says how the pieces meet and why;
// docs/architecture.md ("Running it") sums it up.
//
// The binaries come from internal/testsupport/k8sbin (built by `make k8s-bin`). Every
// process listens on 127.0.0.1 on a free port, writes its output to
// <dir>/logs/<name>.log and is started with a parent-death signal, so nothing
// outlives the test binary even when it is killed.
//
// Why not envtest? controller-runtime's envtest (v0.25) can start etcd and
// kube-apiserver, but it forks them itself with only Setpgid and offers no
// hook for a parent-death signal, so they would survive a killed test binary
// (a `go test -timeout` panic skips t.Cleanup); its certificate helpers are
// internal, and it starts nothing else. This package therefore supervises all
// five processes the same way and keeps the certificate work to one small CA
// (pki.go).
package localcluster
