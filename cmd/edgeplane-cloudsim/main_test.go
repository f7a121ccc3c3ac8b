package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckLoopback(t *testing.T) {
	cases := map[string]struct {
		addr    string
		remote  bool
		wantErr bool
	}{
		"ipv4 loopback":         {addr: "127.0.0.1:9600"},
		"ipv6 loopback":         {addr: "[::1]:9600"},
		"localhost":             {addr: "localhost:0"},
		"all interfaces":        {addr: ":9600", wantErr: true},
		"public address":        {addr: "10.0.0.1:9600", wantErr: true},
		"public, allowed":       {addr: "0.0.0.0:9600", remote: true},
		"not host:port at all":  {addr: "9600", wantErr: true},
		"a name that could be…": {addr: "example.com:80", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := checkLoopback(tc.addr, tc.remote); (err != nil) != tc.wantErr {
				t.Fatalf("checkLoopback(%q) = %v, want error %v", tc.addr, err, tc.wantErr)
			}
		})
	}
}

func TestFlagsOverrideTheConfigFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("settings: {ec2AddressQuota: 9, tencentAddressQuota: 30}\ntencent: {instances: [{privateIpAddresses: [10.1.0.5]}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := parseFlags([]string{"--config", cfg, "--ec2-address-quota", "3", "--no-rate-limits", "--manual-clock"})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := f.options(slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := opts.Settings
	if s.EC2AddressQuota != 3 || s.TencentAddressQuota != 30 || !s.RateLimitsDisabled || s.TaskDuration != 0 || opts.Clock == nil || len(opts.Fixtures.Tencent.Instances) != 1 {
		t.Fatalf("options = %+v (settings %+v)", opts, s)
	}
	if _, err := parseFlags([]string{"stray"}); err == nil {
		t.Fatal("a positional argument was accepted")
	}
}

func TestRunServesAndStops(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--addr-file", addrFile, "--seed", "7", "--log-level", "warn"})
	}()

	var url string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			url = strings.TrimSpace(string(b))
			break
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("the emulator never wrote its address: %v", <-done)
	}
	resp, err := http.Get(url + "/admin/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:0"},
		{"--log-format", "xml"},
		{"--config", "/does/not/exist.yaml", "--addr", "127.0.0.1:0"},
	} {
		if err := run(context.Background(), args); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
}

// TestAdminToken: the admin token comes from --admin-token-file, else the
// environment; a short one is refused; none leaves the admin API off.
func TestAdminToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "EDGEPLANE_CLOUDSIM_ADMIN_TOKEN" {
				return v
			}
			return ""
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
		wantErr   bool
	}{
		{name: "none"},
		{name: "environment", env: "from-the-environment-0123", want: "from-the-environment-0123"},
		{name: "file wins", env: "from-the-environment-0123", args: []string{"--admin-token-file", file}, want: "from-the-file-0123456789"},
		{name: "too short", env: "short", wantErr: true},
		{name: "missing file", args: []string{"--admin-token-file", file + ".missing"}, wantErr: true},
	} {
		f, err := parseFlags(append(tc.args, "--admin-host", "emulator.internal:9600, other"))
		if err != nil {
			t.Fatal(err)
		}
		opts, err := f.options(log, env(tc.env))
		if (err != nil) != tc.wantErr || opts.AdminToken != tc.want {
			t.Errorf("%s: token %q, err %v; want %q, error %v", tc.name, opts.AdminToken, err, tc.want, tc.wantErr)
		}
		if err == nil && strings.Join(opts.AdminHosts, "|") != "emulator.internal:9600|other" {
			t.Errorf("%s: admin hosts %q", tc.name, opts.AdminHosts)
		}
	}
}

// TestServerTimeouts: the emulator's server sets every timeout, so a slow
// or idle client cannot hold a connection for ever.
func TestServerTimeouts(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		if d <= 0 {
			t.Errorf("%s is not set", name)
		}
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("MaxHeaderBytes %d", srv.MaxHeaderBytes)
	}
}
