// Command edgeplane-cloudsim runs edgeplane's local cloud emulator: the EC2
// Query API and Tencent Cloud API 3.0 subsets edgeplane uses, on the real
// wire protocols, plus an admin API under /admin/ (see
// internal/cloudsim/admin.go). It serves on loopback only unless told
// otherwise: its keys are public. The admin API takes a bearer token (from
// EDGEPLANE_CLOUDSIM_ADMIN_TOKEN or --admin-token-file; without one it is
// off, but for GET /admin/healthz), answers only requests whose Host is a
// loopback name or an --admin-host, and takes JSON or YAML bodies only.
//
// Usage:
//
//	edgeplane-cloudsim [flags]
//
// Flags:
//
//	--addr 127.0.0.1:9600      listen address (port 0 picks a free port)
//	--addr-file PATH           write the actual base URL here once listening
//	--seed N                   seed for IDs, addresses and fault decisions (default 1)
//	--config PATH              YAML/JSON settings and fixtures (cloudsim.Config)
//	--manual-clock             emulated time only moves via POST /admin/clock/advance
//	--rate-limit-scale F       multiply every token bucket (default from config, else 1)
//	--no-rate-limits           turn server-side throttling off
//	--task-duration D          how long Tencent async tasks run (default 2s)
//	--ec2-address-quota N      EC2 Elastic IP quota (default 5)
//	--tencent-address-quota N  Tencent EIP quota (default 20)
//	--allow-remote             allow a non-loopback --addr
//	--admin-token-file PATH    read the admin API's token from this file
//	                           (else EDGEPLANE_CLOUDSIM_ADMIN_TOKEN; neither:
//	                           the admin API is off)
//	--admin-host HOST[,HOST]   Host header values the admin API answers
//	                           besides loopback names (with --allow-remote)
//	--log-format text|json     log format (default text)
//	--log-level LEVEL          debug, info, warn or error (default info)
//
// Flags override the config file's settings. Point clients at the base URL:
// aws-sdk-go-v2 BaseEndpoint / `aws --endpoint-url`, tencentcloud-sdk-go
// HttpProfile.Endpoint (host:port) with Scheme "HTTP". Both fronts check
// signatures like the real clouds (an unsigned or wrongly signed request,
// an unknown key or a skewed clock is refused with the cloud's own error):
// EC2 accepts the access keys in settings.ec2Credentials, by default only
// AKIAEDGEPLANESIM0000 / edgeplaneEmulatorSecretAccessKey00000000; Tencent
// the pairs in settings.tencentCredentials, by default only
// AKIDedgeplaneEmulator0000000000000 / edgeplaneEmulatorSecretKey0000000.
// These well-known pairs are what credentials source None signs with. A
// config file adds keys (each EC2 key may name its own account):
//
//	settings:
//	  ec2Credentials:
//	    AKIAEDGEPLANESIM0000: {secretAccessKey: edgeplaneEmulatorSecretAccessKey00000000}
//	    AKIATENANTA000000001: {secretAccessKey: tenant-a-secret, accountId: "210987654321"}
//	  tencentCredentials:
//	    AKIDedgeplaneEmulator0000000000000: edgeplaneEmulatorSecretKey0000000
//
// PATCH /admin/settings with {"ec2Credentials": {"AKIA…": null}} revokes a
// key at run time (likewise tencentCredentials).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

