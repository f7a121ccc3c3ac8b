// Command podreport is the test workload the real-node tests and the demo
// run (the podreport image): an HTTP server that reports the pod it runs in
// (name, namespace, node and IPs from the downward API's environment
// variables, and every interface's addresses as the pod itself sees them)
// and that can be told to fail its readiness probe.
//
//	podreport [-listen :8080] [-unready-file /tmp/podreport-unready]
//	podreport fail-readiness | recover [-unready-file ...]
//
// GET / answers the report as JSON, GET /healthz 200 while the process
// runs, GET /readyz 200, or 503 while the unready file exists.
// `kubectl exec <pod> -- /podreport fail-readiness` creates that file and
// `recover` removes it (the image has no shell, so the binary does it).
//
// What it trusts: the port serves only reads, no request changes anything,
// and what it tells (a pod's name, namespace, node and addresses) is what
// anyone who can reach the pod's IP can already see of it, so it answers
// without authentication: the kubelet's probes cannot authenticate, and the
// tests reach it as any client of a Service would. Switching readiness is
// not on the port: it takes `kubectl exec`, which the API server
// authenticates and authorises. It is a test image and never part of the
// chart. Requests have header, read, write and idle timeouts, headers are
// capped and a request with a body is refused.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

const defaultUnreadyFile = "/tmp/podreport-unready"

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "podreport:", err)
		os.Exit(1)
	}
}

func run(args []string, log io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("podreport "+cmd, flag.ContinueOnError)
	fs.SetOutput(log)
	unready := fs.String("unready-file", defaultUnreadyFile, "while this file exists, /readyz answers 503")
	listen := defaultListen
	if cmd == "serve" {
		fs.StringVar(&listen, "listen", defaultListen, "address to serve on")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch cmd {
	case "serve":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		return serve(ctx, listen, *unready, log)
	case "fail-readiness":
		return os.WriteFile(*unready, nil, 0o644)
	case "recover":
		if err := os.Remove(*unready); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	default:
		return fmt.Errorf("unknown command %q: want serve (the default), fail-readiness or recover", cmd)
	}
}

const defaultListen = ":8080"

// serve answers on addr until ctx ends, then lets requests in flight finish
// (a rollout's last requests to this pod succeed) for up to shutdownGrace.
func serve(ctx context.Context, addr, unreadyFile string, log io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := newServer(handler(os.Getenv, unreadyFile, interfaces))
	_, _ = fmt.Fprintf(log, "podreport: serving on %s\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	_, _ = fmt.Fprintln(log, "podreport: stopped")
	return nil
}

const shutdownGrace = 10 * time.Second

func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
}

// Report is what GET / answers.
type Report struct {
	Pod        Pod         `json:"pod"`
	Hostname   string      `json:"hostname"`
	Interfaces []Interface `json:"interfaces"`
	Ready      bool        `json:"ready"`
	// Client is the address the request came from, as this pod sees it
	// (whether a Service or ingress path kept the client's address).
	Client string `json:"client"`
}

// Pod is what the downward API told the container about its pod: the
// environment variables POD_NAME, POD_NAMESPACE, NODE_NAME, POD_IP and
// POD_IPS (status.podIPs, comma-separated); empty when not set.
type Pod struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Node      string   `json:"node"`
	IP        string   `json:"ip"`
	IPs       []string `json:"ips,omitempty"`
}

// Interface is one network interface and its addresses in CIDR form.
type Interface struct {
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
}

func interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]Interface, 0, len(ifs))
	for _, i := range ifs {
		addrs, err := i.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", i.Name, err)
		}
		it := Interface{Name: i.Name, Addresses: []string{}}
		for _, a := range addrs {
			it.Addresses = append(it.Addresses, a.String())
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b Interface) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func handler(getenv func(string) string, unreadyFile string, ifaces func() ([]Interface, error)) http.Handler {
	ready := func() bool {
		_, err := os.Stat(unreadyFile)
		return errors.Is(err, os.ErrNotExist)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready: "+unreadyFile+" exists", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		list, err := ifaces()
		if err != nil {
			http.Error(w, "listing interfaces: "+err.Error(), http.StatusInternalServerError)
			return
		}
		host, _ := os.Hostname()
		rep := Report{
			Pod: Pod{
				Name:      getenv("POD_NAME"),
				Namespace: getenv("POD_NAMESPACE"),
				Node:      getenv("NODE_NAME"),
				IP:        getenv("POD_IP"),
			},
			Hostname:   host,
			Interfaces: list,
			Ready:      ready(),
			Client:     r.RemoteAddr,
		}
		if ips := getenv("POD_IPS"); ips != "" {
			rep.Pod.IPs = strings.Split(ips, ",")
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No endpoint takes a body: refuse one rather than let the server
		// read and discard it.
		if r.ContentLength != 0 {
			http.Error(w, "request bodies are not accepted", http.StatusRequestEntityTooLarge)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
