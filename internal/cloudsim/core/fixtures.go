package core

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
)

// Fixtures seed the emulator with the world a test needs: instances, ENIs
// with private IPs for nodes and pods, and pre-tagged addresses. IDs may be
// given (tests that want fixed names) or left empty (generated from the
// seed). The JSON/YAML field names are the admin API and --config format.
type Fixtures struct {
	EC2     EC2Fixtures     `json:"ec2,omitempty"`
	Tencent TencentFixtures `json:"tencent,omitempty"`
}

// EC2Fixtures seed the EC2 side.
type EC2Fixtures struct {
	Instances         []EC2InstanceFixture `json:"instances,omitempty"`
	NetworkInterfaces []EC2ENIFixture      `json:"networkInterfaces,omitempty"`
	Addresses         []EC2AddressFixture  `json:"addresses,omitempty"`
}

// EC2InstanceFixture is an instance with its ENIs, attached in order
// (device index = position, so the first is the primary ENI).
type EC2InstanceFixture struct {
	InstanceID        string            `json:"instanceId,omitempty"`
	VpcID             string            `json:"vpcId,omitempty"`
	SubnetID          string            `json:"subnetId,omitempty"`
	AvailabilityZone  string            `json:"availabilityZone,omitempty"`
	Tags              map[string]string `json:"tags,omitempty"`
	NetworkInterfaces []EC2ENIFixture   `json:"networkInterfaces,omitempty"`
}

// EC2ENIFixture is an ENI; the first private IP is the primary one.
// IPv4Prefixes model prefix delegation (pod IPs from a /28).
type EC2ENIFixture struct {
	NetworkInterfaceID string            `json:"networkInterfaceId,omitempty"`
	VpcID              string            `json:"vpcId,omitempty"`
	SubnetID           string            `json:"subnetId,omitempty"`
	AvailabilityZone   string            `json:"availabilityZone,omitempty"`
	Description        string            `json:"description,omitempty"`
	InstanceID         string            `json:"instanceId,omitempty"`
	PrivateIPAddresses []string          `json:"privateIpAddresses,omitempty"`
	IPv4Prefixes       []string          `json:"ipv4Prefixes,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
}

// EC2AddressFixture is a pre-existing Elastic IP, optionally associated.
type EC2AddressFixture struct {
	AllocationID       string            `json:"allocationId,omitempty"`
	PublicIP           string            `json:"publicIp,omitempty"`
	PublicIPv4Pool     string            `json:"publicIpv4Pool,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	NetworkInterfaceID string            `json:"networkInterfaceId,omitempty"`
	PrivateIPAddress   string            `json:"privateIpAddress,omitempty"`
	// AccountID owns the address (default Settings.EC2AccountID): an
	// address of another account is one this cluster's keys cannot see
	// or change.
	AccountID string `json:"accountId,omitempty"`
}

// TencentFixtures seed the Tencent side. They are applied in field order:
// instances (with their ENIs), then further ENIs, then private IPs added to
// existing ENIs, then addresses.
type TencentFixtures struct {
	Instances         []TCInstanceFixture  `json:"instances,omitempty"`
	NetworkInterfaces []TCENIFixture       `json:"networkInterfaces,omitempty"`
	PrivateIPs        []TCPrivateIPFixture `json:"privateIpAddresses,omitempty"`
	Addresses         []TCAddressFixture   `json:"addresses,omitempty"`
}

