package localcluster

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Options configures Start. The zero value starts a complete cluster without
// nodes in a temporary directory.
type Options struct {
	// Dir holds everything the cluster writes: pki/, kubeconfigs/, etcd/,
	// logs/<component>.log and kwok/. Those sub-directories are wiped at start
	// so a directory can be reused; nothing else in Dir is touched. Empty means
	// a temporary directory that Stop removes.
	Dir string

	// Nodes are created (and waited for to be Ready) before Start returns.
	Nodes []NodeSpec

	// RealNodes starts that many real nodes beside the kwok ones (named
	// real-1 ... real-N, labelled RealNodeLabel=true): each a network and
	// mount namespace of its own on one bridge, with containerd, runc, the
	// reference CNI plugins, a kubelet and kube-proxy, so pods run real
	// containers and Services route as in a cluster. It needs root, cgroup
	// v1, `make real-nodes` (kubelet, kube-proxy, the CNI plugins,
	// containerd), and a cluster directory short enough for unix socket
	// paths (realnodes_linux.go says how it works). The nodes carry no
	// taint: a pod without a node selector may land on one, where its image
	// must have been loaded (NodeImages, LoadImage): nothing is pulled.
	RealNodes int
	// SandboxImage is the pod sandbox (pause) image the real nodes load.
	// Default: BuildNodetestImage's, built at Start.
	SandboxImage NodeImage
	// NodeImages are loaded into every real node before Start returns.
	NodeImages []NodeImage

	// Extra command-line flags, each a single "--name=value" argument. A flag
	// whose name matches one of the defaults replaces it; others are appended.
	APIServerFlags         []string
	ControllerManagerFlags []string
	SchedulerFlags         []string
	KwokFlags              []string

	// KwokConfigs are further kwok configuration files (a KwokConfiguration
	// with its parallelism, more Stages), loaded after the built-in stages.
	KwokConfigs []string

	// DisableControllerManager and DisableScheduler leave those components out.
	// Without the controller manager no ServiceAccounts are created and nodes
	// keep their not-ready taint, so neither Start nor WaitNodeReady waits
	// for those.
	DisableControllerManager bool
	DisableScheduler         bool

	// Scheme is used by Client. Default: client-go's scheme (built-in types).
	Scheme *runtime.Scheme

	// Log receives progress messages. Default: discard.
	Log logr.Logger

	// StartTimeout bounds Start as a whole (default 3m: the machines this runs
	// on are often busy building). StopTimeout is how long each process gets
	// between SIGTERM and SIGKILL (default 15s).
	StartTimeout time.Duration
	StopTimeout  time.Duration
}

func (o *Options) setDefaults() {
	if o.Scheme == nil {
		o.Scheme = clientgoscheme.Scheme
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 15 * time.Second
	}
}
