package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// Virtual nodes stand in for TKE's eklet (serverless) nodes: labelled and
// tainted as eklet labels and taints them, so only pods that opt in burst
// onto them.
const (
	ekletInstanceType = "eklet"
	ekletTaintKey     = "eks.tke.cloud.tencent.com/eklet"
)

func newUpCommand(stdout, stderr io.Writer, log logr.Logger) *command {
	fs := newFlagSet("up", "--dir DIR [--nodes N] [--virtual-nodes M] [--real-nodes R] [--timeout D] [--scheduler-flag F]... [--expose-port P]... [--scheduler-flags-file FILE]")
	dir := fs.String("dir", "", "working directory for certificates, data, logs (DIR/logs), DIR/kubeconfig and DIR/localcluster.pid (required)")
	nodes := fs.Int("nodes", 2, "number of worker nodes, named local-1 ... local-N")
	virtual := fs.Int("virtual-nodes", 0, "number of virtual (eklet) nodes, named virtual-1 ... virtual-M, "+
		"labelled node.kubernetes.io/instance-type=eklet and type=virtual-kubelet and tainted "+ekletTaintKey+":NoSchedule")
	realNodes := fs.Int("real-nodes", 0, "number of real nodes, named real-1 ... real-R: a kubelet, containerd and kube-proxy each, "+
		"in network namespaces on one bridge, running real containers (needs root and `make k8s-node-bin cni-plugins node-runtime`)")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long start-up may take")
	var schedulerFlags []string
	fs.Func("scheduler-flag", "an extra kube-scheduler flag, e.g. --scheduler-flag=--config=FILE (repeatable)", func(v string) error {
		schedulerFlags = append(schedulerFlags, v)
		return nil
	})
	var exposed []int
	fs.Func("expose-port", "with --real-nodes: make the machine's 127.0.0.1:P reachable from the cluster's pods at the real nodes' gateway, 172.31.0.1:P (repeatable)", func(v string) error {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("--expose-port %q: want a port number", v)
		}
		exposed = append(exposed, p)
		return nil
	})
	schedulerFlagsFile := fs.String("scheduler-flags-file", "", "on SIGHUP, restart kube-scheduler with the flags this file lists, one a line (e.g. --config=FILE, once the configuration exists)")
	return &command{
		name:    "up",
		summary: "start a cluster and stay in the foreground until SIGINT/SIGTERM, then stop it",
		flags:   fs,
		run: func() int {
			if *nodes < 0 || *virtual < 0 || *realNodes < 0 {
				_, _ = fmt.Fprintln(stderr, "localcluster up: --nodes, --virtual-nodes and --real-nodes must not be negative")
				return exitUsage
			}
			d, err := clusterDir(*dir)
			if err != nil {
				_, _ = fmt.Fprintf(stderr, "localcluster up: %v\n", err)
				return exitUsage
			}
			if len(exposed) > 0 && *realNodes == 0 {
				_, _ = fmt.Fprintln(stderr, "localcluster up: --expose-port needs --real-nodes")
				return exitUsage
			}
			u := upRun{dir: d, nodes: nodeSpecs(*nodes, *virtual), realNodes: *realNodes, schedulerFlags: schedulerFlags,
				exposed: exposed, schedulerFlagsFile: *schedulerFlagsFile, timeout: *timeout, stdout: stdout, stderr: stderr, log: log}
			return u.run()
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

// upRun is one `up` invocation.
type upRun struct {
	dir            string
	nodes          []localcluster.NodeSpec
	realNodes      int
	schedulerFlags []string
	// exposed are loopback ports the pods reach at the gateway.
	exposed []int
	// schedulerFlagsFile lists the flags kube-scheduler restarts with on SIGHUP.
	schedulerFlagsFile string
	timeout            time.Duration
	stdout, stderr     io.Writer
	log                logr.Logger
}

// fail reports an error in plain text: errors from the cluster carry
// multi-line log tails that a structured log line would escape.
func (u upRun) fail(what string, err error) int {
	_, _ = fmt.Fprintf(u.stderr, "localcluster up: %s: %v\n", what, err)
	return exitFailure
}

// run runs the cluster until a signal arrives or a component dies.
func (u upRun) run() int {
	pidPath := filepath.Join(u.dir, pidFileName)
	kubeconfigPath := filepath.Join(u.dir, kubeconfigName)
	if err := os.MkdirAll(u.dir, 0o755); err != nil {
		return u.fail("creating --dir", err)
	}
	pid, err := readPID(u.dir)
	if err != nil {
		return u.fail("checking for a running cluster", err)
	}
	if pid != 0 && isLocalcluster(pid) {
		return u.fail("refusing to start", fmt.Errorf("a local cluster (pid %d) already runs in %s; run `localcluster down --dir %s` first", pid, u.dir, u.dir))
	}
	// The pid file comes first so `down` works during start-up too; the
	// kubeconfig comes last so its presence means "ready".
	if err := removeIfExists(kubeconfigPath); err != nil {
		return u.fail("removing the stale kubeconfig", err)
	}
	if err := writeFileAtomic(pidPath, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
		return u.fail("writing the pid file", err)
	}
	defer func() {
		if err := removeFiles(u.dir); err != nil {
			u.fail("cleaning up", err)
		}
	}()

	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()

	began := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:            u.dir,
		Nodes:          u.nodes,
		RealNodes:      u.realNodes,
		SchedulerFlags: u.schedulerFlags,
		Log:            u.log.WithName("localcluster"),
		StartTimeout:   u.timeout,
	})
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted on purpose; what was starting is stopped again.
			_, _ = fmt.Fprintln(u.stderr, "localcluster up: interrupted during start-up; stopped")
			return exitOK
		}
		return u.fail("starting the local cluster", err)
	}
	for _, port := range u.exposed {
		if err := cluster.ExposeLoopbackPort(port); err != nil {
			code := u.fail("exposing a loopback port to the cluster", err)
			_ = cluster.Stop()
			return code
		}
	}
	code := u.supervise(ctx, stopSignals, cluster, kubeconfigPath, began)
	if err := cluster.Stop(); err != nil {
		code = u.fail("stopping the local cluster", err)
	}
	return code
}

