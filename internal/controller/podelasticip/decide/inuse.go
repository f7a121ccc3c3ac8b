package decide

// ForeignHolder decides, after EC2 refused to associate ours with a private
// IP (Resource.AlreadyAssociated with reassociation off), whether another
// address sits on that IP. eniPublicIP is the public IP the ENI reports on
// the private IP (it shows addresses of every account); visible are the
// caller's addresses associated with the IP (they cover pod IPs from a
// delegated prefix, which the ENI does not list). It returns the holder's
// public IP, or "" when only ours is there (the refusal was about our
// address being bound elsewhere, for instance by a concurrent claimer).
func ForeignHolder(eniPublicIP string, visible []Address, ours Address) string {
	if eniPublicIP != "" && eniPublicIP != ours.PublicIP {
		return eniPublicIP
	}
	for _, a := range visible {
		if a.AllocationID != ours.AllocationID && a.Associated() {
			return a.PublicIP
		}
	}
	return ""
}
