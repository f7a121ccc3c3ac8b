// Command nodetest is the one program in the image the local cluster's
// real nodes start with: a static binary without libc, so the image needs
// no base. It is the pod sandbox's process (pause) and, in the real-node
// tests, a pod that serves its name, fetches another pod's, and lists its
// interfaces for `kubectl exec`.
//
//	nodetest pause            hold the pod's namespaces until SIGTERM
//	nodetest serve [-addr A]  answer every GET with the pod's name
//	nodetest get URL          print what URL answers (non-2xx: exit 1)
//	nodetest addrs            print "<interface> <address/length>" lines
//	nodetest apiserver        print the API server's version, asked through
//	                          the kubernetes Service with the pod's
//	                          service account (CA and token)
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nodetest pause|serve|get|addrs|apiserver")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "pause":
		pause()
	case "serve":
		err = serve(args)
	case "get":
		err = get(args)
	case "addrs":
		err = addrs(os.Stdout)
	case "apiserver":
		err = apiserver()
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodetest: %v\n", err)
		os.Exit(1)
	}
}

// pause waits for SIGTERM or SIGINT. As the sandbox's PID 1 it also reaps
// the orphans of a pod sharing its process namespace.
func pause() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}

// serve answers GET / with the pod's name (its hostname) until SIGTERM.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", ":8080", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	name, err := os.Hostname()
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = fmt.Fprintln(w, name)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// The pod's log says it serves (what `kubectl logs` shows).
	fmt.Printf("%s serving on %s\n", name, l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// get prints the body URL answers with.
func get(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: nodetest get URL")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(args[0])
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s: %s", args[0], resp.Status, body)
	}
	_, err = os.Stdout.Write(body)
	return err
}

// addrs lists every interface's addresses, as `ip -o addr` would.
func addrs(w io.Writer) error {
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, iface := range ifaces {
		as, err := iface.Addrs()
		if err != nil {
			return fmt.Errorf("%s: %w", iface.Name, err)
		}
		for _, a := range as {
			if _, err := fmt.Fprintf(w, "%s %s\n", iface.Name, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// serviceAccountDir is where the kubelet mounts the pod's service account.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiserver asks the API server for its version the way an in-cluster
// client does: the kubernetes Service's address from the environment, the
// cluster CA and the pod's token from the service account volume.
func apiserver() error {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return errors.New("KUBERNETES_SERVICE_HOST and _PORT are not set")
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return err
	}
	token, err := os.ReadFile(serviceAccountDir + "/token")
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return errors.New("no certificate in the service account's ca.crt")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(host, port)+"/version", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("GET /version: %s: %s", resp.Status, body)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return fmt.Errorf("GET /version: %w", err)
	}
	fmt.Println(v.GitVersion)
	return nil
}
