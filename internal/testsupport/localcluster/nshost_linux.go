//go:build linux

package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/containernetworking/plugins/pkg/ns"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// nsHost is one machine of the real nodes: a process holding a network
// namespace and a mount namespace of its own, which every daemon of that
// machine joins through nsenter. The namespaces have no name under
// /var/run/netns: they go with their last process, so nothing of them
// outlives the cluster.
//
// The mount namespace gives the machine its own /run, /var/lib and /var/log
// (directories under the host's dir), because the kubelet, containerd and
// runc write below those paths whatever they are configured with
// (/var/lib/kubelet/device-plugins, /var/log/pods, /var/log/containers,
// /run/containerd's shim sockets): in a private mount namespace those
// writes stay off the machine, two nodes do not share them, and the
// kubelet's bind mount of its root directory, containerd's overlay mounts
// and the pods' volume mounts vanish with the namespace.
type nsHost struct {
	name   string
	dir    string
	holder *process
	netns  ns.NetNS
}

// nsHostDirs are the directories each host has its own copy of.
var nsHostDirs = []string{"/run", "/var/lib", "/var/log"}

// nodeOverlays are the directories a real node sees the machine's copy of
// with its own changes on top (an overlay whose upper directory is the
// node's, nodeOverlayUpper): the CNI configuration and plugins live at
// their usual paths, /etc/cni/net.d and /opt/cni/bin, where the chart's
// DaemonSet installs edgeplane-cni-ipam and its kubeconfig through
// hostPath volumes, and neither the machine nor the other nodes see them.
var nodeOverlays = []string{"/etc", "/opt"}

// nodeOverlayUpper is where a host in dir keeps its changes to the
// overlaid directory d: files written there before the host starts are
// part of its view.
func nodeOverlayUpper(dir, d string) string { return filepath.Join(dir, "overlay", d, "upper") }

// kubeletTunables are the kernel settings the kubelet insists on (it
// writes them unless protectKernelDefaults makes it fail instead). They are
// global to the machine, not per namespace, and kernel/panic_on_oops=1 would
// turn any oops on this shared machine into a reboot; so a node's mount
// namespace shows the kubelet the values it wants, in files bind-mounted
// over /proc/sys, and the machine's own settings stay as they are.
var kubeletTunables = map[string]int{
	utilsysctl.VMOvercommitMemory: utilsysctl.VMOvercommitMemoryAlways,
	utilsysctl.VMPanicOnOOM:       utilsysctl.VMPanicOnOOMInvokeOOMKiller,
	utilsysctl.KernelPanic:        utilsysctl.KernelPanicRebootTimeout,
	utilsysctl.KernelPanicOnOops:  utilsysctl.KernelPanicOnOopsAlways,
	utilsysctl.RootMaxKeys:        utilsysctl.RootMaxKeysSetting,
	utilsysctl.RootMaxBytes:       utilsysctl.RootMaxBytesSetting,
}

// tunableMasks returns the settings whose machine value differs from what
// want asks for: those need a mask. read reads a setting's current value.
func tunableMasks(want map[string]int, read func(name string) (int, error)) (map[string]int, error) {
	masks := map[string]int{}
	for name, v := range want {
		got, err := read(name)
		if err != nil {
			return nil, err
		}
		if got != v {
			masks[name] = v
		}
	}
	return masks, nil
}

