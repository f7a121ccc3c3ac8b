package nodeelasticip

import (
	"strings"
	"testing"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestOptionsValidate: the flags that shape translated NodeElasticIPs are
// checked once, at start, with the flag named in the error.
func TestOptionsValidate(t *testing.T) {
	cases := map[string]struct {
		mutate  func(*Options)
		wantErr string
	}{
		"defaults": {mutate: func(*Options) {}},
		"kubeip pool": {mutate: func(o *Options) {
			o.PoolFilter, o.PoolOrderBy, o.ReleasePolicy, o.Tags = "Name=tag:kubeip,Values=reserved", "Tag:priority", "Retain", "team=edge"
		}},
		"empty selector":              {mutate: func(o *Options) { o.NodeSelector = "" }, wantErr: "--nodeelasticip-node-selector"},
		"bad filter":                  {mutate: func(o *Options) { o.PoolFilter = "Name=instance-id,Values=i-1" }, wantErr: "--nodeelasticip-pool-filter"},
		"order without a pool":        {mutate: func(o *Options) { o.PoolOrderBy = "PublicIp" }, wantErr: "needs a pool filter"},
		"ipv4 pool with a pool":       {mutate: func(o *Options) { o.PoolFilter, o.PublicIPv4Pool = "Name=tag-key,Values=k", "amazon" }, wantErr: "--nodeelasticip-public-ipv4-pool"},
		"delete on a pool":            {mutate: func(o *Options) { o.PoolFilter, o.ReleasePolicy = "Name=tag-key,Values=k", "Delete" }, wantErr: "--nodeelasticip-release-policy"},
		"unknown policy":              {mutate: func(o *Options) { o.ReleasePolicy = "AfterDelay" }, wantErr: "--nodeelasticip-release-policy"},
		"reserved tag":                {mutate: func(o *Options) { o.Tags = "edgeplane.io/cluster=x" }, wantErr: "reserved"},
		"malformed tag":               {mutate: func(o *Options) { o.Tags = "team" }, wantErr: "want key=value"},
		"zero poll":                   {mutate: func(o *Options) { o.PollInterval = 0 }, wantErr: "must be positive"},
		"unknown orphan mode":         {mutate: func(o *Options) { o.OrphanMode = "purge" }, wantErr: "--nodeelasticip-orphan-mode"},
		"selector selecting all":      {mutate: func(o *Options) { o.NodeSelector = "," }, wantErr: "--nodeelasticip-node-selector"},
		"duplicate tag":               {mutate: func(o *Options) { o.Tags = "a=1,a=2" }, wantErr: "appears twice"},
		"taint key empty is no taint": {mutate: func(o *Options) { o.TaintKey = "" }},
	}
	for name, tc := range cases {
		o := DefaultOptions()
		tc.mutate(&o)
		ts, err := o.validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", name, err, tc.wantErr)
		}
		if name == "kubeip pool" && (ts.spec.Allocation.Mode != networkingv1alpha1.NodeElasticIPModePool || ts.spec.Tags["team"] != "edge" ||
			ts.spec.ReleasePolicy != networkingv1alpha1.NodeElasticIPReleaseRetain || ts.spec.TaintKey != networkingv1alpha1.DefaultNodeElasticIPTaintKey) {
			t.Errorf("kubeip pool spec: %+v", ts.spec)
		}
	}
}
