package core

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// Snapshot is the whole emulator state, for the admin API and for tests that
// assert "nothing leaked". Every list is sorted, so two snapshots of equal
// states are equal.
type Snapshot struct {
	Time     time.Time        `json:"time"`
	Seed     uint64           `json:"seed"`
	EC2      EC2Snapshot      `json:"ec2"`
	Tencent  TencentSnapshot  `json:"tencent"`
	Faults   []FaultSpec      `json:"faults"`
	Settings SettingsView     `json:"settings"`
	Stats    map[string]int64 `json:"stats"`
}

// EC2Snapshot is the EC2 part of a Snapshot.
type EC2Snapshot struct {
	Addresses         []EC2Address          `json:"addresses"`
	NetworkInterfaces []EC2NetworkInterface `json:"networkInterfaces"`
	Instances         []EC2Instance         `json:"instances"`
}

// TencentSnapshot is the Tencent part of a Snapshot.
type TencentSnapshot struct {
	Addresses         []TCAddress          `json:"addresses"`
	Instances         []TCInstance         `json:"instances"`
	NetworkInterfaces []TCNetworkInterface `json:"networkInterfaces"`
	Tasks             []TCTask             `json:"tasks"`
	ClientTokens      int                  `json:"clientTokens"`
}

// SettingsView is Settings with the secret keys left out: the snapshot
// lists which SecretIds and access key IDs are accepted, never the keys.
type SettingsView struct {
	Settings
	// TencentCredentials and EC2Credentials shadow the embedded fields of
	// the same JSON names and are always nil, so the keys never reach the
	// JSON.
	TencentCredentials  map[string]string        `json:"tencentCredentials,omitempty"`
	EC2Credentials      map[string]EC2Credential `json:"ec2Credentials,omitempty"`
	TencentSecretIDs    []string                 `json:"tencentSecretIds"`
	EC2AccessKeyIDs     []string                 `json:"ec2AccessKeyIds"`
	EffectiveRateLimits map[string]Bucket        `json:"effectiveRateLimits,omitempty"`
}

// Snapshot returns the current state.
func (w *World) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	now := w.clock.Now()
	s := Snapshot{
		Time:   now,
		Seed:   w.seed,
		Faults: w.faultsLocked(),
		Stats:  maps.Clone(w.stats),
		Settings: SettingsView{
			Settings:         w.settings,
			TencentSecretIDs: slices.Sorted(maps.Keys(w.settings.TencentCredentials)),
			EC2AccessKeyIDs:  slices.Sorted(maps.Keys(w.settings.EC2Credentials)),
		},
		EC2: EC2Snapshot{
			Addresses:         []EC2Address{},
			NetworkInterfaces: []EC2NetworkInterface{},
			Instances:         []EC2Instance{},
		},
		Tencent: TencentSnapshot{
			Addresses:         []TCAddress{},
			Instances:         []TCInstance{},
			NetworkInterfaces: []TCNetworkInterface{},
			Tasks:             []TCTask{},
			ClientTokens:      len(w.tc.tokens),
		},
	}
	if !w.settings.RateLimitsDisabled {
		s.Settings.EffectiveRateLimits = map[string]Bucket{}
		for k := range DefaultBuckets() {
			b, _ := effectiveBucket(&w.settings, k)
			s.Settings.EffectiveRateLimits[k] = b
		}
	}
	for _, a := range sortedBy(w.ec2.addresses, func(a *ec2Address) int64 { return a.seq }) {
		s.EC2.Addresses = append(s.EC2.Addresses, w.ec2AddressView(a, now))
	}
	for _, e := range sortedBy(w.ec2.enis, func(e *ec2ENI) int64 { return e.seq }) {
		s.EC2.NetworkInterfaces = append(s.EC2.NetworkInterfaces, w.ec2ENIView(e))
	}
	for _, id := range slices.Sorted(maps.Keys(w.ec2.instances)) {
		in := w.ec2.instances[id]
		s.EC2.Instances = append(s.EC2.Instances, EC2Instance{
			InstanceID: in.ID, VpcID: in.VpcID, SubnetID: in.SubnetID,
			AvailabilityZone: in.AvailabilityZone, Tags: sortedTags(in.Tags),
		})
	}
	for _, a := range sortedBy(w.tc.addresses, func(a *tcAddress) int64 { return a.seq }) {
		s.Tencent.Addresses = append(s.Tencent.Addresses, w.tcAddressView(a, now))
	}
	for _, in := range sortedBy(w.tc.instances, func(in *tcInstance) int64 { return in.seq }) {
		s.Tencent.Instances = append(s.Tencent.Instances, w.tcInstanceView(in))
	}
	for _, e := range sortedBy(w.tc.enis, func(e *tcENI) int64 { return e.seq }) {
		s.Tencent.NetworkInterfaces = append(s.Tencent.NetworkInterfaces, w.tcENIView(e))
	}
	for _, id := range slices.Sorted(maps.Keys(w.tc.tasks)) {
		t := w.tc.tasks[id]
		s.Tencent.Tasks = append(s.Tencent.Tasks, TCTask{
			TaskID: t.ID, Action: t.Action, AddressIDs: slices.Clone(t.AddressIDs),
			Result: t.Result, CreatedAt: t.CreatedAt, DoneAt: t.DoneAt,
		})
	}
	return s
}

func sortedBy[K comparable, V any](m map[K]V, key func(V) int64) []V {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b V) int { return cmp.Compare(key(a), key(b)) })
	return out
}
