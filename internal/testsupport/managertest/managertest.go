// Package managertest runs edgeplane's manager inside a test, built from a
// command line exactly as cmd/edgeplane-manager builds it, so a test meets
// the flags, defaults and validation a user meets.
package managertest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager"
)

// Start parses args on the manager's command line, builds the manager with
// every controller against cfg and runs it until the test ends. The
// manager's log (and client-go's) goes to log; nil discards it. Start fails
// the test when the manager rejects its arguments or cannot be built.
func Start(t testing.TB, ctx context.Context, cfg *rest.Config, args []string, log io.Writer) {
	t.Helper()
	all := manager.Controllers()
	opts := manager.DefaultOptions()
	fs := manager.FlagSet("edgeplane-manager", &opts, all, &zap.Options{})
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the manager rejects %q: %v", args, err)
	}
	if log == nil {
		log = io.Discard
	}
	logger := zap.New(zap.WriteTo(log), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	mctx, cancel := context.WithCancel(ctrl.LoggerInto(ctx, logger))
	m, err := manager.New(mctx, cfg, opts, all)
	if err != nil {
		cancel()
		t.Fatalf("building the manager: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("manager stopped: %v", err)
		}
	})
}

// EmulatorConfig is a ClusterProviderConfig for the cloud emulator at
// endpoint: no credentials (the emulator's well-known keys sign).
func EmulatorConfig(name string, provider cloudv1alpha1.Provider, region, endpoint string) *cloudv1alpha1.ClusterProviderConfig {
	c := &cloudv1alpha1.ClusterProviderConfig{
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: provider, Region: region, Endpoint: endpoint},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}
	c.Name = name
	return c
}

// Log collects a manager's log, written from many goroutines, for a test to
// print when it fails.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
