package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/edgeplane/edgeplane/internal/imagebuild"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// TestHostTarballsImportIntoContainerdAndRun builds every image's tarball
// with HostTarball (what the real-node tests and the demo call), checks
// that edgeplane's holds every command under cmd/, imports all three into a
// containerd of the test's own with `ctr -n k8s.io images import`, and runs
// them there: pause as PID 1 stops on SIGTERM with status 0, podreport's
// `podreport fail-readiness` (found on PATH, run as nonroot) marks it
// unready and it stops on SIGTERM, and edgeplane's CNI plugin names the
// version the build stamped. It needs root and Debian's containerd and runc
// (make test installs them).
func TestHostTarballsImportIntoContainerdAndRun(t *testing.T) {
	ctx := context.Background()
	root := repoRoot
	all, err := All(root)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := RevisionOf(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tarballs := map[string]string{}
	for _, spec := range all {
		tarballs[spec.Name] = filepath.Join(dir, spec.Name+".tar")
		if err := HostTarball(ctx, root, tarballs[spec.Name], spec); err != nil {
			t.Fatal(err)
		}
	}
	checkEdgeplaneTarball(t, root, tarballs["edgeplane"], all[0], rev)

	c := startContainerd(t)
	for _, spec := range all {
		c.ctr(t, "images", "import", tarballs[spec.Name])
	}
	listed := strings.Fields(c.ctr(t, "images", "ls", "-q"))
	for _, spec := range all {
		if !slices.Contains(listed, spec.Ref) {
			t.Errorf("containerd lists %q, not %s", listed, spec.Ref)
		}
	}

	pause := c.start(t, PauseRef, "pause-test")
	if uid := c.taskUID(t, "pause-test"); uid != "65535" {
		t.Errorf("pause runs as uid %s, want 65535", uid)
	}
	if out := pause.stop(t, c); !strings.Contains(out, "shutting down, got terminated") {
		t.Errorf("pause's output %q does not say it stopped on SIGTERM", out)
	}

	podreport := c.start(t, PodReportRef, "podreport-test")
	c.ctr(t, "task", "exec", "--fifo-dir", filepath.Join(c.dir, "fifo"), "--exec-id", "fail", "podreport-test", "podreport", "fail-readiness")
	unready, err := os.Stat(fmt.Sprintf("/proc/%d/root/tmp/podreport-unready", c.taskPID(t, "podreport-test")))
	if err != nil {
		t.Errorf("after podreport fail-readiness: %v", err)
	} else if st := unready.Sys().(*syscall.Stat_t); st.Uid != imagebuild.NonrootUID {
		t.Errorf("the unready file belongs to uid %d, want nonroot's %d", st.Uid, imagebuild.NonrootUID)
	}
	if out := podreport.stop(t, c); !strings.Contains(out, "podreport: stopped") {
		t.Errorf("podreport's output %q does not say it stopped", out)
	}

	spec := all[0]
	c.ids = append(c.ids, "edgeplane-test")
	out := c.ctr(t, append([]string{"run", "--rm"}, append(c.runFlags(), spec.Ref, "edgeplane-test", "/edgeplane-cni-ipam")...)...)
	if want := "edgeplane-cni-ipam " + rev.Version + ":"; !strings.Contains(out, want) {
		t.Errorf("edgeplane-cni-ipam in the image printed %q, want %q", out, want)
	}
}

func checkEdgeplaneTarball(t *testing.T, root, path string, spec Spec, rev Revision) {
	t.Helper()
	tag, err := name.NewTag(spec.Ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("the tarball is not tagged %s: %v", spec.Ref, err)
	}
	checkConfig(t, img, spec, HostPlatform(), rev)
	files := imageFiles(t, img)
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var binaries []string
	for name, f := range files {
		if f.layer == 1 {
			binaries = append(binaries, name)
		}
	}
	var want []string
	for _, c := range cmds {
		want = append(want, c.Name())
		checkBinary(t, c.Name(), files[c.Name()], HostPlatform())
	}
	slices.Sort(binaries)
	if !slices.Equal(binaries, want) {
		t.Errorf("the binaries layer holds %q, want every command under cmd/: %q", binaries, want)
	}
	if ca := files["etc/ssl/certs/ca-certificates.crt"]; !bytes.Equal(ca.content, imagebuild.CACertificates()) || ca.layer != 0 {
		t.Errorf("the base layer's CA certificates: %d bytes in layer %d", len(ca.content), ca.layer)
	}
}

// containerd is a containerd of the test's own: its root, state, sockets,
// runc state and FIFOs in a temporary directory, stopped and its leftovers
// checked when the test ends.
type containerd struct {
	dir, socket string
	ids         []string
}

func startContainerd(t *testing.T) *containerd {
	t.Helper()
	// Short: a unix socket's path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "ctrd-")
	if err != nil {
		t.Fatal(err)
	}
	c := &containerd{dir: dir, socket: filepath.Join(dir, "containerd.sock")}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
# Only images and tasks: no CRI (no kubelet here).
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.socket, c.socket+".ttrpc")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	daemon := exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	daemon.Stdout, daemon.Stderr = &log, &log
	daemon.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	shimDirs := absentDirs("/run/containerd/s", "/run/containerd/fifo", "/run/containerd")
	if err := daemon.Start(); err != nil {
		t.Fatalf("starting containerd (Debian's containerd package; make test installs it): %v", err)
	}
	t.Cleanup(func() {
		c.removeContainers(t)
		_ = daemon.Process.Signal(syscall.SIGTERM)
		_ = daemon.Wait()
		if t.Failed() {
			t.Logf("containerd's log:\n%s", log.String())
		}
		c.checkNoMounts(t)
		// The runc shim puts its socket under /run/containerd/s whatever
		// the config says; remove the directories if this test made them
		// and they are empty (a node's containerd may use them meanwhile).
		for _, d := range shimDirs {
			_ = syscall.Rmdir(d)
		}
		_ = os.RemoveAll(dir)
	})
	eventually.That(context.Background(), t, "containerd to serve", func() (bool, string) {
		out, err := c.ctrErr("version")
		return err == nil, out + log.String()
	})
	return c
}