// TCInstanceFixture is a CVM instance. Its primary ENI (NetworkInterfaceID,
// generated when empty) holds PrivateIPAddresses, the first being the
// instance's primary IP; NetworkInterfaces are secondary ENIs attached in
// order (device index 1, 2, …).
type TCInstanceFixture struct {
	InstanceID         string            `json:"instanceId,omitempty"`
	InstanceName       string            `json:"instanceName,omitempty"`
	Zone               string            `json:"zone,omitempty"`
	VpcID              string            `json:"vpcId,omitempty"`
	SubnetID           string            `json:"subnetId,omitempty"`
	NetworkInterfaceID string            `json:"networkInterfaceId,omitempty"`
	PrivateIPAddresses []string          `json:"privateIpAddresses,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	NetworkInterfaces  []TCENIFixture    `json:"networkInterfaces,omitempty"`
}

// TCENIFixture is a secondary ENI: attached to InstanceID (an existing or
// earlier fixture instance; ignored inside TCInstanceFixture, which attaches
// it to that instance) after the instance's other ENIs, or dangling when
// InstanceID is empty. VPC, subnet and zone default to the instance's. The
// first private IP is the ENI's primary IP.
type TCENIFixture struct {
	NetworkInterfaceID string            `json:"networkInterfaceId,omitempty"`
	Name               string            `json:"networkInterfaceName,omitempty"`
	Description        string            `json:"networkInterfaceDescription,omitempty"`
	VpcID              string            `json:"vpcId,omitempty"`
	SubnetID           string            `json:"subnetId,omitempty"`
	Zone               string            `json:"zone,omitempty"`
	InstanceID         string            `json:"instanceId,omitempty"`
	PrivateIPAddresses []string          `json:"privateIpAddresses,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
}

// TCPrivateIPFixture assigns further (secondary) private IPs to an existing
// ENI, as a CNI does for new pods.
type TCPrivateIPFixture struct {
	NetworkInterfaceID string   `json:"networkInterfaceId"`
	PrivateIPAddresses []string `json:"privateIpAddresses"`
}

// TCAddressFixture is a pre-existing address: UNBIND; with InstanceID
// bound to the instance's primary IP (BIND); with NetworkInterfaceID bound
// to PrivateIPAddress of that ENI (default its primary IP): BIND when the
// ENI is attached to an instance, BIND_ENI when it is not.
type TCAddressFixture struct {
	AddressID          string            `json:"addressId,omitempty"`
	AddressIP          string            `json:"addressIp,omitempty"`
	AddressType        string            `json:"addressType,omitempty"`
	AddressName        string            `json:"addressName,omitempty"`
	InternetChargeType string            `json:"internetChargeType,omitempty"`
	AnycastZone        string            `json:"anycastZone,omitempty"`
	Bandwidth          int64             `json:"bandwidth,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	InstanceID         string            `json:"instanceId,omitempty"`
	NetworkInterfaceID string            `json:"networkInterfaceId,omitempty"`
	PrivateIPAddress   string            `json:"privateIpAddress,omitempty"`
}

// FixtureResult lists the IDs of what was created, in fixture order.
type FixtureResult struct {
	EC2Instances         []string `json:"ec2Instances,omitempty"`
	EC2NetworkInterfaces []string `json:"ec2NetworkInterfaces,omitempty"`
	EC2Addresses         []string `json:"ec2Addresses,omitempty"`
	TencentInstances     []string `json:"tencentInstances,omitempty"`
	// TencentNetworkInterfaces lists every ENI created, primary ENIs
	// included, in creation order.
	TencentNetworkInterfaces []string `json:"tencentNetworkInterfaces,omitempty"`
	TencentAddresses         []string `json:"tencentAddresses,omitempty"`
}

var (
	ec2InstanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8,17}$`)
	ec2ENIIDPattern      = regexp.MustCompile(`^eni-[0-9a-f]{8,17}$`)
	ec2AllocIDPattern    = regexp.MustCompile(`^eipalloc-[0-9a-f]{8,17}$`)
)

// ApplyFixtures adds fixtures to the current state. Everything is checked
// before anything is added, so a rejected fixture leaves the state as it was.
func (w *World) ApplyFixtures(f *Fixtures) (*FixtureResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applyFixturesLocked(f)
}

