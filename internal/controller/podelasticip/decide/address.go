package decide

// Address is an elastic IP as PodElasticIP's decisions see it, on either
// cloud: the AWS and Tencent Cloud clients' addresses are mapped into it by
// the controller's cloud adapters, so every decision here is made once for
// both clouds.
type Address struct {
	// AllocationID is the address's ID: EC2's allocation ID (eipalloc-…),
	// Tencent Cloud's AddressId (eip-…).
	AllocationID string
	PublicIP     string
	// AssociationID names the address's current association; empty when it
	// is associated with nothing. EC2 gives each association an ID; Tencent
	// Cloud has none, so there it is "<ENI>/<private IP>" while the address
	// is bound (a new association with another target is another ID, as on
	// EC2).
	AssociationID      string
	NetworkInterfaceID string
	PrivateIPAddress   string
	Tags               map[string]string
	// Pending is the state of a cloud task running on the address (Tencent
	// Cloud's CREATING, BINDING, UNBINDING, OFFLINING): nothing may be done
	// to it until the task ends. Always empty on EC2, whose calls finish
	// before they answer.
	Pending string
}

// Associated reports whether the address is associated with anything.
func (a Address) Associated() bool { return a.AssociationID != "" }