// supervise publishes the kubeconfig, announces readiness and waits until a
// signal arrives (exit 0) or a component dies (exit 1).
func (u upRun) supervise(ctx context.Context, stopSignals context.CancelFunc, cluster *localcluster.Cluster,
	kubeconfigPath string, began time.Time) int {
	kubeconfig, err := os.ReadFile(cluster.KubeconfigPath())
	if err != nil {
		return u.fail("reading the admin kubeconfig", err)
	}
	if err := writeFileAtomic(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return u.fail("publishing the kubeconfig", err)
	}
	_, _ = fmt.Fprintf(u.stdout, "localcluster ready in %s: %d nodes, %d real nodes, pid %d, logs in %s; export KUBECONFIG=%s\n",
		time.Since(began).Round(100*time.Millisecond), len(u.nodes), u.realNodes, os.Getpid(), cluster.LogDir(), kubeconfigPath)

	err = u.waitRestartingScheduler(ctx, cluster)
	// From here on a second Ctrl-C kills this process at once; the
	// components then die with it (parent-death signal).
	stopSignals()
	if err != nil {
		return u.fail("a cluster component died; stopping the cluster", err)
	}
	u.log.Info("signal received, stopping the local cluster")
	return exitOK
}

// waitRestartingScheduler is cluster.Wait that, with --scheduler-flags-file,
// restarts kube-scheduler with that file's flags on every SIGHUP: `make
// demo` hands it the chart's extender configuration once the manager has
// issued its certificates.
func (u upRun) waitRestartingScheduler(ctx context.Context, cluster *localcluster.Cluster) error {
	hup := make(chan os.Signal, 1)
	if u.schedulerFlagsFile != "" {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	died := make(chan error, 1)
	go func() { died <- cluster.Wait(ctx) }()
	for {
		select {
		case err := <-died:
			return err
		case <-hup:
			flags, err := readFlagsFile(u.schedulerFlagsFile)
			if err == nil {
				err = cluster.RestartScheduler(ctx, flags...)
			}
			if err != nil {
				_, _ = fmt.Fprintf(u.stderr, "localcluster up: restarting kube-scheduler: %v\n", err)
				continue
			}
			_, _ = fmt.Fprintf(u.stdout, "kube-scheduler restarted with %s\n", strings.Join(flags, " "))
		}
	}
}

// readFlagsFile reads one flag a line, skipping blank lines.
func readFlagsFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var flags []string
	for line := range strings.Lines(string(b)) {
		if f := strings.TrimSpace(line); f != "" {
			if !strings.HasPrefix(f, "--") {
				return nil, fmt.Errorf("%s: %q is not a --flag", path, f)
			}
			flags = append(flags, f)
		}
	}
	return flags, nil
}
