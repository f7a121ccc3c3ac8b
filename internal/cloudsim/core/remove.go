package core

import (
	"fmt"
	"slices"
)

// Removals take resources away the way the cloud does when a node or a pod
// goes, for tests of what the controllers find afterwards (the admin API's
// POST /admin/remove). Everything is checked before anything changes.
type Removals struct {
	EC2     EC2Removals     `json:"ec2,omitempty"`
	Tencent TencentRemovals `json:"tencent,omitempty"`
}

// EC2Removals terminates instances.
type EC2Removals struct {
	Instances []string `json:"instances,omitempty"`
}

// TencentRemovals terminates CVM instances and returns secondary private IPs
// of ENIs (a pod's IP handed back by the CNI).
type TencentRemovals struct {
	Instances  []string             `json:"instances,omitempty"`
	PrivateIPs []TCPrivateIPFixture `json:"privateIpAddresses,omitempty"`
}

// Remove applies removals:
//
//   - An EC2 instance is terminated and gone at once (EC2 lists it as
//     terminated for a while; the emulator models no DescribeInstances).
//     Its primary ENI is deleted with it (deleteOnTermination), which
//     "releases any private IP addresses or Elastic IP addresses" on it
//     (EC2 User Guide, Delete a network interface): their addresses are
//     disassociated and stay allocated. Other ENIs are detached and keep
//     their addresses.
//   - A Tencent CVM instance is terminated as TerminateInstances does by
//     default (ReleaseAddress false: "by default EIPs are not released",
//     https://www.tencentcloud.com/document/api/213/15723): EIPs on its
//     primary ENI become UNBIND, the primary ENI goes, secondary ENIs stay
//     dangling and EIPs bound to their private IPs become BIND_ENI.
//   - A Tencent private IP is returned as UnassignPrivateIpAddresses does:
//     "returning a secondary private IP of an ENI automatically
//     disassociates its EIP; the primary private IP cannot be returned"
//     (https://www.tencentcloud.com/document/api/215/15814).
//
// Addresses with a Tencent task still running on an affected private IP
// refuse the removal (try again once the task finished).
func (w *World) Remove(r *Removals) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if err := w.checkRemovals(r); err != nil {
		return err
	}
	for _, id := range r.EC2.Instances {
		for _, e := range w.ec2.enis {
			if e.InstanceID != id {
				continue
			}
			if e.DeviceIndex == 0 {
				for _, a := range w.ec2.addresses {
					if a.ENIID == e.ID {
						a.AssociationID, a.ENIID, a.PrivateIP = "", "", ""
					}
				}
				delete(w.ec2.enis, e.ID)
				continue
			}
			e.InstanceID, e.AttachmentID, e.DeviceIndex = "", "", 0
		}
		delete(w.ec2.instances, id)
	}
	for _, p := range r.Tencent.PrivateIPs {
		e := w.tc.enis[p.NetworkInterfaceID]
		for _, ip := range p.PrivateIPAddresses {
			if a := w.tcAddressOn(e.ID, ip); a != nil {
				a.unbind()
			}
			e.PrivateIPs = slices.DeleteFunc(e.PrivateIPs, func(x string) bool { return x == ip })
		}
	}
	for _, id := range r.Tencent.Instances {
		inst := w.tc.instances[id]
		for _, e := range w.tc.enis {
			if e.InstanceID != id {
				continue
			}
			for _, a := range w.tc.addresses {
				if a.ENIID != e.ID {
					continue
				}
				if e.Primary {
					a.unbind()
				} else {
					a.InstanceID, a.Status, a.boundStatus = "", TCStatusBindENI, TCStatusBindENI
				}
			}
			if e.Primary {
				delete(w.tc.enis, e.ID)
				continue
			}
			e.InstanceID, e.DeviceIndex = "", 0
		}
		delete(w.tc.instances, inst.ID)
	}
	return nil
}

func (w *World) checkRemovals(r *Removals) error {
	for _, id := range r.EC2.Instances {
		if w.ec2.instances[id] == nil {
			return fmt.Errorf("EC2 instance %s does not exist", id)
		}
	}
	busy := func(eniID, ip string) error {
		for _, a := range w.tc.addresses {
			if a.ENIID == eniID && (ip == "" || a.PrivateIP == ip) && a.Task != 0 {
				return fmt.Errorf("a task on address %s (bound to %s) is still running; remove after it finished", a.ID, eniID)
			}
		}
		return nil
	}
	for _, p := range r.Tencent.PrivateIPs {
		e := w.tc.enis[p.NetworkInterfaceID]
		if e == nil {
			return fmt.Errorf("ENI %q does not exist", p.NetworkInterfaceID)
		}
		for _, ip := range p.PrivateIPAddresses {
			switch i := slices.Index(e.PrivateIPs, ip); {
			case i < 0:
				return fmt.Errorf("private IP %s is not on ENI %s", ip, e.ID)
			case i == 0:
				return fmt.Errorf("private IP %s is the primary IP of ENI %s, which cannot be returned", ip, e.ID)
			}
			if err := busy(e.ID, ip); err != nil {
				return err
			}
		}
	}
	for _, id := range r.Tencent.Instances {
		if w.tc.instances[id] == nil {
			return fmt.Errorf("CVM instance %s does not exist", id)
		}
		for _, e := range w.tc.enis {
			if e.InstanceID == id {
				if err := busy(e.ID, ""); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
