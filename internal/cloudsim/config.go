package cloudsim

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Config is the file format of edgeplane-cloudsim --config (YAML or JSON):
// settings plus the fixtures to seed at start and on reset.
//
//	settings:
//	  ec2AddressQuota: 5
//	  tencentAddressQuota: 20
//	  rateLimitScale: 1
//	  taskDuration: 2s
//	  ec2Credentials:            # default: the well-known emulator pair only
//	    AKIATENANTA000000001: {secretAccessKey: tenant-a-secret, accountId: "210987654321"}
//	  tencentCredentials:        # default: the well-known emulator pair only
//	    AKIDtenantA: tenant-a-secret
//	ec2:
//	  instances:
//	  - instanceId: i-0a1b2c3d4e5f60718
//	    vpcId: vpc-1
//	    networkInterfaces:
//	    - privateIpAddresses: [10.0.1.10, 10.0.1.11]
//	tencent:
//	  instances:
//	  - instanceId: ins-node0001
//	    privateIpAddresses: [10.1.0.5]
type Config struct {
	Settings      core.Settings `json:"settings,omitempty"`
	core.Fixtures `json:",inline"`
}

// LoadConfig reads a config file, rejecting unknown fields.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading emulator config: %w", err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("decoding emulator config %s: %w", path, err)
	}
	return &c, nil
}
