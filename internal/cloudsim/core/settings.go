package core

import (
	"fmt"
	"net/netip"
	"time"
)

// Provider names used in bucket keys, fault specs and statistics.
const (
	ProviderEC2     = "ec2"
	ProviderTencent = "tencent"
)

// Default test credentials accepted by the Tencent front-end. The Tencent SDK
// always signs, so "no credentials" against the emulator means these keys
// (internal/cloud/tencentcloud uses the same literals for CredentialsNone).
const (
	DefaultTencentSecretID  = "AKIDedgeplaneEmulator0000000000000"
	DefaultTencentSecretKey = "edgeplaneEmulatorSecretKey0000000"
)

// Settings are the emulator's tunables. Every field has a default, applied
// by Normalize, so a zero Settings is valid.
type Settings struct {
	// EC2AddressQuota is the EIP quota per region (AWS default 5).
	EC2AddressQuota int `json:"ec2AddressQuota,omitempty"`
	// TencentAddressQuota is the EIP quota per region (Tencent default 20).
	TencentAddressQuota int `json:"tencentAddressQuota,omitempty"`

	// RateLimitScale multiplies every bucket's burst and refill rate; values
	// above 1 let benchmarks and soak tests run faster than the real cloud.
	RateLimitScale float64 `json:"rateLimitScale,omitempty"`
	// RateLimitsDisabled turns all server-side throttling off.
	RateLimitsDisabled bool `json:"rateLimitsDisabled,omitempty"`
	// RateLimitOverrides replaces individual buckets, keyed like
	// DefaultBuckets ("ec2/AllocateAddress", "tencent/DescribeAddresses").
	RateLimitOverrides map[string]Bucket `json:"rateLimitOverrides,omitempty"`

	// TaskDuration is how long (emulator clock) a Tencent async task stays
	// RUNNING.
	TaskDuration Duration `json:"taskDuration,omitempty"`

	// EC2PublicIPv4Pools maps PublicIpv4Pool names to the prefix addresses
	// are drawn from. "amazon" is the pool used when none is requested.
	EC2PublicIPv4Pools map[string]string `json:"ec2PublicIpv4Pools,omitempty"`
	// EC2AccountID is reported as owner of ENIs and addresses.
	EC2AccountID string `json:"ec2AccountId,omitempty"`
	// TencentAddressPrefix is the prefix Tencent addresses are drawn from.
	TencentAddressPrefix string `json:"tencentAddressPrefix,omitempty"`
	// TencentAnycastZones lists the AnycastZone values this account is
	// allow-listed for; AnycastEIP outside them fails with
	// UnauthorizedOperation.AnycastEip. Nil means both real zones.
	TencentAnycastZones []string `json:"tencentAnycastZones,omitempty"`
	// TencentCredentials maps SecretId to SecretKey for TC3 signature checks.
	TencentCredentials map[string]string `json:"tencentCredentials,omitempty"`
	// TencentSignatureMaxSkew is the accepted X-TC-Timestamp skew against the
	// wall clock (real API: 5 minutes). Negative disables the check.
	TencentSignatureMaxSkew Duration `json:"tencentSignatureMaxSkew,omitempty"`
}

// Tencent AnycastZone values.
const (
	AnycastZoneOverseas = "ANYCAST_ZONE_OVERSEAS"
	AnycastZoneGlobal   = "ANYCAST_ZONE_GLOBAL"
)

// Normalize fills defaults and validates.
func (s *Settings) Normalize() error {
	if s.EC2AddressQuota == 0 {
		s.EC2AddressQuota = 5
	}
	if s.TencentAddressQuota == 0 {
		s.TencentAddressQuota = 20
	}
	if s.RateLimitScale == 0 {
		s.RateLimitScale = 1
	}
	if s.TaskDuration == 0 {
		s.TaskDuration = Duration(2 * time.Second)
	}
	if len(s.EC2PublicIPv4Pools) == 0 {
		// RFC 2544 benchmarking space: never routed, large enough for soak runs.
		s.EC2PublicIPv4Pools = map[string]string{"amazon": "198.18.0.0/16"}
	}
	if _, ok := s.EC2PublicIPv4Pools["amazon"]; !ok {
		s.EC2PublicIPv4Pools["amazon"] = "198.18.0.0/16"
	}
	if s.EC2AccountID == "" {
		s.EC2AccountID = "123456789012"
	}
	if s.TencentAddressPrefix == "" {
		s.TencentAddressPrefix = "198.19.0.0/16"
	}
	if s.TencentAnycastZones == nil {
		s.TencentAnycastZones = []string{AnycastZoneOverseas, AnycastZoneGlobal}
	}
	if len(s.TencentCredentials) == 0 {
		s.TencentCredentials = map[string]string{DefaultTencentSecretID: DefaultTencentSecretKey}
	}
	if s.TencentSignatureMaxSkew == 0 {
		s.TencentSignatureMaxSkew = Duration(5 * time.Minute)
	}

	if s.EC2AddressQuota < 0 || s.TencentAddressQuota < 0 {
		return fmt.Errorf("address quotas must not be negative")
	}
	if s.RateLimitScale < 0 {
		return fmt.Errorf("rateLimitScale %v must be positive", s.RateLimitScale)
	}
	if s.TaskDuration < 0 {
		return fmt.Errorf("taskDuration must not be negative")
	}
	for name, p := range s.EC2PublicIPv4Pools {
		if _, err := netip.ParsePrefix(p); err != nil {
			return fmt.Errorf("ec2PublicIpv4Pools[%s]: %w", name, err)
		}
	}
	if _, err := netip.ParsePrefix(s.TencentAddressPrefix); err != nil {
		return fmt.Errorf("tencentAddressPrefix: %w", err)
	}
	for k, b := range s.RateLimitOverrides {
		if b.Burst < 1 || b.RefillPerSecond < 0 {
			return fmt.Errorf("rateLimitOverrides[%s]: burst must be >= 1 and refillPerSecond >= 0", k)
		}
	}
	return nil
}
