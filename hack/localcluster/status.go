package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func newStatusCommand(stdout, stderr io.Writer) *command {
	fs := newFlagSet("status", "--dir DIR")
	dir := fs.String("dir", "", "directory the cluster was started with (required)")
	return &command{
		name: "status",
		summary: "report whether the cluster in DIR runs; exit 0 when it is ready, 1 while it starts " +
			"or does not answer, 3 when it is not running",
		flags: fs,
		run: func() int {
			d, err := clusterDir(*dir)
			if err != nil {
				_, _ = fmt.Fprintf(stderr, "localcluster status: %v\n", err)
				return exitUsage
			}
			return status(d, stdout)
		},
	}
}

// status prints one line describing the cluster in dir and returns the exit
// code. "Ready" means `up` has published the kubeconfig and the API server
// answers /readyz through it.
func status(dir string, stdout io.Writer) int {
	pid, err := readPID(dir)
	if err != nil {
		_, _ = fmt.Fprintf(stdout, "unknown: %v\n", err)
		return exitFailure
	}
	if pid == 0 || !isLocalcluster(pid) {
		_, _ = fmt.Fprintf(stdout, "not running (%s)\n", dir)
		return exitNotRunning
	}
	kubeconfig := filepath.Join(dir, kubeconfigName)
	if _, err := os.Stat(kubeconfig); errors.Is(err, fs.ErrNotExist) {
		_, _ = fmt.Fprintf(stdout, "starting (pid %d)\n", pid)
		return exitFailure
	}
	if err := apiServerReady(kubeconfig); err != nil {
		_, _ = fmt.Fprintf(stdout, "running (pid %d) but the API server does not answer: %v\n", pid, err)
		return exitFailure
	}
	_, _ = fmt.Fprintf(stdout, "running (pid %d), KUBECONFIG=%s\n", pid, kubeconfig)
	return exitOK
}

// apiServerReady asks the API server behind kubeconfig for /readyz.
func apiServerReady(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("building client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /readyz: %s", resp.Status)
	}
	return nil
}