func (w *World) applyFixturesLocked(f *Fixtures) (*FixtureResult, error) {
	if err := w.checkFixtures(f); err != nil {
		return nil, err
	}
	res := &FixtureResult{}
	now := w.clock.Now()

	addENI := func(fx EC2ENIFixture, inst *ec2Instance, index int) error {
		w.ec2.seq++
		e := &ec2ENI{
			ID:               cmp.Or(fx.NetworkInterfaceID, w.ec2ID("eni")),
			VpcID:            fx.VpcID,
			SubnetID:         fx.SubnetID,
			AvailabilityZone: fx.AvailabilityZone,
			Description:      fx.Description,
			MacAddress:       w.mac(),
			PrivateIPs:       slices.Clone(fx.PrivateIPAddresses),
			Tags:             cloneTags(fx.Tags),
			seq:              w.ec2.seq,
		}
		for _, p := range fx.IPv4Prefixes {
			pp, _ := netip.ParsePrefix(p) // checked by checkFixtures
			e.IPv4Prefixes = append(e.IPv4Prefixes, pp.Masked())
		}
		if inst != nil {
			e.VpcID = cmp.Or(e.VpcID, inst.VpcID)
			e.SubnetID = cmp.Or(e.SubnetID, inst.SubnetID)
			e.AvailabilityZone = cmp.Or(e.AvailabilityZone, inst.AvailabilityZone)
			e.InstanceID = inst.ID
			e.DeviceIndex = index
			e.AttachmentID = w.ec2ID("eni-attach")
		} else if fx.InstanceID != "" {
			inst := w.ec2.instances[fx.InstanceID]
			e.InstanceID = inst.ID
			e.AttachmentID = w.ec2ID("eni-attach")
			for _, o := range w.ec2.enis {
				if o.InstanceID == inst.ID {
					e.DeviceIndex = max(e.DeviceIndex, o.DeviceIndex+1)
				}
			}
		}
		w.ec2.enis[e.ID] = e
		res.EC2NetworkInterfaces = append(res.EC2NetworkInterfaces, e.ID)
		return nil
	}
	for _, fi := range f.EC2.Instances {
		inst := &ec2Instance{
			ID:               cmp.Or(fi.InstanceID, w.ec2ID("i")),
			VpcID:            fi.VpcID,
			SubnetID:         fi.SubnetID,
			AvailabilityZone: fi.AvailabilityZone,
			Tags:             cloneTags(fi.Tags),
		}
		w.ec2.instances[inst.ID] = inst
		res.EC2Instances = append(res.EC2Instances, inst.ID)
		for i, fe := range fi.NetworkInterfaces {
			if err := addENI(fe, inst, i); err != nil {
				return nil, err
			}
		}
	}
	for _, fe := range f.EC2.NetworkInterfaces {
		if err := addENI(fe, nil, 0); err != nil {
			return nil, err
		}
	}
	for _, fa := range f.EC2.Addresses {
		pool := w.ec2.pools[cmp.Or(fa.PublicIPv4Pool, "amazon")]
		var ip netip.Addr
		if fa.PublicIP != "" {
			ip, _ = netip.ParseAddr(fa.PublicIP)
			pool.claim(ip)
		} else {
			var ok bool
			if ip, ok = pool.take(); !ok {
				return nil, fmt.Errorf("fixture address: pool %q is exhausted", cmp.Or(fa.PublicIPv4Pool, "amazon"))
			}
		}
		w.ec2.seq++
		a := &ec2Address{
			AllocationID:       cmp.Or(fa.AllocationID, w.ec2ID("eipalloc")),
			PublicIP:           ip,
			Domain:             "vpc",
			Pool:               cmp.Or(fa.PublicIPv4Pool, "amazon"),
			NetworkBorderGroup: "us-east-1",
			Tags:               cloneTags(fa.Tags),
			CreatedAt:          now,
			VisibleAt:          now,
			Account:            w.account(fa.AccountID),
			seq:                w.ec2.seq,
		}
		if fa.NetworkInterfaceID != "" {
			eni := w.ec2.enis[fa.NetworkInterfaceID]
			a.ENIID = eni.ID
			a.PrivateIP = cmp.Or(fa.PrivateIPAddress, eni.PrivateIPs[0])
			a.AssociationID = w.ec2ID("eipassoc")
			w.ec2.pastAssociations[a.AssociationID] = true
		}
		w.ec2.addresses[a.AllocationID] = a
		res.EC2Addresses = append(res.EC2Addresses, a.AllocationID)
	}

	addTCENI := func(fe TCENIFixture, inst *tcInstance, primary bool) *tcENI {
		w.tc.seq++
		e := &tcENI{
			ID:          cmp.Or(fe.NetworkInterfaceID, w.tcID("eni")),
			Name:        fe.Name,
			Description: fe.Description,
			VpcID:       fe.VpcID,
			SubnetID:    fe.SubnetID,
			Zone:        fe.Zone,
			Primary:     primary,
			PrivateIPs:  slices.Clone(fe.PrivateIPAddresses),
			Tags:        cloneTags(fe.Tags),
			CreatedAt:   now,
			seq:         w.tc.seq,
		}
		if inst != nil {
			e.VpcID = cmp.Or(e.VpcID, inst.VpcID)
			e.SubnetID = cmp.Or(e.SubnetID, inst.SubnetID)
			e.Zone = cmp.Or(e.Zone, inst.Zone)
			e.InstanceID = inst.ID
			if !primary {
				e.DeviceIndex = 1
				for _, o := range w.tc.enis {
					if o.InstanceID == inst.ID {
						e.DeviceIndex = max(e.DeviceIndex, o.DeviceIndex+1)
					}
				}
			}
		}
		w.tc.enis[e.ID] = e
		res.TencentNetworkInterfaces = append(res.TencentNetworkInterfaces, e.ID)
		return e
	}
	for _, fi := range f.Tencent.Instances {
		w.tc.seq++
		// Both IDs are drawn whether given or not, as before ENIs were
		// modelled, so seeded worlds keep their generated IDs.
		inst := &tcInstance{
			ID:        cmp.Or(fi.InstanceID, w.tcID("ins")),
			Name:      fi.InstanceName,
			Zone:      fi.Zone,
			VpcID:     fi.VpcID,
			SubnetID:  fi.SubnetID,
			ENIID:     cmp.Or(fi.NetworkInterfaceID, w.tcID("eni")),
			Tags:      cloneTags(fi.Tags),
			CreatedAt: now,
			seq:       w.tc.seq,
		}
		inst.Name = cmp.Or(inst.Name, inst.ID)
		w.tc.instances[inst.ID] = inst
		res.TencentInstances = append(res.TencentInstances, inst.ID)
		inst.eni = addTCENI(TCENIFixture{NetworkInterfaceID: inst.ENIID, PrivateIPAddresses: fi.PrivateIPAddresses}, inst, true)
		for _, fe := range fi.NetworkInterfaces {
			addTCENI(fe, inst, false)
		}
	}
	for _, fe := range f.Tencent.NetworkInterfaces {
		addTCENI(fe, w.tc.instances[fe.InstanceID], false)
	}
	for _, fp := range f.Tencent.PrivateIPs {
		e := w.tc.enis[fp.NetworkInterfaceID]
		e.PrivateIPs = append(e.PrivateIPs, fp.PrivateIPAddresses...)
	}
	for _, fa := range f.Tencent.Addresses {
		var ip netip.Addr
		if fa.AddressIP != "" {
			ip, _ = netip.ParseAddr(fa.AddressIP)
			w.tc.pool.claim(ip)
		} else {
			var ok bool
			if ip, ok = w.tc.pool.take(); !ok {
				return nil, fmt.Errorf("fixture address: the Tencent address pool is exhausted")
			}
		}
		w.tc.seq++
		typ := cmp.Or(fa.AddressType, "EIP")
		a := &tcAddress{
			ID:         cmp.Or(fa.AddressID, w.tcID("eip")),
			Name:       fa.AddressName,
			Type:       typ,
			Status:     TCStatusUnbind,
			IP:         ip,
			ChargeType: cmp.Or(fa.InternetChargeType, "TRAFFIC_POSTPAID_BY_HOUR"),
			ISP:        "BGP",
			Bandwidth:  max(fa.Bandwidth, 1),
			Tags:       cloneTags(fa.Tags),
			CreatedAt:  now,
			VisibleAt:  now,
			seq:        w.tc.seq,
		}
		if typ == "AnycastEIP" {
			a.AnycastZone = cmp.Or(fa.AnycastZone, AnycastZoneOverseas)
		}
		switch {
		case fa.InstanceID != "":
			inst := w.tc.instances[fa.InstanceID]
			ip := ""
			if ips := inst.privateIPs(); len(ips) > 0 {
				ip = ips[0]
			}
			a.bind(inst.eni, ip, "")
		case fa.NetworkInterfaceID != "":
			e := w.tc.enis[fa.NetworkInterfaceID]
			a.bind(e, cmp.Or(fa.PrivateIPAddress, e.PrivateIPs[0]), "")
		}
		w.tc.addresses[a.ID] = a
		res.TencentAddresses = append(res.TencentAddresses, a.ID)
	}
	return res, nil
}