type flags struct {
	addr           string
	addrFile       string
	seed           uint64
	config         string
	manualClock    bool
	rateLimitScale float64
	noRateLimits   bool
	taskDuration   time.Duration
	ec2Quota       int
	tencentQuota   int
	allowRemote    bool
	adminTokenFile string
	adminHosts     string
	logFormat      string
	logLevel       string
	set            map[string]bool
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("edgeplane-cloudsim", flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9600", "listen address (port 0 picks a free port)")
	fs.StringVar(&f.addrFile, "addr-file", "", "write the actual base URL to this file once listening")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for IDs, addresses and fault decisions")
	fs.StringVar(&f.config, "config", "", "YAML/JSON file with settings and fixtures")
	fs.BoolVar(&f.manualClock, "manual-clock", false, "emulated time only moves via POST /admin/clock/advance")
	fs.Float64Var(&f.rateLimitScale, "rate-limit-scale", 1, "multiply every token bucket's burst and refill rate")
	fs.BoolVar(&f.noRateLimits, "no-rate-limits", false, "turn server-side throttling off")
	fs.DurationVar(&f.taskDuration, "task-duration", 2*time.Second, "how long Tencent async tasks stay RUNNING")
	fs.IntVar(&f.ec2Quota, "ec2-address-quota", 5, "EC2 Elastic IP quota")
	fs.IntVar(&f.tencentQuota, "tencent-address-quota", 20, "Tencent EIP quota")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow listening on a non-loopback address")
	fs.StringVar(&f.adminTokenFile, "admin-token-file", "", "file holding the admin API's bearer token (else "+cloudsim.AdminTokenEnv+"; neither: the admin API is off)")
	fs.StringVar(&f.adminHosts, "admin-host", "", "comma-separated Host header values the admin API answers besides loopback names")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, nil
}

// options turns flags and the config file into emulator options; flags
// that were set explicitly win over the file. getenv reads the
// environment (the admin token).
func (f *flags) options(log *slog.Logger, getenv func(string) string) (cloudsim.Options, error) {
	opts := cloudsim.Options{Seed: f.seed, Logger: log}
	token, err := f.adminToken(getenv)
	if err != nil {
		return opts, err
	}
	opts.AdminToken = token
	for _, h := range strings.Split(f.adminHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			opts.AdminHosts = append(opts.AdminHosts, h)
		}
	}
	if f.config != "" {
		c, err := cloudsim.LoadConfig(f.config)
		if err != nil {
			return opts, err
		}
		opts.Settings = c.Settings
		opts.Fixtures = &c.Fixtures
	}
	s := &opts.Settings
	if f.set["rate-limit-scale"] {
		s.RateLimitScale = f.rateLimitScale
	}
	if f.set["no-rate-limits"] {
		s.RateLimitsDisabled = f.noRateLimits
	}
	if f.set["task-duration"] {
		s.TaskDuration = core.Duration(f.taskDuration)
	}
	if f.set["ec2-address-quota"] {
		s.EC2AddressQuota = f.ec2Quota
	}
	if f.set["tencent-address-quota"] {
		s.TencentAddressQuota = f.tencentQuota
	}
	if f.manualClock {
		opts.Clock = core.NewManualClock(time.Now().UTC().Truncate(time.Second))
	}
	return opts, nil
}

// minAdminToken is the shortest admin token accepted: a token is all that
// stands between a local process and the emulated account's state.
const minAdminToken = 16

// adminToken reads the admin token from --admin-token-file, else the
// environment; none is no token (the admin API is off).
func (f *flags) adminToken(getenv func(string) string) (string, error) {
	token := getenv(cloudsim.AdminTokenEnv)
	if f.adminTokenFile != "" {
		b, err := os.ReadFile(f.adminTokenFile)
		if err != nil {
			return "", fmt.Errorf("--admin-token-file: %w", err)
		}
		token = string(b)
	}
	token = strings.TrimSpace(token)
	if token != "" && len(token) < minAdminToken {
		return "", fmt.Errorf("the admin token is %d characters long; use at least %d", len(token), minAdminToken)
	}
	return token, nil
}

// newHTTPServer serves h with every timeout set: a client that sends or
// reads slowly, or leaves a connection idle, cannot hold it for ever. The
// cloud fronts and the admin API cap request bodies themselves.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Answers are small; a Tencent task is polled, never waited on.
		WriteTimeout:   60 * time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
	}
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	ho := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, ho)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
}

// checkLoopback refuses to expose the emulator beyond this machine unless
// asked to: the admin API is not authenticated and the keys are public.
func checkLoopback(addr string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q is not a loopback address; pass --allow-remote to listen on it anyway", addr)
	}
	return nil
}

func run(ctx context.Context, args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	log, err := newLogger(f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	if err := checkLoopback(f.addr, f.allowRemote); err != nil {
		return err
	}
	opts, err := f.options(log, os.Getenv)
	if err != nil {
		return err
	}
	if opts.AdminToken == "" {
		log.Warn("The admin API is off: no admin token (" + cloudsim.AdminTokenEnv + " or --admin-token-file)")
	}
	sim, err := cloudsim.New(opts)
	if err != nil {
		return fmt.Errorf("starting the emulator: %w", err)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.addr, err)
	}
	url := "http://" + ln.Addr().String()
	if f.addrFile != "" {
		if err := os.WriteFile(f.addrFile, []byte(url+"\n"), 0o644); err != nil {
			_ = ln.Close()
			return fmt.Errorf("writing --addr-file: %w", err)
		}
	}
	srv := newHTTPServer(sim)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s := sim.World().Settings()
	log.Info("Started cloud emulator", "url", url, "seed", f.seed, "manualClock", f.manualClock,
		"rateLimitsDisabled", s.RateLimitsDisabled, "rateLimitScale", s.RateLimitScale,
		"ec2AddressQuota", s.EC2AddressQuota, "tencentAddressQuota", s.TencentAddressQuota, "taskDuration", s.TaskDuration.D())

	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("Stopping cloud emulator")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "edgeplane-cloudsim:", err)
		os.Exit(1)
	}
}
