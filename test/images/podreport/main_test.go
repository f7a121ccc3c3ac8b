package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	// The process test re-runs this binary as the command itself.
	if os.Getenv("PODREPORT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testHandler(t *testing.T) (http.Handler, string) {
	t.Helper()
	unready := filepath.Join(t.TempDir(), "unready")
	env := map[string]string{
		"POD_NAME": "web-0", "POD_NAMESPACE": "demo", "NODE_NAME": "node-a",
		"POD_IP": "10.0.0.7", "POD_IPS": "10.0.0.7,fd00::7",
	}
	ifaces := func() ([]Interface, error) {
		return []Interface{{Name: "eth0", Addresses: []string{"10.0.0.7/24", "192.0.2.10/32"}}, {Name: "lo", Addresses: []string{"127.0.0.1/8"}}}, nil
	}
	return handler(func(k string) string { return env[k] }, unready, ifaces), unready
}

func do(t *testing.T, h http.Handler, method, target string, body io.Reader) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, body))
	return rec
}

func TestReportsThePodAndItsInterfaces(t *testing.T) {
	h, _ := testHandler(t)
	rec := do(t, h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d %s", rec.Code, rec.Body)
	}
	var got Report
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	want := Pod{Name: "web-0", Namespace: "demo", Node: "node-a", IP: "10.0.0.7", IPs: []string{"10.0.0.7", "fd00::7"}}
	if got.Pod.Name != want.Name || got.Pod.Namespace != want.Namespace || got.Pod.Node != want.Node ||
		got.Pod.IP != want.IP || strings.Join(got.Pod.IPs, ",") != strings.Join(want.IPs, ",") {
		t.Errorf("pod = %+v, want %+v", got.Pod, want)
	}
	if len(got.Interfaces) != 2 || got.Interfaces[0].Name != "eth0" || got.Interfaces[0].Addresses[1] != "192.0.2.10/32" {
		t.Errorf("interfaces = %+v", got.Interfaces)
	}
	if !got.Ready || got.Client == "" {
		t.Errorf("ready = %v, client = %q; want ready and the client's address", got.Ready, got.Client)
	}
}

func TestReadinessFollowsTheUnreadyFile(t *testing.T) {
	h, unready := testHandler(t)
	check := func(step string, want int) {
		t.Helper()
		if rec := do(t, h, http.MethodGet, "/readyz", nil); rec.Code != want {
			t.Errorf("%s: /readyz = %d %q, want %d", step, rec.Code, rec.Body, want)
		}
		if rec := do(t, h, http.MethodGet, "/healthz", nil); rec.Code != http.StatusOK {
			t.Errorf("%s: /healthz = %d, want 200 whatever readiness says", step, rec.Code)
		}
	}
	check("at start", http.StatusOK)
	if err := run([]string{"fail-readiness", "-unready-file", unready}, io.Discard); err != nil {
		t.Fatal(err)
	}
	check("after fail-readiness", http.StatusServiceUnavailable)
	if err := run([]string{"recover", "-unready-file", unready}, io.Discard); err != nil {
		t.Fatal(err)
	}
	check("after recover", http.StatusOK)
	if err := run([]string{"recover", "-unready-file", unready}, io.Discard); err != nil {
		t.Errorf("recover when already ready: %v, want no error", err)
	}
}

func TestRefusesBodiesWritesAndUnknownPaths(t *testing.T) {
	h, _ := testHandler(t)
	for _, tc := range []struct {
		method, target string
		body           io.Reader
		want           int
	}{
		{http.MethodGet, "/", strings.NewReader("x"), http.StatusRequestEntityTooLarge},
		{http.MethodPost, "/readyz", nil, http.StatusMethodNotAllowed},
		{http.MethodDelete, "/", nil, http.StatusMethodNotAllowed},
		{http.MethodGet, "/fail-readiness", nil, http.StatusNotFound},
	} {
		if rec := do(t, h, tc.method, tc.target, tc.body); rec.Code != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.target, rec.Code, tc.want)
		}
	}
}

func TestServerHasTimeoutsAndAHeaderCap(t *testing.T) {
	s := newServer(http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 {
		t.Errorf("server %+v: every timeout and the header cap must be set", s)
	}
}

func TestBadArgumentsAreErrors(t *testing.T) {
	for _, args := range [][]string{{"explode"}, {"serve", "extra"}, {"-nope"}, {"recover", "-listen", ":1"}} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}

// TestServesUntilSIGTERMThenExitsZero runs the command as a process on
// loopback and stops it the way the kubelet does.
func TestServesUntilSIGTERMThenExitsZero(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-listen", "127.0.0.1:0", "-unready-file", filepath.Join(t.TempDir(), "unready"))
	cmd.Env = append(os.Environ(), "PODREPORT_TEST_MAIN=1", "POD_NAME=proc-0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatalf("no output from podreport: %v", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "podreport: serving on ")
	if !ok {
		t.Fatalf("first line %q does not name the address", lines.Text())
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	err = json.NewDecoder(resp.Body).Decode(&rep)
	_ = resp.Body.Close()
	if err != nil || rep.Pod.Name != "proc-0" || len(rep.Interfaces) == 0 {
		t.Fatalf("report %+v, %v: want pod proc-0 and this machine's interfaces", rep, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v, want exit status 0; stderr: %s", err, rest)
	}
	if !strings.Contains(string(rest), "podreport: stopped") {
		t.Errorf("stderr after SIGTERM %q, want it to say it stopped", rest)
	}
}