// startNSHost starts the holder of a new host's namespaces, moves it into
// the cluster's cgroup and gives it its own nsHostDirs, an overlay of each
// of overlays (nodeOverlayUpper) and, where masks says so, its own view of
// kernel settings.
func (c *Cluster) startNSHost(name, dir string, masks map[string]int, overlays []string) (_ *nsHost, err error) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	attr := sysProcAttr()
	// Go makes the new mount namespace's mounts private before exec, so
	// nothing mounted in it propagates back to the machine.
	attr.Unshareflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWNS
	p, err := startProcessAttr(name+"-namespaces", sleep, []string{"infinity"}, nil, c.logDir(), attr)
	if err != nil {
		return nil, err
	}
	h := &nsHost{name: name, dir: dir, holder: p}
	defer func() {
		if err != nil {
			h.close()
			_ = p.stop(c.opts.StopTimeout, c.log)
		}
	}()
	if err := c.real.cgroups.track(p.pid()); err != nil {
		return nil, err
	}
	// mount -n: util-linux would otherwise note the mounts in the
	// machine's /run/mount (the host's /run is not yet its own).
	for _, d := range nsHostDirs {
		src := filepath.Join(dir, d)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", src, err)
		}
		if err := h.run("mount", "-n", "--bind", src, d); err != nil {
			return nil, err
		}
	}
	for _, d := range overlays {
		upper, work := nodeOverlayUpper(dir, d), filepath.Join(dir, "overlay", d, "work")
		for _, sub := range []string{upper, work} {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return nil, fmt.Errorf("creating %s: %w", sub, err)
			}
		}
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", d, upper, work)
		if err := h.run("mount", "-n", "-t", "overlay", "overlay", "-o", opts, d); err != nil {
			return nil, err
		}
	}
	for setting, v := range masks {
		file := filepath.Join(dir, "sysctl", strings.ReplaceAll(setting, "/", "."))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", filepath.Dir(file), err)
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(v)+"\n"), 0o444); err != nil {
			return nil, fmt.Errorf("writing %s: %w", file, err)
		}
		if err := h.run("mount", "-n", "--bind", "-o", "ro", file, "/proc/sys/"+setting); err != nil {
			return nil, err
		}
	}
	h.netns, err = ns.GetNS(fmt.Sprintf("/proc/%d/ns/net", p.pid()))
	if err != nil {
		return nil, fmt.Errorf("opening the network namespace of %s: %w", name, err)
	}
	c.track(p)
	return h, nil
}

// nsenter is the command line that runs bin in the host's namespaces.
func (h *nsHost) nsenter(bin string, args ...string) (string, []string) {
	return "nsenter", append([]string{"--target", strconv.Itoa(h.holder.pid()), "--net", "--mount", "--", bin}, args...)
}

// run runs a short command in the host's namespaces.
func (h *nsHost) run(bin string, args ...string) error {
	name, argv := h.nsenter(bin, args...)
	out, err := exec.Command(name, argv...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w: %s", h.name, bin, strings.Join(args, " "), err, out)
	}
	return nil
}

// startDaemon starts a long-running process of this host, in its
// namespaces and in the cluster's cgroup, logging to <name>.log.
func (c *Cluster) startDaemon(h *nsHost, name, bin string, args ...string) (*process, error) {
	cmd, argv := h.nsenter(bin, args...)
	p, err := startProcess(name, cmd, argv, nil, c.logDir())
	if err != nil {
		return nil, err
	}
	// Moved at once: the daemons fork nothing lasting before they serve.
	if err := c.real.cgroups.track(p.pid()); err != nil {
		_ = p.stop(c.opts.StopTimeout, c.log)
		return nil, err
	}
	return p, nil
}

// dial connects to addr from inside the host's network namespace. The
// socket belongs to the namespace it was created in, so the connection
// works from any goroutine afterwards.
func (h *nsHost) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := h.netns.Do(func(ns.NetNS) error {
		var err error
		conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

// listen listens on addr inside the host's network namespace.
func (h *nsHost) listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := h.netns.Do(func(ns.NetNS) error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listening on %s in %s: %w", addr, h.name, err)
	}
	return l, nil
}

// path is where the machine sees p of the host's own view (its mount
// namespace, through its holder's root).
func (h *nsHost) path(p string) string {
	return filepath.Join(fmt.Sprintf("/proc/%d/root", h.holder.pid()), p)
}

// close releases the handle on the network namespace; the namespace goes
// once its processes have.
func (h *nsHost) close() {
	if h.netns != nil {
		_ = h.netns.Close()
		h.netns = nil
	}
}
