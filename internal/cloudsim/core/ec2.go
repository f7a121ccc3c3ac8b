package core

import (
	"cmp"
	"encoding/base64"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ec2State is the EC2 side of the account: Elastic IPs, ENIs, instances.
type ec2State struct {
	addresses map[string]*ec2Address // by allocation ID
	enis      map[string]*ec2ENI     // by ENI ID
	instances map[string]*ec2Instance
	pools     map[string]*ipPool // by PublicIpv4Pool name
	// pastAssociations remembers association IDs that existed, because
	// DisassociateAddress is idempotent: repeating it for an association
	// that is already gone succeeds.
	pastAssociations map[string]bool
	seq              int64
}

type ec2Address struct {
	AllocationID       string
	PublicIP           netip.Addr
	Domain             string
	Pool               string
	NetworkBorderGroup string
	AssociationID      string
	ENIID              string
	PrivateIP          string
	Tags               map[string]string
	CreatedAt          time.Time
	VisibleAt          time.Time
	// Account allocated the address; only it can see and change it.
	Account string
	seq     int64
}

type ec2ENI struct {
	ID               string
	VpcID            string
	SubnetID         string
	AvailabilityZone string
	Description      string
	MacAddress       string
	InterfaceType    string
	PrivateIPs       []string // first is primary
	IPv4Prefixes     []netip.Prefix
	AttachmentID     string
	InstanceID       string
	DeviceIndex      int
	Tags             map[string]string
	seq              int64
}

type ec2Instance struct {
	ID               string
	VpcID            string
	SubnetID         string
	AvailabilityZone string
	Tags             map[string]string
}

func newEC2State(s *Settings) (*ec2State, error) {
	st := &ec2State{
		addresses:        map[string]*ec2Address{},
		enis:             map[string]*ec2ENI{},
		instances:        map[string]*ec2Instance{},
		pools:            map[string]*ipPool{},
		pastAssociations: map[string]bool{},
	}
	if err := st.syncPools(s); err != nil {
		return nil, err
	}
	return st, nil
}

// syncPools adds pools that appeared in the settings; existing pools keep
// their allocation state.
func (st *ec2State) syncPools(s *Settings) error {
	for name, cidr := range s.EC2PublicIPv4Pools {
		if p, ok := st.pools[name]; ok && p.prefix.String() == cidr {
			continue
		}
		p, err := newIPPool(cidr)
		if err != nil {
			return err
		}
		for _, a := range st.addresses {
			if a.Pool == name {
				p.claim(a.PublicIP)
			}
		}
		st.pools[name] = p
	}
	return nil
}

// EC2Address is the public view of an Elastic IP.
type EC2Address struct {
	AllocationID            string     `json:"allocationId"`
	AccountID               string     `json:"accountId"`
	PublicIP                string     `json:"publicIp"`
	Domain                  string     `json:"domain"`
	PublicIPv4Pool          string     `json:"publicIpv4Pool"`
	NetworkBorderGroup      string     `json:"networkBorderGroup,omitempty"`
	AssociationID           string     `json:"associationId,omitempty"`
	NetworkInterfaceID      string     `json:"networkInterfaceId,omitempty"`
	NetworkInterfaceOwnerID string     `json:"networkInterfaceOwnerId,omitempty"`
	PrivateIPAddress        string     `json:"privateIpAddress,omitempty"`
	InstanceID              string     `json:"instanceId,omitempty"`
	Tags                    []Tag      `json:"tags,omitempty"`
	CreatedAt               time.Time  `json:"createdAt"`
	VisibleAt               *time.Time `json:"visibleAt,omitempty"`
}

// EC2PrivateIP is one private IPv4 address of an ENI with the Elastic IP
// associated with it, if any.
type EC2PrivateIP struct {
	PrivateIPAddress string `json:"privateIpAddress"`
	Primary          bool   `json:"primary"`
	PublicIP         string `json:"publicIp,omitempty"`
	AllocationID     string `json:"allocationId,omitempty"`
	AssociationID    string `json:"associationId,omitempty"`
}

// EC2Attachment is an ENI's attachment to an instance.
type EC2Attachment struct {
	AttachmentID string `json:"attachmentId"`
	InstanceID   string `json:"instanceId"`
	DeviceIndex  int    `json:"deviceIndex"`
	// NetworkCardIndex is always 0: the emulator models single-card
	// instances ("the primary network interface must be assigned to network
	// card index 0", EC2 API reference, AttachNetworkInterface).
	NetworkCardIndex int    `json:"networkCardIndex"`
	Status           string `json:"status"`
}

// EC2NetworkInterface is the public view of an ENI.
type EC2NetworkInterface struct {
	NetworkInterfaceID string         `json:"networkInterfaceId"`
	VpcID              string         `json:"vpcId"`
	SubnetID           string         `json:"subnetId"`
	AvailabilityZone   string         `json:"availabilityZone"`
	Description        string         `json:"description,omitempty"`
	OwnerID            string         `json:"ownerId"`
	MacAddress         string         `json:"macAddress"`
	Status             string         `json:"status"`
	InterfaceType      string         `json:"interfaceType"`
	PrivateIPAddresses []EC2PrivateIP `json:"privateIpAddresses"`
	IPv4Prefixes       []string       `json:"ipv4Prefixes,omitempty"`
	Attachment         *EC2Attachment `json:"attachment,omitempty"`
	Tags               []Tag          `json:"tags,omitempty"`
}

// EC2Instance is the public view of an instance (only what ENI attachment
// needs).
type EC2Instance struct {
	InstanceID       string `json:"instanceId"`
	VpcID            string `json:"vpcId"`
	SubnetID         string `json:"subnetId"`
	AvailabilityZone string `json:"availabilityZone"`
	Tags             []Tag  `json:"tags,omitempty"`
}

func (w *World) ec2AddressView(a *ec2Address, now time.Time) EC2Address {
	v := EC2Address{
		AllocationID:       a.AllocationID,
		AccountID:          a.Account,
		PublicIP:           a.PublicIP.String(),
		Domain:             a.Domain,
		PublicIPv4Pool:     a.Pool,
		NetworkBorderGroup: a.NetworkBorderGroup,
		AssociationID:      a.AssociationID,
		NetworkInterfaceID: a.ENIID,
		PrivateIPAddress:   a.PrivateIP,
		Tags:               sortedTags(a.Tags),
		CreatedAt:          a.CreatedAt,
	}
	if a.ENIID != "" {
		v.NetworkInterfaceOwnerID = w.settings.EC2AccountID
		if eni := w.ec2.enis[a.ENIID]; eni != nil {
			v.InstanceID = eni.InstanceID
		}
	}
	if a.VisibleAt.After(now) {
		t := a.VisibleAt
		v.VisibleAt = &t
	}
	return v
}

func (w *World) ec2ENIView(e *ec2ENI) EC2NetworkInterface {
	v := EC2NetworkInterface{
		NetworkInterfaceID: e.ID,
		VpcID:              e.VpcID,
		SubnetID:           e.SubnetID,
		AvailabilityZone:   e.AvailabilityZone,
		Description:        e.Description,
		OwnerID:            w.settings.EC2AccountID,
		MacAddress:         e.MacAddress,
		Status:             "available",
		InterfaceType:      cmp.Or(e.InterfaceType, "interface"),
		Tags:               sortedTags(e.Tags),
	}
	for i, ip := range e.PrivateIPs {
		p := EC2PrivateIP{PrivateIPAddress: ip, Primary: i == 0}
		if a := w.ec2.addressAt(e.ID, ip); a != nil {
			p.PublicIP, p.AllocationID, p.AssociationID = a.PublicIP.String(), a.AllocationID, a.AssociationID
		}
		v.PrivateIPAddresses = append(v.PrivateIPAddresses, p)
	}
	for _, p := range e.IPv4Prefixes {
		v.IPv4Prefixes = append(v.IPv4Prefixes, p.String())
	}
	if e.InstanceID != "" {
		v.Status = "in-use"
		v.Attachment = &EC2Attachment{AttachmentID: e.AttachmentID, InstanceID: e.InstanceID, DeviceIndex: e.DeviceIndex, Status: "attached"}
	}
	return v
}

// addressAt finds the Elastic IP associated with an ENI's private IP.
func (st *ec2State) addressAt(eniID, privateIP string) *ec2Address {
	for _, a := range st.addresses {
		if a.ENIID == eniID && a.PrivateIP == privateIP {
			return a
		}
	}
	return nil
}

// EC2AllocateInput is AllocateAddress's parameters.
type EC2AllocateInput struct {
	Domain             string
	PublicIPv4Pool     string
	Address            string
	NetworkBorderGroup string
	// Region is the signing region, used as the default network border group.
	Region string
	// Account is the caller's account (from its access key); empty means
	// Settings.EC2AccountID.
	Account  string
	TagSpecs []EC2TagSpec
	// VisibilityDelay hides the new address from DescribeAddresses for a
	// while (eventual consistency); set from the fault decision.
	VisibilityDelay time.Duration
}

// EC2TagSpec is one TagSpecification.N.
type EC2TagSpec struct {
	ResourceType string
	Tags         []Tag
}

const ec2MaxTags = 50

// validateEC2Tags applies EC2's tag rules.
func validateEC2Tags(tags []Tag) *APIError {
	for _, t := range tags {
		switch {
		case t.Key == "":
			return badRequest(EC2InvalidParameterValue, "Tag key must not be empty")
		case len(t.Key) > 128:
			return badRequest(EC2InvalidParameterValue, "Tag key exceeds the maximum length of 128 characters")
		case len(t.Value) > 256:
			return badRequest(EC2InvalidParameterValue, "Tag value exceeds the maximum length of 256 characters")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return badRequest(EC2InvalidParameterValue, "Tag keys starting with 'aws:' are reserved for internal use")
		}
	}
	return nil
}

// EC2AllocateAddress allocates an Elastic IP, applying its creation tags
// atomically as the real API does.
func (w *World) EC2AllocateAddress(in EC2AllocateInput) (EC2Address, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	if in.Domain != "" && in.Domain != "vpc" && in.Domain != "standard" {
		return EC2Address{}, badRequest(EC2InvalidParameterValue, "Value (%s) for parameter domain is invalid.", in.Domain)
	}
	tags := map[string]string{}
	for _, ts := range in.TagSpecs {
		if ts.ResourceType != "elastic-ip" {
			return EC2Address{}, badRequest(EC2InvalidParameterValue, "'%s' is not a valid taggable resource type for this operation.", ts.ResourceType)
		}
		if err := validateEC2Tags(ts.Tags); err != nil {
			return EC2Address{}, err
		}
		for _, t := range ts.Tags {
			tags[t.Key] = t.Value
		}
	}
	if len(tags) > ec2MaxTags {
		return EC2Address{}, badRequest(EC2TagLimitExceeded, "The maximum number of tags per resource (%d) has been exceeded", ec2MaxTags)
	}
	poolName := cmp.Or(in.PublicIPv4Pool, "amazon")
	pool, ok := w.ec2.pools[poolName]
	if !ok {
		return EC2Address{}, badRequest(EC2InvalidPublicIpv4PoolNotFound, "The public IPv4 pool ID '%s' does not exist", poolName)
	}
	account := w.account(in.Account)
	if w.ec2.countOwned(account) >= w.settings.EC2AddressQuota {
		return EC2Address{}, badRequest(EC2AddressLimitExceeded, "The maximum number of addresses has been reached.")
	}
	var ip netip.Addr
	if in.Address != "" {
		a, err := netip.ParseAddr(in.Address)
		if err != nil || !a.Is4() {
			return EC2Address{}, badRequest("InvalidAddress.Malformed", "Invalid IPv4 address: %s", in.Address)
		}
		if pool.used[a] || !pool.prefix.Contains(a) {
			return EC2Address{}, badRequest(EC2InvalidParameterValue, "The address %s is not available for allocation.", in.Address)
		}
		pool.claim(a)
		ip = a
	} else {
		ip, ok = pool.take()
		if !ok {
			return EC2Address{}, Errf(500, EC2InsufficientAddressCapacity, "There are not enough free addresses in pool '%s' to satisfy your request.", poolName)
		}
	}
	w.ec2.seq++
	a := &ec2Address{
		AllocationID:       w.ec2ID("eipalloc"),
		PublicIP:           ip,
		Domain:             "vpc",
		Pool:               poolName,
		NetworkBorderGroup: cmp.Or(in.NetworkBorderGroup, in.Region, "us-east-1"),
		Tags:               tags,
		CreatedAt:          now,
		VisibleAt:          now.Add(in.VisibilityDelay),
		Account:            account,
		seq:                w.ec2.seq,
	}
	w.ec2.addresses[a.AllocationID] = a
	return w.ec2AddressView(a, now), nil
}

// EC2AssociateInput is AssociateAddress's parameters.
type EC2AssociateInput struct {
	AllocationID       string
	PublicIP           string
	InstanceID         string
	NetworkInterfaceID string
	PrivateIPAddress   string
	// AllowReassociation is nil when the parameter was not sent: in a
	// VPC-only account reassociation is then automatic.
	AllowReassociation *bool
	// Account is the caller's account; empty means Settings.EC2AccountID.
	Account string
}

// account is the caller's account, the world's own when none is given.
func (w *World) account(a string) string { return cmp.Or(a, w.settings.EC2AccountID) }

func (st *ec2State) countOwned(account string) int {
	n := 0
	for _, a := range st.addresses {
		if a.Account == account {
			n++
		}
	}
	return n
}

// notYours is EC2's answer to a change of another account's Elastic IP:
// "AuthFailure … for example, trying to associate an Elastic IP address
// that is not yours" (EC2 API reference, Error codes, common client
// errors: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html).
func notYours(a *ec2Address) *APIError {
	return Errf(http.StatusUnauthorized, EC2AuthFailure, "You do not have permission to access the specified resource %s.", a.AllocationID)
}

// EC2AssociateAddress associates an Elastic IP with a private IP of an ENI.
func (w *World) EC2AssociateAddress(in EC2AssociateInput) (string, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, err := w.ec2.findAddress(in.AllocationID, in.PublicIP)
	if err != nil {
		return "", err
	}
	if a.Account != w.account(in.Account) {
		return "", notYours(a)
	}
	if in.InstanceID != "" && in.NetworkInterfaceID != "" {
		return "", badRequest(EC2InvalidParameterCombination, "Only one of instanceId or networkInterfaceId may be specified")
	}
	var eni *ec2ENI
	switch {
	case in.NetworkInterfaceID != "":
		eni = w.ec2.enis[in.NetworkInterfaceID]
		if eni == nil {
			return "", badRequest(EC2InvalidNetworkInterfaceIDNF, "The networkInterface ID '%s' does not exist", in.NetworkInterfaceID)
		}
	case in.InstanceID != "":
		// "InvalidInstanceID.Malformed: the specified instance ID is
		// malformed; ensure that you provide the full resource ID"
		// (errors-overview), e.g. a Kubernetes providerID passed whole.
		if !ec2InstanceIDPattern.MatchString(in.InstanceID) {
			return "", badRequest(EC2InvalidInstanceIDMalformed, "Invalid id: \"%s\" (expecting \"i-...\")", in.InstanceID)
		}
		if w.ec2.instances[in.InstanceID] == nil {
			return "", badRequest(EC2InvalidInstanceIDNotFound, "The instance ID '%s' does not exist", in.InstanceID)
		}
		var attached []*ec2ENI
		for _, e := range w.ec2.enis {
			if e.InstanceID == in.InstanceID {
				attached = append(attached, e)
			}
		}
		// "The instance must have exactly one attached network interface"
		// (EC2 API reference, AssociateAddress, InstanceId); with more, EC2
		// answers 400 InvalidInstanceID (as reported, for example, in
		// cilium/cilium#39654), so a node with secondary ENIs is addressed
		// through its primary ENI.
		if len(attached) == 0 {
			// Only a fixture can make this: every real instance has one.
			return "", badRequest(EC2InvalidInstanceID, "Instance '%s' has no network interface attached.", in.InstanceID)
		}
		if len(attached) > 1 {
			return "", badRequest(EC2InvalidInstanceID, "There are multiple interfaces attached to instance '%s'. Please specify an interface ID for the operation instead.", in.InstanceID)
		}
		eni = attached[0]
	default:
		return "", badRequest(EC2MissingParameter, "Either an instance ID or a network interface ID must be specified")
	}
	privateIP := in.PrivateIPAddress
	if privateIP == "" {
		if len(eni.PrivateIPs) == 0 {
			return "", badRequest(EC2InvalidParameterValue, "Network interface %s has no private IP address", eni.ID)
		}
		privateIP = eni.PrivateIPs[0]
	}
	if !eni.holds(privateIP) {
		return "", badRequest(EC2InvalidParameterValue, "The private IP address %s is not assigned to network interface %s", privateIP, eni.ID)
	}
	if a.AssociationID != "" && a.ENIID == eni.ID && a.PrivateIP == privateIP {
		// Idempotent: associating again with the same target succeeds.
		return a.AssociationID, nil
	}
	// AllowReassociation: "Reassociation is automatic, but you can specify
	// false to ensure the operation fails if the Elastic IP address is
	// already associated with another resource" (EC2 API reference,
	// AssociateAddress); the failure is Resource.AlreadyAssociated, "the
	// specified resource is already in use" (Error codes page). It holds on
	// both ends: this address bound elsewhere, or the target private IP
	// (of the ENI or instance) already carrying another address, which EC2
	// names in the message ("resource i-… is already associated with
	// associate-id eipassoc-…").
	noReassoc := in.AllowReassociation != nil && !*in.AllowReassociation
	if noReassoc && a.AssociationID != "" {
		return "", badRequest(EC2ResourceAlreadyAssociated, "resource %s is already associated with associate-id %s", a.AllocationID, a.AssociationID)
	}
	prev := w.ec2.addressAt(eni.ID, privateIP)
	if prev != nil && prev != a && noReassoc {
		target := cmp.Or(in.InstanceID, eni.ID)
		return "", badRequest(EC2ResourceAlreadyAssociated, "resource %s is already associated with associate-id %s", target, prev.AssociationID)
	}
	// A private IP carries at most one Elastic IP: with reassociation
	// allowed the previous one is disassociated, as EC2 does when remapping.
	if prev != nil && prev != a {
		prev.AssociationID, prev.ENIID, prev.PrivateIP = "", "", ""
	}
	a.AssociationID = w.ec2ID("eipassoc")
	a.ENIID = eni.ID
	a.PrivateIP = privateIP
	w.ec2.pastAssociations[a.AssociationID] = true
	return a.AssociationID, nil
}

func (e *ec2ENI) holds(ip string) bool {
	if slices.Contains(e.PrivateIPs, ip) {
		return true
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, p := range e.IPv4Prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (st *ec2State) findAddress(allocationID, publicIP string) (*ec2Address, *APIError) {
	switch {
	case allocationID != "":
		a := st.addresses[allocationID]
		if a == nil {
			return nil, badRequest(EC2InvalidAllocationIDNotFound, "The allocation ID '%s' does not exist", allocationID)
		}
		return a, nil
	case publicIP != "":
		for _, a := range st.addresses {
			if a.PublicIP.String() == publicIP {
				return a, nil
			}
		}
		return nil, badRequest(EC2InvalidAddressNotFound, "Address '%s' not found.", publicIP)
	default:
		return nil, badRequest(EC2MissingParameter, "Either public IP or allocation id must be specified")
	}
}

// EC2DisassociateAddress removes an association. Repeating it for an
// association that no longer exists succeeds (the API is idempotent).
// account is the caller's (empty: Settings.EC2AccountID).
func (w *World) EC2DisassociateAddress(account, associationID, publicIP string) *APIError {
	w.mu.Lock()
	defer w.mu.Unlock()
	if associationID == "" && publicIP == "" {
		return badRequest(EC2MissingParameter, "Either public IP or association id must be specified")
	}
	for _, a := range w.ec2.addresses {
		if (associationID != "" && a.AssociationID == associationID) ||
			(associationID == "" && a.PublicIP.String() == publicIP) {
			if a.Account != w.account(account) {
				return notYours(a)
			}
			a.AssociationID, a.ENIID, a.PrivateIP = "", "", ""
			return nil
		}
	}
	if associationID != "" && !w.ec2.pastAssociations[associationID] {
		return badRequest(EC2InvalidAssociationIDNotFound, "The association ID '%s' does not exist", associationID)
	}
	if associationID == "" {
		return badRequest(EC2InvalidAddressNotFound, "Address '%s' not found.", publicIP)
	}
	return nil
}

// EC2ReleaseAddress releases an unassociated Elastic IP of the caller's
// account (empty: Settings.EC2AccountID).
func (w *World) EC2ReleaseAddress(account, allocationID, publicIP string) *APIError {
	w.mu.Lock()
	defer w.mu.Unlock()
	// An unknown allocation ID is InvalidAllocationID.NotFound, what EC2
	// answers to ReleaseAddress (the errors page lists the code for
	// AllocationId look-ups; InvalidAddressID.NotFound is not what the API
	// returns for an eipalloc- ID).
	a, err := w.ec2.findAddress(allocationID, publicIP)
	if err != nil {
		return err
	}
	// "If you attempt to release an Elastic IP address that you already
	// released, you'll get an AuthFailure error if the address is already
	// allocated to another Amazon Web Services account" (EC2 API
	// reference, ReleaseAddress).
	if a.Account != w.account(account) {
		return notYours(a)
	}
	if a.AssociationID != "" {
		return badRequest(EC2InvalidIPAddressInUse, "Address %s is in use.", a.PublicIP)
	}
	delete(w.ec2.addresses, a.AllocationID)
	if p := w.ec2.pools[a.Pool]; p != nil {
		p.release(a.PublicIP)
	}
	return nil
}

var ec2AddressFilters = map[string]func(w *World, a *ec2Address, values []string) bool{
	"allocation-id":  func(_ *World, a *ec2Address, v []string) bool { return anyGlob(v, a.AllocationID) },
	"association-id": func(_ *World, a *ec2Address, v []string) bool { return anyGlob(v, a.AssociationID) },
	"domain":         func(_ *World, a *ec2Address, v []string) bool { return anyGlob(v, a.Domain) },
	"network-border-group": func(_ *World, a *ec2Address, v []string) bool {
		return anyGlob(v, a.NetworkBorderGroup)
	},
	"network-interface-id": func(_ *World, a *ec2Address, v []string) bool { return a.ENIID != "" && anyGlob(v, a.ENIID) },
	"network-interface-owner-id": func(w *World, a *ec2Address, v []string) bool {
		return a.ENIID != "" && anyGlob(v, w.settings.EC2AccountID)
	},
	"private-ip-address": func(_ *World, a *ec2Address, v []string) bool { return a.PrivateIP != "" && anyGlob(v, a.PrivateIP) },
	"public-ip":          func(_ *World, a *ec2Address, v []string) bool { return anyGlob(v, a.PublicIP.String()) },
	"instance-id": func(w *World, a *ec2Address, v []string) bool {
		eni := w.ec2.enis[a.ENIID]
		return eni != nil && eni.InstanceID != "" && anyGlob(v, eni.InstanceID)
	},
	"tag-key": func(_ *World, a *ec2Address, v []string) bool { return tagKeyMatches(a.Tags, v) },
}

func tagKeyMatches(tags map[string]string, patterns []string) bool {
	for k := range tags {
		if anyGlob(patterns, k) {
			return true
		}
	}
	return false
}

// tagFilter handles "tag:<key>" filters.
func tagFilter(name string, tags map[string]string, values []string) (matched, isTagFilter bool) {
	key, ok := strings.CutPrefix(name, "tag:")
	if !ok {
		return false, false
	}
	v, has := tags[key]
	return has && anyGlob(values, v), true
}

// EC2DescribeAddresses lists addresses. Explicit IDs that do not exist (or
// are still inside their eventual-consistency window) fail with NotFound, as
// on EC2; filters never fail for lack of matches.
// Only the caller's account's addresses exist for it (account empty:
// Settings.EC2AccountID).
func (w *World) EC2DescribeAddresses(account string, allocationIDs, publicIPs []string, filters []Filter) ([]EC2Address, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	account = w.account(account)
	for _, f := range filters {
		if _, ok := ec2AddressFilters[f.Name]; !ok && !strings.HasPrefix(f.Name, "tag:") {
			return nil, badRequest(EC2InvalidParameterValue, "The filter '%s' is invalid", f.Name)
		}
	}
	visible := func(a *ec2Address) bool { return a.Account == account && !a.VisibleAt.After(now) }
	for _, id := range allocationIDs {
		if a := w.ec2.addresses[id]; a == nil || !visible(a) {
			return nil, badRequest(EC2InvalidAllocationIDNotFound, "The allocation ID '%s' does not exist", id)
		}
	}
	for _, ip := range publicIPs {
		found := false
		for _, a := range w.ec2.addresses {
			if a.PublicIP.String() == ip && visible(a) {
				found = true
				break
			}
		}
		if !found {
			return nil, badRequest(EC2InvalidAddressNotFound, "Address '%s' not found.", ip)
		}
	}
	var out []*ec2Address
	for _, a := range w.ec2.addresses {
		if !visible(a) {
			continue
		}
		if len(allocationIDs) > 0 && !slices.Contains(allocationIDs, a.AllocationID) {
			continue
		}
		if len(publicIPs) > 0 && !slices.Contains(publicIPs, a.PublicIP.String()) {
			continue
		}
		if w.ec2AddressMatches(a, filters) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y *ec2Address) int { return cmp.Compare(x.seq, y.seq) })
	views := make([]EC2Address, 0, len(out))
	for _, a := range out {
		views = append(views, w.ec2AddressView(a, now))
	}
	return views, nil
}

func (w *World) ec2AddressMatches(a *ec2Address, filters []Filter) bool {
	for _, f := range filters {
		if m, isTag := tagFilter(f.Name, a.Tags, f.Values); isTag {
			if !m {
				return false
			}
			continue
		}
		if !ec2AddressFilters[f.Name](w, a, f.Values) {
			return false
		}
	}
	return true
}

var ec2ENIFilters = map[string]func(e *ec2ENI, values []string) bool{
	"addresses.private-ip-address": func(e *ec2ENI, v []string) bool {
		return slices.ContainsFunc(e.PrivateIPs, func(ip string) bool { return anyGlob(v, ip) })
	},
	"private-ip-address": func(e *ec2ENI, v []string) bool { return len(e.PrivateIPs) > 0 && anyGlob(v, e.PrivateIPs[0]) },
	"addresses.primary": func(e *ec2ENI, v []string) bool {
		// Every ENI's first address is primary; the others are not.
		return (len(e.PrivateIPs) > 0 && anyGlob(v, "true")) || (len(e.PrivateIPs) > 1 && anyGlob(v, "false"))
	},
	"network-interface-id":   func(e *ec2ENI, v []string) bool { return anyGlob(v, e.ID) },
	"vpc-id":                 func(e *ec2ENI, v []string) bool { return anyGlob(v, e.VpcID) },
	"subnet-id":              func(e *ec2ENI, v []string) bool { return anyGlob(v, e.SubnetID) },
	"availability-zone":      func(e *ec2ENI, v []string) bool { return anyGlob(v, e.AvailabilityZone) },
	"description":            func(e *ec2ENI, v []string) bool { return anyGlob(v, e.Description) },
	"mac-address":            func(e *ec2ENI, v []string) bool { return anyGlob(v, e.MacAddress) },
	"interface-type":         func(e *ec2ENI, v []string) bool { return anyGlob(v, cmp.Or(e.InterfaceType, "interface")) },
	"attachment.instance-id": func(e *ec2ENI, v []string) bool { return e.InstanceID != "" && anyGlob(v, e.InstanceID) },
	"attachment.attachment-id": func(e *ec2ENI, v []string) bool {
		return e.AttachmentID != "" && anyGlob(v, e.AttachmentID)
	},
	"attachment.device-index": func(e *ec2ENI, v []string) bool {
		return e.InstanceID != "" && anyGlob(v, strconv.Itoa(e.DeviceIndex))
	},
	"status": func(e *ec2ENI, v []string) bool {
		if e.InstanceID != "" {
			return anyGlob(v, "in-use")
		}
		return anyGlob(v, "available")
	},
	"tag-key": func(e *ec2ENI, v []string) bool { return tagKeyMatches(e.Tags, v) },
}

// EC2DescribeNetworkInterfacesInput is DescribeNetworkInterfaces' parameters.
type EC2DescribeNetworkInterfacesInput struct {
	NetworkInterfaceIDs []string
	Filters             []Filter
	MaxResults          int
	NextToken           string
}

// EC2DescribeNetworkInterfaces lists ENIs with EC2's pagination rules.
func (w *World) EC2DescribeNetworkInterfaces(in EC2DescribeNetworkInterfacesInput) ([]EC2NetworkInterface, string, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range in.Filters {
		if _, ok := ec2ENIFilters[f.Name]; !ok && !strings.HasPrefix(f.Name, "tag:") {
			return nil, "", badRequest(EC2InvalidParameterValue, "The filter '%s' is invalid", f.Name)
		}
	}
	if in.MaxResults != 0 && len(in.NetworkInterfaceIDs) > 0 {
		return nil, "", badRequest(EC2InvalidParameterCombination, "The parameter NetworkInterfaceIds cannot be used with the parameter MaxResults")
	}
	if in.MaxResults != 0 && (in.MaxResults < 5 || in.MaxResults > 1000) {
		return nil, "", badRequest(EC2InvalidParameterValue, "Value ( %d ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.", in.MaxResults)
	}
	for _, id := range in.NetworkInterfaceIDs {
		if w.ec2.enis[id] == nil {
			return nil, "", badRequest(EC2InvalidNetworkInterfaceIDNF, "The networkInterface ID '%s' does not exist", id)
		}
	}
	start := 0
	if in.NextToken != "" {
		n, ok := decodeToken(in.NextToken)
		if !ok {
			return nil, "", badRequest(EC2InvalidPaginationToken, "Invalid pagination token")
		}
		start = n
	}
	var all []*ec2ENI
	for _, e := range w.ec2.enis {
		if len(in.NetworkInterfaceIDs) > 0 && !slices.Contains(in.NetworkInterfaceIDs, e.ID) {
			continue
		}
		if w.ec2ENIMatches(e, in.Filters) {
			all = append(all, e)
		}
	}
	slices.SortFunc(all, func(x, y *ec2ENI) int { return cmp.Compare(x.seq, y.seq) })
	if start > len(all) {
		start = len(all)
	}
	end := len(all)
	next := ""
	if in.MaxResults > 0 && start+in.MaxResults < len(all) {
		end = start + in.MaxResults
		next = encodeToken(end)
	}
	out := make([]EC2NetworkInterface, 0, end-start)
	for _, e := range all[start:end] {
		out = append(out, w.ec2ENIView(e))
	}
	return out, next, nil
}

func (w *World) ec2ENIMatches(e *ec2ENI, filters []Filter) bool {
	for _, f := range filters {
		if m, isTag := tagFilter(f.Name, e.Tags, f.Values); isTag {
			if !m {
				return false
			}
			continue
		}
		if !ec2ENIFilters[f.Name](e, f.Values) {
			return false
		}
	}
	return true
}

func encodeToken(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(n)))
}