func cloneTags(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

// mac returns a locally administered unicast MAC address.
func (w *World) mac() string {
	s := w.randomString(hexDigits, 10)
	return fmt.Sprintf("02:%s:%s:%s:%s:%s", s[0:2], s[2:4], s[4:6], s[6:8], s[8:10])
}

// checkFixtures validates IDs, references and addresses without changing
// anything.
func (w *World) checkFixtures(f *Fixtures) error {
	seen := map[string]bool{}
	unique := func(id string) error {
		if id == "" {
			return nil
		}
		if seen[id] {
			return fmt.Errorf("fixture ID %q appears twice", id)
		}
		seen[id] = true
		return nil
	}
	instances := map[string]bool{}
	for id := range w.ec2.instances {
		instances[id] = true
	}
	enis := map[string][]string{}
	for id, e := range w.ec2.enis {
		enis[id] = e.PrivateIPs
	}
	checkENI := func(fe EC2ENIFixture) error {
		if fe.NetworkInterfaceID != "" {
			if !ec2ENIIDPattern.MatchString(fe.NetworkInterfaceID) {
				return fmt.Errorf("ENI ID %q: want eni- and 8 to 17 hex digits", fe.NetworkInterfaceID)
			}
			if _, ok := w.ec2.enis[fe.NetworkInterfaceID]; ok {
				return fmt.Errorf("ENI %s already exists", fe.NetworkInterfaceID)
			}
			enis[fe.NetworkInterfaceID] = fe.PrivateIPAddresses
		}
		for _, ip := range fe.PrivateIPAddresses {
			if a, err := netip.ParseAddr(ip); err != nil || !a.Is4() {
				return fmt.Errorf("ENI private IP %q is not an IPv4 address", ip)
			}
		}
		for _, p := range fe.IPv4Prefixes {
			if pp, err := netip.ParsePrefix(p); err != nil || !pp.Addr().Is4() {
				return fmt.Errorf("ENI prefix %q is not an IPv4 prefix", p)
			}
		}
		return unique(fe.NetworkInterfaceID)
	}
	for _, fi := range f.EC2.Instances {
		if fi.InstanceID != "" {
			if !ec2InstanceIDPattern.MatchString(fi.InstanceID) {
				return fmt.Errorf("instance ID %q: want i- and 8 to 17 hex digits", fi.InstanceID)
			}
			if instances[fi.InstanceID] {
				return fmt.Errorf("instance %s already exists", fi.InstanceID)
			}
			instances[fi.InstanceID] = true
		}
		if err := unique(fi.InstanceID); err != nil {
			return err
		}
		for _, fe := range fi.NetworkInterfaces {
			if err := checkENI(fe); err != nil {
				return err
			}
		}
	}
	for _, fe := range f.EC2.NetworkInterfaces {
		if fe.InstanceID != "" && !instances[fe.InstanceID] {
			return fmt.Errorf("ENI fixture refers to unknown instance %s", fe.InstanceID)
		}
		if err := checkENI(fe); err != nil {
			return err
		}
	}
	for _, fa := range f.EC2.Addresses {
		if fa.AllocationID != "" {
			if !ec2AllocIDPattern.MatchString(fa.AllocationID) {
				return fmt.Errorf("allocation ID %q: want eipalloc- and 8 to 17 hex digits", fa.AllocationID)
			}
			if _, ok := w.ec2.addresses[fa.AllocationID]; ok {
				return fmt.Errorf("address %s already exists", fa.AllocationID)
			}
		}
		if err := unique(fa.AllocationID); err != nil {
			return err
		}
		pool, ok := w.ec2.pools[cmp.Or(fa.PublicIPv4Pool, "amazon")]
		if !ok {
			return fmt.Errorf("address fixture: unknown public IPv4 pool %q", fa.PublicIPv4Pool)
		}
		if fa.PublicIP != "" {
			ip, err := netip.ParseAddr(fa.PublicIP)
			if err != nil || !ip.Is4() {
				return fmt.Errorf("address fixture: public IP %q is not IPv4", fa.PublicIP)
			}
			if pool.used[ip] {
				return fmt.Errorf("address fixture: public IP %s is in use", ip)
			}
		}
		if fa.NetworkInterfaceID != "" {
			ips, ok := enis[fa.NetworkInterfaceID]
			if !ok {
				return fmt.Errorf("address fixture refers to unknown ENI %s", fa.NetworkInterfaceID)
			}
			if len(ips) == 0 || (fa.PrivateIPAddress != "" && !slices.Contains(ips, fa.PrivateIPAddress)) {
				return fmt.Errorf("address fixture: private IP %q is not on ENI %s", fa.PrivateIPAddress, fa.NetworkInterfaceID)
			}
		}
	}

	return w.checkTencentFixtures(&f.Tencent, unique)
}

// checkTencentFixtures validates the Tencent fixtures against the current
// state and each other: IDs well-formed and new, references resolvable,
// private IPs IPv4 and unique within their VPC, and a private IP bound to
// at most one address.
func (w *World) checkTencentFixtures(f *TencentFixtures, unique func(string) error) error {
	instVPC := map[string]string{} // instance ID -> VPC
	for id, in := range w.tc.instances {
		instVPC[id] = in.VpcID
	}
	type eniState struct {
		vpc string
		ips []string
	}
	enis := map[string]*eniState{}
	owner := map[string]string{} // VPC + "/" + private IP -> ENI ID
	for id, e := range w.tc.enis {
		enis[id] = &eniState{vpc: e.VpcID, ips: slices.Clone(e.PrivateIPs)}
		for _, ip := range e.PrivateIPs {
			owner[e.VpcID+"/"+ip] = id
		}
	}
	// addIPs checks private IPs joining an ENI (id "" for one whose ID is
	// generated).
	addIPs := func(id, vpc string, ips []string) error {
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err != nil || !a.Is4() {
				return fmt.Errorf("private IP %q is not an IPv4 address", ip)
			}
			if o, taken := owner[vpc+"/"+ip]; taken {
				return fmt.Errorf("private IP %s is already on ENI %s in VPC %q", ip, o, vpc)
			}
			owner[vpc+"/"+ip] = cmp.Or(id, "(new ENI)")
		}
		if id != "" {
			enis[id].ips = append(enis[id].ips, ips...)
		}
		return nil
	}
	newENI := func(id, vpc string, ips []string) error {
		if id != "" {
			if !tcENIIDPattern.MatchString(id) {
				return fmt.Errorf("ENI ID %q: want eni- and 8 lower-case letters or digits", id)
			}
			if _, ok := enis[id]; ok {
				return fmt.Errorf("ENI %s already exists", id)
			}
			if err := unique(id); err != nil {
				return err
			}
			enis[id] = &eniState{vpc: vpc}
		}
		return addIPs(id, vpc, ips)
	}
	for _, fi := range f.Instances {
		if fi.InstanceID != "" {
			if !tcInstanceIDPattern.MatchString(fi.InstanceID) {
				return fmt.Errorf("instance ID %q: want ins- and 8 lower-case letters or digits", fi.InstanceID)
			}
			if _, ok := instVPC[fi.InstanceID]; ok {
				return fmt.Errorf("instance %s already exists", fi.InstanceID)
			}
			instVPC[fi.InstanceID] = fi.VpcID
		}
		if err := unique(fi.InstanceID); err != nil {
			return err
		}
		if err := newENI(fi.NetworkInterfaceID, fi.VpcID, fi.PrivateIPAddresses); err != nil {
			return fmt.Errorf("instance fixture %s: %w", fi.InstanceID, err)
		}
		for _, fe := range fi.NetworkInterfaces {
			if err := newENI(fe.NetworkInterfaceID, cmp.Or(fe.VpcID, fi.VpcID), fe.PrivateIPAddresses); err != nil {
				return fmt.Errorf("instance fixture %s: %w", fi.InstanceID, err)
			}
		}
	}
	for _, fe := range f.NetworkInterfaces {
		vpc := fe.VpcID
		if fe.InstanceID != "" {
			iv, ok := instVPC[fe.InstanceID]
			if !ok {
				return fmt.Errorf("ENI fixture refers to unknown instance %s", fe.InstanceID)
			}
			vpc = cmp.Or(vpc, iv)
		}
		if err := newENI(fe.NetworkInterfaceID, vpc, fe.PrivateIPAddresses); err != nil {
			return fmt.Errorf("ENI fixture: %w", err)
		}
	}
	for _, fp := range f.PrivateIPs {
		e, ok := enis[fp.NetworkInterfaceID]
		if !ok {
			return fmt.Errorf("private IP fixture refers to unknown ENI %q", fp.NetworkInterfaceID)
		}
		if err := addIPs(fp.NetworkInterfaceID, e.vpc, fp.PrivateIPAddresses); err != nil {
			return fmt.Errorf("private IP fixture: %w", err)
		}
	}
	bound := map[string]bool{} // ENI ID + "/" + private IP (instance: "ins-…")
	for _, a := range w.tc.addresses {
		if a.ENIID != "" {
			bound[a.ENIID+"/"+a.PrivateIP] = true
		}
	}
	for _, fa := range f.Addresses {
		if fa.AddressID != "" {
			if !tcAddressIDPattern.MatchString(fa.AddressID) {
				return fmt.Errorf("address ID %q: want eip- and 8 lower-case letters or digits", fa.AddressID)
			}
			if _, ok := w.tc.addresses[fa.AddressID]; ok {
				return fmt.Errorf("address %s already exists", fa.AddressID)
			}
		}
		if err := unique(fa.AddressID); err != nil {
			return err
		}
		if fa.AddressType != "" && !slices.Contains(tcAddressTypes, fa.AddressType) {
			return fmt.Errorf("address fixture: unknown address type %q", fa.AddressType)
		}
		if fa.AddressIP != "" {
			ip, err := netip.ParseAddr(fa.AddressIP)
			if err != nil || !ip.Is4() {
				return fmt.Errorf("address fixture: IP %q is not IPv4", fa.AddressIP)
			}
			if w.tc.pool.used[ip] {
				return fmt.Errorf("address fixture: IP %s is in use", ip)
			}
		}
		switch {
		case fa.InstanceID != "" && fa.NetworkInterfaceID != "":
			return fmt.Errorf("address fixture: give instanceId or networkInterfaceId, not both")
		case fa.InstanceID != "":
			if _, ok := instVPC[fa.InstanceID]; !ok {
				return fmt.Errorf("address fixture refers to unknown instance %s", fa.InstanceID)
			}
		case fa.NetworkInterfaceID != "":
			e, ok := enis[fa.NetworkInterfaceID]
			if !ok {
				return fmt.Errorf("address fixture refers to unknown ENI %q", fa.NetworkInterfaceID)
			}
			ip := fa.PrivateIPAddress
			if ip == "" && len(e.ips) > 0 {
				ip = e.ips[0]
			}
			if !slices.Contains(e.ips, ip) {
				return fmt.Errorf("address fixture: private IP %q is not on ENI %s", fa.PrivateIPAddress, fa.NetworkInterfaceID)
			}
			if bound[fa.NetworkInterfaceID+"/"+ip] {
				return fmt.Errorf("address fixture: private IP %s of ENI %s already has an address", ip, fa.NetworkInterfaceID)
			}
			bound[fa.NetworkInterfaceID+"/"+ip] = true
		case fa.PrivateIPAddress != "":
			return fmt.Errorf("address fixture: privateIpAddress needs networkInterfaceId")
		}
		if _, err := tcTags(tagList(fa.Tags)); err != nil {
			return fmt.Errorf("address fixture: %s", err.Message)
		}
	}
	return nil
}

func tagList(m map[string]string) []Tag { return sortedTags(m) }
