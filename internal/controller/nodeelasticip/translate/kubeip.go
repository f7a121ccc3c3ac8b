// Package translate reads doitintl/kubeip's own configuration into
// NodeElasticIP specs: its FILTER (AWS describe-addresses filters in the
// CLI's shorthand, several separated by ";") and ORDER_BY (an address
// field, or Tag:<key>), as its README and its AWS assigner define them.
// What a free pool address can be filtered and ordered by is accepted;
// the rest is refused with a reason (docs/migration/kubeip.md).
package translate

import (
	"fmt"
	"strings"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// kubeip's environment variables (the DaemonSet's), which the manager's
// flags take in the same syntax.
const (
	EnvFilter   = "FILTER"
	EnvOrderBy  = "ORDER_BY"
	EnvTaintKey = "TAINT_KEY"
)

// poolFilterNames are the filters a free pool address can be selected by.
var poolFilterNames = map[string]bool{"tag-key": true, "public-ip": true, "allocation-id": true}

// ParseFilter parses kubeip's FILTER: filters separated by ";", each
// "Name=<name>,Values=<value>[,<value>...]" (the AWS CLI's shorthand,
// which kubeip splits at the first comma). "" is no filter.
func ParseFilter(s string) ([]networkingv1alpha1.AddressFilter, error) {
	var out []networkingv1alpha1.AddressFilter
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		namePart, valuesPart, ok := strings.Cut(part, ",")
		name, okName := strings.CutPrefix(namePart, "Name=")
		values, okValues := strings.CutPrefix(valuesPart, "Values=")
		if !ok || !okName || !okValues || name == "" || values == "" {
			return nil, fmt.Errorf("filter %q: want Name=<name>,Values=<value>[,<value>...]", part)
		}
		if !poolFilterNames[name] && !(strings.HasPrefix(name, "tag:") && len(name) > len("tag:")) {
			return nil, fmt.Errorf("filter %q: a pool is filtered by tag:<key>, tag-key, public-ip or allocation-id; %s describes where an address is associated, which a free address never is", part, name)
		}
		f := networkingv1alpha1.AddressFilter{Name: name}
		for _, v := range strings.Split(values, ",") {
			if v = strings.TrimSpace(v); v != "" {
				f.Values = append(f.Values, v)
			}
		}
		if len(f.Values) == 0 {
			return nil, fmt.Errorf("filter %q has no values", part)
		}
		out = append(out, f)
	}
	return out, nil
}

// FormatFilter is ParseFilter's inverse.
func FormatFilter(fs []networkingv1alpha1.AddressFilter) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, "Name="+f.Name+",Values="+strings.Join(f.Values, ","))
	}
	return strings.Join(parts, ";")
}

// ParseOrderBy checks kubeip's ORDER_BY for a pool: AllocationId, PublicIp,
// PublicIpv4Pool or Tag:<key>, optionally with edgeplane's leading "-" for
// a descending order. "" is edgeplane's default, PublicIp. kubeip's other
// fields (AssociationId, InstanceId, NetworkInterfaceId, PrivateIpAddress,
// NetworkInterfaceOwnerId) are empty on every free address, and Domain is
// "vpc" on all of them: ordering by them orders nothing.
func ParseOrderBy(s string) (string, error) {
	s = strings.TrimSpace(s)
	field := strings.TrimPrefix(s, "-")
	switch {
	case s == "":
		return "PublicIp", nil
	case field == "AllocationId" || field == "PublicIp" || field == "PublicIpv4Pool":
		return s, nil
	case strings.HasPrefix(field, "Tag:") && len(field) > len("Tag:"):
		return s, nil
	}
	return "", fmt.Errorf("order %q: want AllocationId, PublicIp, PublicIpv4Pool or Tag:<key> (a leading - reverses it); the other address fields are the same on every free address", s)
}

// Pool is the allocation of a kubeip FILTER and ORDER_BY: Pool mode with
// the filters, or Auto when there is no filter (kubeip needs one; edgeplane
// then allocates instead of claiming).
func Pool(filter, orderBy string) (networkingv1alpha1.NodeElasticIPAllocation, error) {
	fs, err := ParseFilter(filter)
	if err != nil {
		return networkingv1alpha1.NodeElasticIPAllocation{}, err
	}
	order, err := ParseOrderBy(orderBy)
	if err != nil {
		return networkingv1alpha1.NodeElasticIPAllocation{}, err
	}
	if len(fs) == 0 {
		if strings.TrimSpace(orderBy) != "" {
			return networkingv1alpha1.NodeElasticIPAllocation{}, fmt.Errorf("an order (%q) needs a pool filter", orderBy)
		}
		return networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeAuto}, nil
	}
	return networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModePool,
		Pool: &networkingv1alpha1.NodeElasticIPPool{Filters: fs, OrderBy: order}}, nil
}