func decodeToken(s string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	v, ok := strings.CutPrefix(string(b), "offset:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

// EC2DeleteTag is one Tag.N of DeleteTags: without Value the tag is deleted
// whatever its value; with Value (even "") only if the value matches.
type EC2DeleteTag struct {
	Key   string
	Value *string
}

// ec2Taggable resolves a resource ID to its tag map; another account's
// address does not exist for the caller.
func (w *World) ec2Taggable(account, id string) (map[string]string, func(map[string]string), *APIError) {
	switch {
	case strings.HasPrefix(id, "eipalloc-"):
		a := w.ec2.addresses[id]
		if a == nil || a.Account != w.account(account) {
			return nil, nil, badRequest(EC2InvalidAllocationIDNotFound, "The allocation ID '%s' does not exist", id)
		}
		return a.Tags, func(m map[string]string) { a.Tags = m }, nil
	case strings.HasPrefix(id, "eni-"):
		e := w.ec2.enis[id]
		if e == nil {
			return nil, nil, badRequest(EC2InvalidNetworkInterfaceIDNF, "The networkInterface ID '%s' does not exist", id)
		}
		return e.Tags, func(m map[string]string) { e.Tags = m }, nil
	case strings.HasPrefix(id, "i-"):
		in := w.ec2.instances[id]
		if in == nil {
			return nil, nil, badRequest(EC2InvalidInstanceIDNotFound, "The instance ID '%s' does not exist", id)
		}
		return in.Tags, func(m map[string]string) { in.Tags = m }, nil
	default:
		return nil, nil, badRequest(EC2InvalidID, "The ID '%s' is not valid", id)
	}
}

// EC2CreateTags adds or overwrites tags on every resource, all or nothing.
func (w *World) EC2CreateTags(account string, resourceIDs []string, tags []Tag) *APIError {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(resourceIDs) == 0 {
		return badRequest(EC2MissingParameter, "The request must contain the parameter resourceIdSet")
	}
	if len(tags) == 0 {
		return badRequest(EC2MissingParameter, "The request must contain the parameter tagSet")
	}
	if err := validateEC2Tags(tags); err != nil {
		return err
	}
	type target struct {
		cur map[string]string
		set func(map[string]string)
	}
	var targets []target
	for _, id := range resourceIDs {
		cur, set, err := w.ec2Taggable(account, id)
		if err != nil {
			return err
		}
		next := maps.Clone(cur)
		if next == nil {
			next = map[string]string{}
		}
		for _, t := range tags {
			next[t.Key] = t.Value
		}
		if len(next) > ec2MaxTags {
			return badRequest(EC2TagLimitExceeded, "The maximum number of tags per resource (%d) has been exceeded", ec2MaxTags)
		}
		targets = append(targets, target{cur: next, set: set})
	}
	for _, t := range targets {
		t.set(t.cur)
	}
	return nil
}

// EC2DeleteTags removes tags; with no tags given, every tag is removed.
func (w *World) EC2DeleteTags(account string, resourceIDs []string, tags []EC2DeleteTag) *APIError {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(resourceIDs) == 0 {
		return badRequest(EC2MissingParameter, "The request must contain the parameter resourceIdSet")
	}
	type target struct {
		cur map[string]string
		set func(map[string]string)
	}
	var targets []target
	for _, id := range resourceIDs {
		cur, set, err := w.ec2Taggable(account, id)
		if err != nil {
			return err
		}
		targets = append(targets, target{cur: cur, set: set})
	}
	for _, t := range targets {
		if len(tags) == 0 {
			t.set(map[string]string{})
			continue
		}
		next := maps.Clone(t.cur)
		for _, d := range tags {
			if v, ok := next[d.Key]; ok && (d.Value == nil || *d.Value == v) {
				delete(next, d.Key)
			}
		}
		t.set(next)
	}
	return nil
}
