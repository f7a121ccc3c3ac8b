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
	opts, err := f.options(slog.New(slog.NewTextHandler(io.Discard, nil)))
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
