package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeplane/edgeplane/internal/localcluster"
)

// Virtual nodes stand in for TKE's eklet (serverless) nodes: labelled and
// tainted as eklet labels and taints them, so only pods that opt in burst
// onto them.
const (
	ekletInstanceType = "eklet"
	ekletTaintKey     = "eks.tke.cloud.tencent.com/eklet"
)

func newUpCommand(stdout io.Writer, log logr.Logger) *command {
	fs := newFlagSet("up", "--dir DIR [--nodes N] [--virtual-nodes M] [--timeout D]")
	dir := fs.String("dir", "", "working directory for certificates, data, logs (DIR/logs), DIR/kubeconfig and DIR/localcluster.pid (required)")
	nodes := fs.Int("nodes", 2, "number of worker nodes, named local-1 ... local-N")
	virtual := fs.Int("virtual-nodes", 0, "number of virtual (eklet) nodes, named virtual-1 ... virtual-M, "+
		"labelled node.kubernetes.io/instance-type=eklet and type=virtual-kubelet and tainted "+ekletTaintKey+":NoSchedule")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long start-up may take")
	return &command{
		name:    "up",
		summary: "start a cluster and stay in the foreground until SIGINT/SIGTERM, then stop it",
		flags:   fs,
		run: func() int {
			if *nodes < 0 || *virtual < 0 {
				log.Error(nil, "--nodes and --virtual-nodes must not be negative")
				return exitUsage
			}
			d, err := clusterDir(*dir)
			if err != nil {
				log.Error(err, "invalid flags")
				return exitUsage
			}
			return up(d, nodeSpecs(*nodes, *virtual), *timeout, stdout, log)
		},
	}
}

// nodeSpecs returns the worker and virtual nodes to create.
func nodeSpecs(workers, virtual int) []localcluster.NodeSpec {
	var specs []localcluster.NodeSpec
	for i := 1; i <= workers; i++ {
		specs = append(specs, localcluster.NodeSpec{Name: fmt.Sprintf("local-%d", i)})
	}
	for i := 1; i <= virtual; i++ {
		specs = append(specs, localcluster.NodeSpec{
			Name: fmt.Sprintf("virtual-%d", i),
			Labels: map[string]string{
				corev1.LabelInstanceTypeStable: ekletInstanceType,
				"type":                         "virtual-kubelet",
			},
			Taints: []corev1.Taint{{Key: ekletTaintKey, Effect: corev1.TaintEffectNoSchedule}},
		})
	}
	return specs
}

// up runs the cluster until a signal arrives or a component dies.
func up(dir string, nodes []localcluster.NodeSpec, timeout time.Duration, stdout io.Writer, log logr.Logger) int {
	pidPath := filepath.Join(dir, pidFileName)
	kubeconfigPath := filepath.Join(dir, kubeconfigName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Error(err, "creating --dir")
		return exitFailure
	}
	pid, err := readPID(dir)
	if err != nil {
		log.Error(err, "checking for a running cluster")
		return exitFailure
	}
	if pid != 0 && isLocalcluster(pid) {
		log.Error(nil, "a local cluster already runs in this directory; run `localcluster down` first", "dir", dir, "pid", pid)
		return exitFailure
	}
	// The pid file comes first so `down` works during start-up too; the
	// kubeconfig comes last so its presence means "ready".
	if err := removeIfExists(kubeconfigPath); err != nil {
		log.Error(err, "removing stale kubeconfig")
		return exitFailure
	}
	if err := writeFileAtomic(pidPath, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
		log.Error(err, "writing pid file")
		return exitFailure
	}
	defer func() {
		for _, path := range []string{kubeconfigPath, pidPath} {
			if err := removeIfExists(path); err != nil {
				log.Error(err, "cleaning up")
			}
		}
	}()

	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()

	began := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:          dir,
		Nodes:        nodes,
		Log:          log.WithName("localcluster"),
		StartTimeout: timeout,
	})
	if err != nil {
		log.Error(err, "starting the local cluster")
		return exitFailure
	}
	code := supervise(ctx, stopSignals, cluster, nodes, kubeconfigPath, began, stdout, log)
	if err := cluster.Stop(); err != nil {
		log.Error(err, "stopping the local cluster")
		code = exitFailure
	}
	return code
}

// supervise publishes the kubeconfig, announces readiness and waits until a
// signal arrives (exit 0) or a component dies (exit 1).
func supervise(ctx context.Context, stopSignals context.CancelFunc, cluster *localcluster.Cluster,
	nodes []localcluster.NodeSpec, kubeconfigPath string, began time.Time, stdout io.Writer, log logr.Logger) int {
	kubeconfig, err := os.ReadFile(cluster.KubeconfigPath())
	if err != nil {
		log.Error(err, "reading the admin kubeconfig")
		return exitFailure
	}
	if err := writeFileAtomic(kubeconfigPath, kubeconfig, 0o600); err != nil {
		log.Error(err, "publishing the kubeconfig")
		return exitFailure
	}
	_, _ = fmt.Fprintf(stdout, "localcluster ready in %s: %d nodes, pid %d, logs in %s; export KUBECONFIG=%s\n",
		time.Since(began).Round(100*time.Millisecond), len(nodes), os.Getpid(), cluster.LogDir(), kubeconfigPath)

	err = cluster.Wait(ctx)
	// From here on a second Ctrl-C kills this process at once; the
	// components then die with it (parent-death signal).
	stopSignals()
	if err != nil {
		log.Error(err, "a cluster component died; stopping the cluster")
		return exitFailure
	}
	log.Info("signal received, stopping the local cluster")
	return exitOK
}
