package cniipam

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

// TestExamples: the example conflist and NetworkAttachmentDefinition parse
// as libcni and the plugin read them, and the multi-NIC example's request
// is one the extender accepts.
func TestExamples(t *testing.T) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "floatippool", "cni")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A plugin of a list gets the list's name and version from the runtime.
	check := func(what, cniVersion, name string, plugin []byte) Config {
		t.Helper()
		var conf map[string]any
		if err := json.Unmarshal(plugin, &conf); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		conf["cniVersion"], conf["name"] = cniVersion, name
		b, _ := json.Marshal(conf)
		c, err := ParseConfig(b, KubeconfigPath)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return c
	}

	list, err := libcni.ConfListFromBytes(read("10-edgeplane-bridge.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	if c := check("bridge conflist", list.CNIVersion, list.Name, list.Plugins[0].Bytes); c.WaitTimeout != 20*time.Second {
		t.Fatalf("bridge conflist = %+v", c)
	}

	var nad struct {
		Spec struct {
			Config string `json:"config"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(read("network-attachment-definition.yaml"), &nad); err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig([]byte(nad.Spec.Config), KubeconfigPath)
	if err != nil {
		t.Fatalf("NetworkAttachmentDefinition config: %v", err)
	}
	if len(c.Pools) != 1 || c.Pools[0] != "storage" || !c.RoutesSet || len(c.Routes) != 0 {
		t.Fatalf("NetworkAttachmentDefinition config = %+v", c)
	}

	var sts appsv1.StatefulSet
	if err := yaml.Unmarshal(read("multi-nic-statefulset.yaml"), &sts); err != nil {
		t.Fatal(err)
	}
	ifs, err := ipam.ParseInterfaces(sts.Spec.Template.Annotations, sts.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 2 || ifs[0] != (ipam.InterfaceRequest{Interface: "eth0", Pool: "demo"}) || ifs[1] != (ipam.InterfaceRequest{Interface: "net1", Pool: "storage"}) {
		t.Fatalf("multi-NIC example asks for %+v", ifs)
	}
}
