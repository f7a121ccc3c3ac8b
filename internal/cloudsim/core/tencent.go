package core

import (
	"cmp"
	"container/heap"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Tencent address states (Address.AddressStatus).
const (
	TCStatusCreating  = "CREATING"
	TCStatusUnbind    = "UNBIND"
	TCStatusBinding   = "BINDING"
	TCStatusBind      = "BIND"
	TCStatusBindENI   = "BIND_ENI"
	TCStatusUnbinding = "UNBINDING"
	TCStatusOffline   = "OFFLINING"
)

// Tencent task results (DescribeTaskResult.Result).
const (
	TCTaskRunning = "RUNNING"
	TCTaskSuccess = "SUCCESS"
	TCTaskFailed  = "FAILED"
)

var (
	tcAddressIDPattern  = regexp.MustCompile(`^eip-[0-9a-z]{8}$`)
	tcInstanceIDPattern = regexp.MustCompile(`^ins-[0-9a-z]{8}$`)
	tcENIIDPattern      = regexp.MustCompile(`^eni-[0-9a-z]{8}$`)
)

type tcState struct {
	addresses  map[string]*tcAddress
	instances  map[string]*tcInstance
	enis       map[string]*tcENI
	tasks      map[uint64]*tcTask
	running    taskHeap // tasks still RUNNING
	tokens     map[string]tcTokenResult
	pool       *ipPool
	seq        int64
	nextTaskID uint64
}

type tcAddress struct {
	ID          string
	Name        string
	Type        string
	Status      string
	IP          netip.Addr
	InstanceID  string
	ENIID       string
	PrivateIP   string
	ChargeType  string
	AnycastZone string
	ISP         string
	Bandwidth   int64
	Tags        map[string]string
	CreatedAt   time.Time
	VisibleAt   time.Time
	Task        uint64
	// boundStatus is the status a binding ends in (and a failed unbinding
	// returns to): BIND, or BIND_ENI for an ENI attached to no instance.
	boundStatus string
	seq         int64
}

type tcInstance struct {
	ID       string
	Name     string
	Zone     string
	VpcID    string
	SubnetID string
	// ENIID is the primary ENI's ID and eni the ENI itself; the instance's
	// private IPs are the primary ENI's.
	ENIID     string
	eni       *tcENI
	Tags      map[string]string
	CreatedAt time.Time
	seq       int64
}

// privateIPs are the instance's private IPs: its primary ENI's, the first
// being the primary IP (CVM DescribeInstances' PrivateIpAddresses).
func (in *tcInstance) privateIPs() []string { return in.eni.PrivateIPs }

type tcTask struct {
	ID         uint64
	Action     string
	AddressIDs []string
	CreatedAt  time.Time
	DoneAt     time.Time
	Result     string
	fail       bool
}

// tcTokenResult is what an AllocateAddresses call with a ClientToken
// returned, replayed for every retry with the same token.
type tcTokenResult struct {
	AddressIDs []string
	TaskID     uint64
}

func newTCState(s *Settings) (*tcState, error) {
	pool, err := newIPPool(s.TencentAddressPrefix)
	if err != nil {
		return nil, err
	}
	return &tcState{
		addresses: map[string]*tcAddress{},
		instances: map[string]*tcInstance{},
		enis:      map[string]*tcENI{},
		tasks:     map[uint64]*tcTask{},
		tokens:    map[string]tcTokenResult{},
		pool:      pool,
	}, nil
}

// TCAddress is the public view of a Tencent EIP (fields as in vpc.Address).
type TCAddress struct {
	AddressID          string     `json:"addressId"`
	AddressName        string     `json:"addressName,omitempty"`
	AddressIP          string     `json:"addressIp"`
	AddressType        string     `json:"addressType"`
	AddressStatus      string     `json:"addressStatus"`
	InstanceID         string     `json:"instanceId,omitempty"`
	NetworkInterfaceID string     `json:"networkInterfaceId,omitempty"`
	PrivateAddressIP   string     `json:"privateAddressIp,omitempty"`
	InternetChargeType string     `json:"internetChargeType"`
	AnycastZone        string     `json:"anycastZone,omitempty"`
	ISP                string     `json:"internetServiceProvider"`
	Bandwidth          int64      `json:"bandwidth"`
	Tags               []Tag      `json:"tags,omitempty"`
	CreatedTime        time.Time  `json:"createdTime"`
	PendingTaskID      uint64     `json:"pendingTaskId,omitempty"`
	VisibleAt          *time.Time `json:"visibleAt,omitempty"`
	// InstanceType is what the address is bound to: CVM (an instance, or an
	// ENI attached to one), ENI (an ENI attached to no instance), or empty.
	InstanceType string `json:"instanceType,omitempty"`
}

// TCInstance is the public view of a CVM instance.
type TCInstance struct {
	InstanceID         string    `json:"instanceId"`
	InstanceName       string    `json:"instanceName"`
	InstanceState      string    `json:"instanceState"`
	Zone               string    `json:"zone"`
	VpcID              string    `json:"vpcId"`
	SubnetID           string    `json:"subnetId"`
	NetworkInterfaceID string    `json:"networkInterfaceId"`
	PrivateIPAddresses []string  `json:"privateIpAddresses"`
	PublicIPAddresses  []string  `json:"publicIpAddresses,omitempty"`
	Tags               []Tag     `json:"tags,omitempty"`
	CreatedTime        time.Time `json:"createdTime"`
}

// TCTask is the public view of an async task.
type TCTask struct {
	TaskID     uint64    `json:"taskId"`
	Action     string    `json:"action"`
	AddressIDs []string  `json:"addressIds"`
	Result     string    `json:"result"`
	CreatedAt  time.Time `json:"createdAt"`
	DoneAt     time.Time `json:"doneAt"`
}

func (w *World) tcAddressView(a *tcAddress, now time.Time) TCAddress {
	v := TCAddress{
		AddressID:          a.ID,
		AddressName:        a.Name,
		AddressIP:          a.IP.String(),
		AddressType:        a.Type,
		AddressStatus:      a.Status,
		InstanceID:         a.InstanceID,
		NetworkInterfaceID: a.ENIID,
		PrivateAddressIP:   a.PrivateIP,
		InternetChargeType: a.ChargeType,
		AnycastZone:        a.AnycastZone,
		ISP:                a.ISP,
		Bandwidth:          a.Bandwidth,
		Tags:               sortedTags(a.Tags),
		CreatedTime:        a.CreatedAt,
		PendingTaskID:      a.Task,
	}
	switch {
	case a.InstanceID != "":
		v.InstanceType = "CVM"
	case a.ENIID != "":
		v.InstanceType = "ENI"
	}
	if a.VisibleAt.After(now) {
		t := a.VisibleAt
		v.VisibleAt = &t
	}
	return v
}

func (w *World) tcInstanceView(in *tcInstance) TCInstance {
	v := TCInstance{
		InstanceID:         in.ID,
		InstanceName:       in.Name,
		InstanceState:      "RUNNING",
		Zone:               in.Zone,
		VpcID:              in.VpcID,
		SubnetID:           in.SubnetID,
		NetworkInterfaceID: in.ENIID,
		PrivateIPAddresses: slices.Clone(in.privateIPs()),
		Tags:               sortedTags(in.Tags),
		CreatedTime:        in.CreatedAt,
	}
	// PrivateIpAddresses and PublicIpAddresses are "the instance's primary
	// ENI's" private and public IPs (cvm v20170312 Instance, DescribeInstances:
	// https://www.tencentcloud.com/document/api/213/15728).
	for _, a := range w.tc.addresses {
		if a.ENIID == in.ENIID && a.Status == TCStatusBind {
			v.PublicIPAddresses = append(v.PublicIPAddresses, a.IP.String())
		}
	}
	slices.Sort(v.PublicIPAddresses)
	return v
}

// tcAdvance completes every task whose time has come, in completion order.
// It runs at the start of every Tencent operation and snapshot, so task
// progress depends only on the clock, never on a background goroutine.
// Running tasks sit in a min-heap by completion time, so this is cheap even
// with thousands in flight.
func (w *World) tcAdvance() {
	now := w.clock.Now()
	for w.tc.running.Len() > 0 && !w.tc.running[0].DoneAt.After(now) {
		w.tcComplete(heap.Pop(&w.tc.running).(*tcTask))
	}
}

// taskHeap orders running tasks by completion time, then ID.
type taskHeap []*tcTask

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(i, j int) bool {
	return cmp.Or(h[i].DoneAt.Compare(h[j].DoneAt), cmp.Compare(h[i].ID, h[j].ID)) < 0
}
func (h taskHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *taskHeap) Push(x any)   { *h = append(*h, x.(*tcTask)) }
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (w *World) tcComplete(t *tcTask) {
	t.Result = TCTaskSuccess
	if t.fail {
		t.Result = TCTaskFailed
	}
	for _, id := range t.AddressIDs {
		a := w.tc.addresses[id]
		if a == nil || a.Task != t.ID {
			continue
		}
		a.Task = 0
		switch t.Action {
		case "AllocateAddresses":
			if t.fail {
				w.tcDelete(a)
			} else {
				a.Status = TCStatusUnbind
			}
		case "AssociateAddress":
			if t.fail {
				a.unbind()
			} else if a.Status == TCStatusBinding {
				a.Status = a.boundStatus
			}
		case "DisassociateAddress":
			if t.fail {
				a.Status = a.boundStatus
			} else {
				a.unbind()
			}
		case "ReleaseAddresses":
			if t.fail {
				a.Status = TCStatusUnbind
			} else {
				w.tcDelete(a)
			}
		}
	}
}

// unbind clears an address's binding.
func (a *tcAddress) unbind() {
	a.Status, a.InstanceID, a.ENIID, a.PrivateIP, a.boundStatus = TCStatusUnbind, "", "", "", ""
}

// bind binds an address to privateIP of eni: BIND when the ENI is attached
// to an instance (the address then names the instance), BIND_ENI when it
// is not ("BIND_ENI: bound to a dangling ENI", vpc v20170312
// Address.AddressStatus). status is the state it is in meanwhile
// (BINDING while the task runs; the bound state for fixtures).
func (a *tcAddress) bind(eni *tcENI, privateIP, status string) {
	a.boundStatus = TCStatusBind
	if eni.InstanceID == "" {
		a.boundStatus = TCStatusBindENI
	}
	if status == "" {
		status = a.boundStatus
	}
	a.Status, a.InstanceID, a.ENIID, a.PrivateIP = status, eni.InstanceID, eni.ID, privateIP
}

func (w *World) tcDelete(a *tcAddress) {
	delete(w.tc.addresses, a.ID)
	w.tc.pool.release(a.IP)
}

func (w *World) tcNewTask(action string, addressIDs []string, fail bool) *tcTask {
	if w.tc.nextTaskID == 0 {
		// Real task IDs are ten-digit numbers; start somewhere seeded.
		w.tc.nextTaskID = 1_300_000_000 + uint64(w.rng.IntN(100_000_000))
	}
	w.tc.nextTaskID++
	now := w.clock.Now()
	t := &tcTask{
		ID:         w.tc.nextTaskID,
		Action:     action,
		AddressIDs: slices.Clone(addressIDs),
		CreatedAt:  now,
		DoneAt:     now.Add(w.settings.TaskDuration.D()),
		Result:     TCTaskRunning,
		fail:       fail,
	}
	w.tc.tasks[t.ID] = t
	heap.Push(&w.tc.running, t)
	for _, id := range addressIDs {
		if a := w.tc.addresses[id]; a != nil {
			a.Task = t.ID
		}
	}
	// A zero task duration completes at once, but still through the task
	// machinery so both paths behave the same.
	w.tcAdvance()
	return t
}

// TCAllocateInput is AllocateAddresses' parameters.
type TCAllocateInput struct {
	AddressCount            *int64
	AddressType             string
	AnycastZone             string
	InternetChargeType      string
	InternetServiceProvider string
	InternetMaxBandwidthOut *int64
	AddressName             string
	Tags                    []Tag
	ClientToken             string
	// VisibilityDelay and TaskFail come from the fault decision.
	VisibilityDelay time.Duration
	TaskFail        bool
}

var (
	tcAddressTypes = []string{"EIP", "AnycastEIP", "HighQualityEIP", "AntiDDoSEIP"}
	tcChargeTypes  = []string{"BANDWIDTH_PACKAGE", "BANDWIDTH_POSTPAID_BY_HOUR", "BANDWIDTH_PREPAID_BY_MONTH", "TRAFFIC_POSTPAID_BY_HOUR"}
)

func validTCToken(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// TCAllocateAddresses allocates addresses asynchronously: they start in
// CREATING and become UNBIND when the returned task succeeds. A repeated
// ClientToken returns the first call's result and creates nothing.
func (w *World) TCAllocateAddresses(in TCAllocateInput) ([]string, uint64, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if !validTCToken(in.ClientToken) {
		return nil, 0, badRequest(TCInvalidParameterValue, "ClientToken must be at most 64 printable ASCII characters")
	}
	if in.ClientToken != "" {
		if r, ok := w.tc.tokens[in.ClientToken]; ok {
			return slices.Clone(r.AddressIDs), r.TaskID, nil
		}
	}
	count := int64(1)
	if in.AddressCount != nil {
		count = *in.AddressCount
	}
	if count < 1 || count > 20 {
		return nil, 0, badRequest(TCParameterValueRange, "AddressCount %d is out of range [1, 20]", count)
	}
	typ := cmp.Or(in.AddressType, "EIP")
	if !slices.Contains(tcAddressTypes, typ) {
		return nil, 0, badRequest(TCInvalidParameterValue, "AddressType %q is not supported", typ)
	}
	zone := ""
	if typ == "AnycastEIP" {
		zone = cmp.Or(in.AnycastZone, AnycastZoneOverseas)
		if zone != AnycastZoneOverseas && zone != AnycastZoneGlobal {
			return nil, 0, badRequest(TCUnavailableZone, "AnycastZone %q is not available", zone)
		}
		if !slices.Contains(w.settings.TencentAnycastZones, zone) {
			return nil, 0, badRequest(TCUnauthorizedAnycastEip, "the account is not allow-listed for AnycastEIP in %s", zone)
		}
	} else if in.AnycastZone != "" {
		return nil, 0, badRequest("InvalidParameterValue.Combination", "AnycastZone is only valid with AddressType AnycastEIP")
	}
	charge := cmp.Or(in.InternetChargeType, "TRAFFIC_POSTPAID_BY_HOUR")
	if !slices.Contains(tcChargeTypes, charge) {
		return nil, 0, badRequest(TCInvalidParameterValue, "InternetChargeType %q is not supported", charge)
	}
	bw := int64(1)
	if in.InternetMaxBandwidthOut != nil {
		bw = *in.InternetMaxBandwidthOut
	}
	if bw < 1 || bw > 2000 {
		return nil, 0, badRequest(TCBandwidthOutOfRange, "InternetMaxBandwidthOut %d is out of range [1, 2000]", bw)
	}
	if len(in.AddressName) > 128 {
		return nil, 0, badRequest(TCInvalidParameterValue, "AddressName exceeds 128 characters")
	}
	tags, err := tcTags(in.Tags)
	if err != nil {
		return nil, 0, err
	}
	if int64(len(w.tc.addresses))+count > int64(w.settings.TencentAddressQuota) {
		return nil, 0, badRequest(TCAddressQuotaLimitExceeded, "the number of EIPs would exceed the quota of %d per region", w.settings.TencentAddressQuota)
	}
	now := w.clock.Now()
	ids := make([]string, 0, count)
	for range count {
		ip, ok := w.tc.pool.take()
		if !ok {
			for _, id := range ids {
				w.tcDelete(w.tc.addresses[id])
			}
			return nil, 0, badRequest(TCResourceInsufficient, "no free public addresses")
		}
		w.tc.seq++
		a := &tcAddress{
			ID:          w.tcID("eip"),
			Name:        in.AddressName,
			Type:        typ,
			Status:      TCStatusCreating,
			IP:          ip,
			ChargeType:  charge,
			AnycastZone: zone,
			ISP:         cmp.Or(in.InternetServiceProvider, "BGP"),
			Bandwidth:   bw,
			Tags:        maps.Clone(tags),
			CreatedAt:   now,
			VisibleAt:   now.Add(in.VisibilityDelay),
			seq:         w.tc.seq,
		}
		w.tc.addresses[a.ID] = a
		ids = append(ids, a.ID)
	}
	t := w.tcNewTask("AllocateAddresses", ids, in.TaskFail)
	if in.ClientToken != "" {
		w.tc.tokens[in.ClientToken] = tcTokenResult{AddressIDs: slices.Clone(ids), TaskID: t.ID}
	}
	return ids, t.ID, nil
}

func tcTags(in []Tag) (map[string]string, *APIError) {
	if len(in) > 50 {
		return nil, badRequest(TCTagQuota, "at most 50 tags per resource")
	}
	tags := map[string]string{}
	for _, t := range in {
		if t.Key == "" || len(t.Key) > 127 || len(t.Value) > 255 {
			return nil, badRequest(TCInvalidTag, "invalid tag %q=%q", t.Key, t.Value)
		}
		if _, dup := tags[t.Key]; dup {
			return nil, badRequest(TCInvalidTag, "duplicate tag key %q", t.Key)
		}
		tags[t.Key] = t.Value
	}
	return tags, nil
}

func (w *World) tcLookupAddress(id string) (*tcAddress, *APIError) {
	if id == "" {
		return nil, badRequest(TCMissingParameter, "missing parameter AddressId")
	}
	if !tcAddressIDPattern.MatchString(id) {
		return nil, badRequest(TCAddressIDMalformed, "AddressId %q is malformed", id)
	}
	a := w.tc.addresses[id]
	if a == nil {
		return nil, badRequest(TCInvalidAddressIDNotFound, "the address %s does not exist", id)
	}
	return a, nil
}

// TCAssociateInput is AssociateAddress' parameters.
type TCAssociateInput struct {
	AddressID          string
	InstanceID         string
	NetworkInterfaceID string
	PrivateIPAddress   string
	TaskFail           bool
}

// TCAssociateAddress binds an UNBIND address to a CVM (its primary ENI's
// primary IP) or to a private IP of an ENI, asynchronously. The rules and
// codes are AssociateAddress's (https://www.tencentcloud.com/document/api/215/16700,
// codes as described in tencentcloud-sdk-go vpc/v20170312/errors.go):
//   - InstanceId and NetworkInterfaceId together: InvalidParameterConflict
//     ("an EIP binds either to an instance or to a private IP of an ENI");
//     neither: InvalidParameterValue.MissingAssociateEntity;
//   - NetworkInterfaceId needs PrivateIpAddress (MissingParameter); an
//     unknown ENI, or a private IP that is not on it, is
//     InvalidNetworkInterfaceId.NotFound ("NetworkInterfaceId does not exist
//     or PrivateIpAddress is not on it");
//   - only UNBIND addresses bind; an address already bound to an ENI answers
//     InvalidParameterValue.NetworkInterfaceIdNotMatch (asked for another
//     ENI) or .PrivateIpAddressNotMatch (another private IP of that ENI),
//     any other state UnsupportedOperation.AddressStatusNotPermit;
//   - a private IP carries one EIP: InvalidInstanceId.AlreadyBindEip or
//     InvalidPrivateIpAddress.AlreadyBindEip ("to bind another EIP to the
//     private IP of the specified ENI, you must first unbind the EIP").
func (w *World) TCAssociateAddress(in TCAssociateInput) (uint64, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	a, err := w.tcLookupAddress(in.AddressID)
	if err != nil {
		return 0, err
	}
	switch {
	case in.InstanceID != "" && in.NetworkInterfaceID != "":
		return 0, badRequest("InvalidParameterConflict", "InstanceId and NetworkInterfaceId cannot be specified together: an EIP binds either to an instance or to a private IP of an ENI")
	case in.InstanceID == "" && in.NetworkInterfaceID == "":
		return 0, badRequest(TCMissingAssociateEntity, "either InstanceId or NetworkInterfaceId and PrivateIpAddress must be given")
	}
	var eni *tcENI
	privateIP := ""
	if in.InstanceID != "" {
		if !tcInstanceIDPattern.MatchString(in.InstanceID) {
			return 0, badRequest(TCInstanceIDMalformed, "InstanceId %q is malformed", in.InstanceID)
		}
		inst := w.tc.instances[in.InstanceID]
		if inst == nil {
			return 0, badRequest(TCInvalidInstanceIDNotFound, "the instance %s does not exist", in.InstanceID)
		}
		// "Binding an EIP to a CVM instance is actually binding the EIP to
		// the primary private IP of the primary ENI on the CVM instance."
		eni = inst.eni
		if ips := inst.privateIPs(); len(ips) > 0 {
			privateIP = ips[0]
		}
	} else {
		if !tcENIIDPattern.MatchString(in.NetworkInterfaceID) {
			return 0, badRequest("InvalidParameterValue.NetworkInterfaceIdMalformed", "NetworkInterfaceId %q is malformed", in.NetworkInterfaceID)
		}
		if in.PrivateIPAddress == "" {
			return 0, badRequest(TCMissingParameter, "PrivateIpAddress is required with NetworkInterfaceId")
		}
		eni = w.tc.enis[in.NetworkInterfaceID]
		if eni == nil {
			return 0, badRequest(TCInvalidNetworkInterfaceIDNotFound, "the network interface %s does not exist", in.NetworkInterfaceID)
		}
		if !slices.Contains(eni.PrivateIPs, in.PrivateIPAddress) {
			return 0, badRequest(TCInvalidNetworkInterfaceIDNotFound, "the private IP %s is not on the network interface %s", in.PrivateIPAddress, in.NetworkInterfaceID)
		}
		privateIP = in.PrivateIPAddress
	}
	if a.Task != 0 {
		return 0, badRequest(TCMutexTaskRunning, "a task on %s is still running", a.ID)
	}
	if a.Status != TCStatusUnbind {
		if in.NetworkInterfaceID != "" && a.ENIID != "" && (a.Status == TCStatusBind || a.Status == TCStatusBindENI) {
			if a.ENIID != eni.ID {
				return 0, badRequest(TCNetworkInterfaceIDNotMatch, "the address %s is bound to the network interface %s and cannot be bound to another one", a.ID, a.ENIID)
			}
			if a.PrivateIP != privateIP {
				return 0, badRequest(TCPrivateIPAddressNotMatch, "the address %s is bound to the private IP %s and cannot be bound to another one", a.ID, a.PrivateIP)
			}
		}
		return 0, badRequest(TCAddressStatusNotPermit, "the status %s of address %s does not permit binding", a.Status, a.ID)
	}
	if o := w.tcAddressOn(eni.ID, privateIP); o != nil && o != a {
		if in.InstanceID != "" {
			return 0, badRequest(TCInvalidInstanceAlreadyBindEip, "the instance %s is already bound to %s", in.InstanceID, o.ID)
		}
		return 0, badRequest(TCInvalidPrivateIPAlreadyBindEip, "the private IP %s is already bound to %s", privateIP, o.ID)
	}
	a.bind(eni, privateIP, TCStatusBinding)
	t := w.tcNewTask("AssociateAddress", []string{a.ID}, in.TaskFail)
	return t.ID, nil
}

// tcAddressOn returns the address bound (or being bound) to privateIP of
// an ENI.
func (w *World) tcAddressOn(eniID, privateIP string) *tcAddress {
	for _, o := range w.tc.addresses {
		if o.ENIID == eniID && o.PrivateIP == privateIP &&
			(o.Status == TCStatusBind || o.Status == TCStatusBinding || o.Status == TCStatusBindENI) {
			return o
		}
	}
	return nil
}

// TCDisassociateAddress unbinds a BIND address asynchronously.
func (w *World) TCDisassociateAddress(addressID string, taskFail bool) (uint64, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	a, err := w.tcLookupAddress(addressID)
	if err != nil {
		return 0, err
	}
	if a.Task != 0 {
		return 0, badRequest(TCMutexTaskRunning, "a task on %s is still running", a.ID)
	}
	if a.Status != TCStatusBind && a.Status != TCStatusBindENI {
		return 0, badRequest(TCInvalidAddressIDStatus, "the status %s of address %s does not permit unbinding", a.Status, a.ID)
	}
	a.Status = TCStatusUnbinding
	t := w.tcNewTask("DisassociateAddress", []string{a.ID}, taskFail)
	return t.ID, nil
}

// TCReleaseAddresses releases UNBIND addresses asynchronously, all or none.
func (w *World) TCReleaseAddresses(ids []string, taskFail bool) (uint64, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if len(ids) == 0 {
		return 0, badRequest(TCMissingParameter, "missing parameter AddressIds")
	}
	var addrs []*tcAddress
	for _, id := range ids {
		a, err := w.tcLookupAddress(id)
		if err != nil {
			return 0, err
		}
		addrs = append(addrs, a)
	}
	for _, a := range addrs {
		if a.Task != 0 {
			return 0, badRequest(TCMutexTaskRunning, "a task on %s is still running", a.ID)
		}
		if a.Status != TCStatusUnbind {
			return 0, badRequest(TCInvalidAddressState, "the address %s is in state %s; only UNBIND addresses can be released", a.ID, a.Status)
		}
	}
	for _, a := range addrs {
		a.Status = TCStatusOffline
	}
	t := w.tcNewTask("ReleaseAddresses", ids, taskFail)
	return t.ID, nil
}

// TCDescribeAddressesInput is DescribeAddresses' parameters.
type TCDescribeAddressesInput struct {
	AddressIDs []string
	Filters    []Filter
	Offset     *int64
	Limit      *int64
}

var tcAddressFilters = map[string]func(a *tcAddress, v []string) bool{
	"address-id": func(a *tcAddress, v []string) bool { return anyEqual(v, a.ID) },
	"address-name": func(a *tcAddress, v []string) bool {
		return slices.ContainsFunc(v, func(s string) bool { return strings.Contains(a.Name, s) })
	},
	"address-ip":     func(a *tcAddress, v []string) bool { return anyEqual(v, a.IP.String()) },
	"address-status": func(a *tcAddress, v []string) bool { return anyEqual(v, a.Status) },
	"instance-id":    func(a *tcAddress, v []string) bool { return a.InstanceID != "" && anyEqual(v, a.InstanceID) },
	// "When private-ip-address is given, only the first value is used"
	// (DescribeAddresses, Filters: https://www.tencentcloud.com/document/api/215/16702).
	"private-ip-address":   func(a *tcAddress, v []string) bool { return a.PrivateIP != "" && len(v) > 0 && v[0] == a.PrivateIP },
	"network-interface-id": func(a *tcAddress, v []string) bool { return a.ENIID != "" && anyEqual(v, a.ENIID) },
	"is-arrears":           func(a *tcAddress, v []string) bool { return anyEqual(v, "FALSE") },
	"address-type":         func(a *tcAddress, v []string) bool { return anyEqual(v, a.Type) },
	"address-isp":          func(a *tcAddress, v []string) bool { return anyEqual(v, a.ISP) },
	"instance-type": func(a *tcAddress, v []string) bool {
		switch {
		case a.InstanceID != "":
			return anyEqual(v, "CVM")
		case a.ENIID != "":
			return anyEqual(v, "ENI")
		}
		return false
	},
	"tag-key": func(a *tcAddress, v []string) bool {
		return slices.ContainsFunc(v, func(k string) bool { _, ok := a.Tags[k]; return ok })
	},
	"tag-value": func(a *tcAddress, v []string) bool {
		for _, val := range a.Tags {
			if anyEqual(v, val) {
				return true
			}
		}
		return false
	},
}

func tcMatchTagFilter(name string, tags map[string]string, values []string) (matched, isTag bool) {
	key, ok := strings.CutPrefix(name, "tag:")
	if !ok {
		return false, false
	}
	v, has := tags[key]
	return has && anyEqual(values, v), true
}

// tcPage validates Offset/Limit (default limit def, maximum 100).
func tcPage(offset, limit *int64, def int64) (int, int, *APIError) {
	o, l := int64(0), def
	if offset != nil {
		o = *offset
	}
	if limit != nil {
		l = *limit
	}
	if o < 0 {
		return 0, 0, badRequest(TCParameterValueRange, "Offset %d must not be negative", o)
	}
	if l < 0 || l > 100 {
		return 0, 0, badRequest(TCParameterValueRange, "Limit %d is out of range [0, 100]", l)
	}
	if l == 0 {
		l = def
	}
	return int(o), int(l), nil
}

func tcCheckFilters(filters []Filter, known func(string) bool, maxValues int) *APIError {
	if len(filters) > 10 {
		return badRequest(TCNumberOfFilters, "at most 10 filters are allowed")
	}
	for _, f := range filters {
		if !known(f.Name) {
			return badRequest(TCInvalidFilter, "the filter %q is not supported", f.Name)
		}
		if len(f.Values) > maxValues {
			return badRequest(TCParameterValueLimitExceeded, "filter %q has more than %d values", f.Name, maxValues)
		}
	}
	return nil
}

// TCDescribeAddresses lists addresses with Tencent's paging. Unknown IDs are
// simply absent from the result (the action has no NotFound error).
func (w *World) TCDescribeAddresses(in TCDescribeAddressesInput) ([]TCAddress, int, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if err := tcCheckFilters(in.Filters, func(n string) bool {
		_, ok := tcAddressFilters[n]
		return ok || strings.HasPrefix(n, "tag:")
	}, 100); err != nil {
		return nil, 0, err
	}
	if len(in.AddressIDs) > 0 && slices.ContainsFunc(in.Filters, func(f Filter) bool { return f.Name == "address-id" }) {
		return nil, 0, badRequest(TCInvalidParameterCoexist, "AddressIds and Filters.address-id cannot be used together")
	}
	if len(in.AddressIDs) > 100 {
		return nil, 0, badRequest(TCParameterValueLimitExceeded, "at most 100 AddressIds are allowed")
	}
	for _, id := range in.AddressIDs {
		if !tcAddressIDPattern.MatchString(id) {
			return nil, 0, badRequest(TCAddressIDMalformed, "AddressId %q is malformed", id)
		}
	}
	offset, limit, err := tcPage(in.Offset, in.Limit, 20)
	if err != nil {
		return nil, 0, err
	}
	now := w.clock.Now()
	var all []*tcAddress
	for _, a := range w.tc.addresses {
		if a.VisibleAt.After(now) {
			continue
		}
		if len(in.AddressIDs) > 0 && !slices.Contains(in.AddressIDs, a.ID) {
			continue
		}
		if tcAddressMatches(a, in.Filters) {
			all = append(all, a)
		}
	}
	slices.SortFunc(all, func(x, y *tcAddress) int { return cmp.Compare(x.seq, y.seq) })
	total := len(all)
	start, end := min(offset, total), min(offset+limit, total)
	out := make([]TCAddress, 0, end-start)
	for _, a := range all[start:end] {
		out = append(out, w.tcAddressView(a, now))
	}
	return out, total, nil
}

func tcAddressMatches(a *tcAddress, filters []Filter) bool {
	for _, f := range filters {
		if m, isTag := tcMatchTagFilter(f.Name, a.Tags, f.Values); isTag {
			if !m {
				return false
			}
			continue
		}
		if !tcAddressFilters[f.Name](a, f.Values) {
			return false
		}
	}
	return true
}

// TCDescribeTaskResult reports an async task's result.
func (w *World) TCDescribeTaskResult(taskID *uint64, dealName string) (uint64, string, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if taskID == nil {
		if dealName != "" {
			return 0, "", badRequest(TCInvalidParameter, "DealName lookups are not supported by the emulator")
		}
		return 0, "", badRequest(TCMissingParameter, "missing parameter TaskId")
	}
	t := w.tc.tasks[*taskID]
	if t == nil {
		return 0, "", badRequest(TCInvalidParameter, "the task %d does not exist", *taskID)
	}
	return t.ID, t.Result, nil
}

// TCDescribeInstancesInput is cvm DescribeInstances' parameters.
type TCDescribeInstancesInput struct {
	InstanceIDs []string
	Filters     []Filter
	Offset      *int64
	Limit       *int64
}

var tcInstanceFilters = map[string]func(in *tcInstance, v []string) bool{
	"instance-id":   func(in *tcInstance, v []string) bool { return anyEqual(v, in.ID) },
	"instance-name": func(in *tcInstance, v []string) bool { return anyEqual(v, in.Name) },
	"private-ip-address": func(in *tcInstance, v []string) bool {
		return slices.ContainsFunc(in.privateIPs(), func(ip string) bool { return anyEqual(v, ip) })
	},
	"zone":           func(in *tcInstance, v []string) bool { return anyEqual(v, in.Zone) },
	"vpc-id":         func(in *tcInstance, v []string) bool { return anyEqual(v, in.VpcID) },
	"subnet-id":      func(in *tcInstance, v []string) bool { return anyEqual(v, in.SubnetID) },
	"instance-state": func(in *tcInstance, v []string) bool { return anyEqual(v, "RUNNING") },
	"tag-key": func(in *tcInstance, v []string) bool {
		return slices.ContainsFunc(v, func(k string) bool { _, ok := in.Tags[k]; return ok })
	},
	"tag-value": func(in *tcInstance, v []string) bool {
		for _, val := range in.Tags {
			if anyEqual(v, val) {
				return true
			}
		}
		return false
	},
}

// TCDescribeInstances lists CVM instances.
func (w *World) TCDescribeInstances(in TCDescribeInstancesInput) ([]TCInstance, int, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if len(in.InstanceIDs) > 100 {
		return nil, 0, badRequest(TCParameterValueLimitExceeded, "at most 100 InstanceIds are allowed")
	}
	for _, id := range in.InstanceIDs {
		if !tcInstanceIDPattern.MatchString(id) {
			return nil, 0, badRequest("InvalidInstanceId.Malformed", "InstanceId %q is malformed", id)
		}
	}
	if len(in.Filters) > 10 {
		return nil, 0, badRequest(TCParameterValueLimitExceeded, "at most 10 filters are allowed")
	}
	for _, f := range in.Filters {
		if _, ok := tcInstanceFilters[f.Name]; !ok && !strings.HasPrefix(f.Name, "tag:") {
			return nil, 0, badRequest("InvalidFilter", "the filter %q is not supported", f.Name)
		}
		if len(f.Values) > 5 {
			return nil, 0, badRequest(TCParameterValueLimitExceeded, "filter %q has more than 5 values", f.Name)
		}
	}
	offset, limit, err := tcPage(in.Offset, in.Limit, 20)
	if err != nil {
		return nil, 0, err
	}
	var all []*tcInstance
	for _, inst := range w.tc.instances {
		if len(in.InstanceIDs) > 0 && !slices.Contains(in.InstanceIDs, inst.ID) {
			continue
		}
		ok := true
		for _, f := range in.Filters {
			if m, isTag := tcMatchTagFilter(f.Name, inst.Tags, f.Values); isTag {
				ok = ok && m
			} else {
				ok = ok && tcInstanceFilters[f.Name](inst, f.Values)
			}
		}
		if ok {
			all = append(all, inst)
		}
	}
	slices.SortFunc(all, func(x, y *tcInstance) int { return cmp.Compare(x.seq, y.seq) })
	total := len(all)
	start, end := min(offset, total), min(offset+limit, total)
	out := make([]TCInstance, 0, end-start)
	for _, inst := range all[start:end] {
		out = append(out, w.tcInstanceView(inst))
	}
	return out, total, nil
}

// TCTagFilter is one TagFilters entry of the tag API: the key must be
// present, and if values are given its value must be one of them.
type TCTagFilter struct {
	Key    string
	Values []string
}

// TCTaggedResource is one row of DescribeResourcesByTags.
type TCTaggedResource struct {
	ResourceRegion string
	ServiceType    string
	ResourcePrefix string
	ResourceID     string
	Tags           []Tag
}

// TCDescribeResourcesByTagsInput is tag DescribeResourcesByTags' parameters.
type TCDescribeResourcesByTagsInput struct {
	TagFilters     []TCTagFilter
	ResourcePrefix string
	ResourceID     string
	ResourceRegion string
	ServiceType    string
	Offset         *uint64
	Limit          *uint64
	// Region is the request's X-TC-Region, reported on every row.
	Region string
}

// TCDescribeResourcesByTags looks resources (EIPs, prefix "eip", and CVM
// instances, prefix "instance") up by tags. EIPs are reported under service
// type "cvm" and also match "vpc", since sources disagree on which one the
// real tag API uses for addresses.
func (w *World) TCDescribeResourcesByTags(in TCDescribeResourcesByTagsInput) ([]TCTaggedResource, int, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if len(in.TagFilters) == 0 {
		return nil, 0, badRequest(TCMissingParameter, "missing parameter TagFilters")
	}
	for _, f := range in.TagFilters {
		if f.Key == "" {
			return nil, 0, badRequest(TCInvalidParameterValue, "TagFilters.TagKey must not be empty")
		}
	}
	offset, limit := uint64(0), uint64(15)
	if in.Offset != nil {
		offset = *in.Offset
	}
	if in.Limit != nil && *in.Limit > 0 {
		limit = *in.Limit
	}
	if limit > 1000 {
		return nil, 0, badRequest(TCParameterValueRange, "Limit %d is too large", limit)
	}
	match := func(tags map[string]string) bool {
		for _, f := range in.TagFilters {
			v, ok := tags[f.Key]
			if !ok || (len(f.Values) > 0 && !slices.Contains(f.Values, v)) {
				return false
			}
		}
		return true
	}
	type row struct {
		seq int64
		r   TCTaggedResource
	}
	now := w.clock.Now()
	var rows []row
	svcMatches := func(candidates ...string) bool {
		return in.ServiceType == "" || slices.Contains(candidates, in.ServiceType)
	}
	if (in.ResourcePrefix == "" || in.ResourcePrefix == "eip") && svcMatches("cvm", "vpc") {
		for _, a := range w.tc.addresses {
			if a.VisibleAt.After(now) || (in.ResourceID != "" && in.ResourceID != a.ID) || !match(a.Tags) {
				continue
			}
			rows = append(rows, row{seq: a.seq, r: TCTaggedResource{ResourceRegion: in.Region, ServiceType: "cvm", ResourcePrefix: "eip", ResourceID: a.ID, Tags: sortedTags(a.Tags)}})
		}
	}
	if (in.ResourcePrefix == "" || in.ResourcePrefix == "instance") && svcMatches("cvm") {
		for _, inst := range w.tc.instances {
			if (in.ResourceID != "" && in.ResourceID != inst.ID) || !match(inst.Tags) {
				continue
			}
			rows = append(rows, row{seq: inst.seq, r: TCTaggedResource{ResourceRegion: in.Region, ServiceType: "cvm", ResourcePrefix: "instance", ResourceID: inst.ID, Tags: sortedTags(inst.Tags)}})
		}
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(x.seq, y.seq) })
	total := len(rows)
	start, end := min(int(offset), total), min(int(offset+limit), total)
	out := make([]TCTaggedResource, 0, end-start)
	for _, r := range rows[start:end] {
		out = append(out, r.r)
	}
	return out, total, nil
}