// absentDirs returns which of dirs do not exist, deepest first.
func absentDirs(dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			out = append(out, d)
		}
	}
	return out
}

func (c *containerd) ctrErr(args ...string) (string, error) {
	cmd := exec.Command("ctr", append([]string{"--address", c.socket, "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *containerd) ctr(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.ctrErr(args...)
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// runFlags keep a container's runc state and FIFOs in the test's directory
// and out of any cgroup of the machine's (no cgroup left behind).
func (c *containerd) runFlags() []string {
	return []string{"--runc-root", filepath.Join(c.dir, "runc"), "--fifo-dir", filepath.Join(c.dir, "fifo"), "--cgroup", ""}
}

// task is a container `ctr run` runs in the foreground.
type task struct {
	id     string
	cmd    *exec.Cmd
	output *bytes.Buffer
}

func (c *containerd) start(t *testing.T, ref, id string) *task {
	t.Helper()
	c.ids = append(c.ids, id)
	var out bytes.Buffer
	cmd := exec.Command("ctr", append([]string{"--address", c.socket, "--namespace", "k8s.io", "run", "--rm"},
		append(c.runFlags(), ref, id)...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually.That(context.Background(), t, id+" to run", func() (bool, string) {
		ls, _ := c.ctrErr("task", "ls")
		for line := range strings.Lines(ls) {
			if f := strings.Fields(line); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
				return true, ""
			}
		}
		return false, ls + out.String()
	})
	return &task{id: id, cmd: cmd, output: &out}
}

// stop sends SIGTERM to the task, as the kubelet does, and fails the test
// unless it exits with status 0; it returns what the task printed.
func (tk *task) stop(t *testing.T, c *containerd) string {
	t.Helper()
	c.ctr(t, "task", "kill", "--signal", "SIGTERM", tk.id)
	done := make(chan error, 1)
	go func() { done <- tk.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s after SIGTERM: %v, want exit status 0; output:\n%s", tk.id, err, tk.output)
		}
	case <-time.After(eventually.Timeout):
		_ = tk.cmd.Process.Kill()
		t.Fatalf("%s did not stop on SIGTERM; output:\n%s", tk.id, tk.output)
	}
	return tk.output.String()
}

func (c *containerd) taskPID(t *testing.T, id string) int {
	t.Helper()
	for line := range strings.Lines(c.ctr(t, "task", "ls")) {
		var name, status string
		var pid int
		if n, _ := fmt.Sscan(line, &name, &pid, &status); n == 3 && name == id {
			return pid
		}
	}
	t.Fatalf("no task %s", id)
	return 0
}

func (c *containerd) taskUID(t *testing.T, id string) string {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.taskPID(t, id)))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	return ""
}

// removeContainers kills and removes what a failed test left running, so
// no shim outlives it.
func (c *containerd) removeContainers(t *testing.T) {
	for _, id := range c.ids {
		if _, err := c.ctrErr("task", "kill", "--signal", "SIGKILL", id); err == nil {
			t.Logf("%s was still running", id)
		}
		_, _ = c.ctrErr("task", "delete", "--force", id)
		_, _ = c.ctrErr("container", "delete", id)
	}
}

// checkNoMounts fails the test if a mount under the test's directory (a
// container's rootfs, a snapshot) outlived containerd, and unmounts it.
func (c *containerd) checkNoMounts(t *testing.T) {
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Error(err)
		return
	}
	for line := range strings.Lines(string(mountinfo)) {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], c.dir) {
			t.Errorf("%s is still mounted", f[4])
			_ = syscall.Unmount(f[4], syscall.MNT_DETACH)
		}
	}
}
