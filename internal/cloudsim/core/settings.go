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

// The well-known emulator key pairs, accepted by default. Both fronts check
// signatures like the real clouds, so "no credentials" against the emulator
// (credentials source None) means signing with these: internal/cloud/aws
// and internal/cloud/tencentcloud use the same literals. They are not
// secrets.
const (
	DefaultTencentSecretID  = "AKIDedgeplaneEmulator0000000000000"
	DefaultTencentSecretKey = "edgeplaneEmulatorSecretKey0000000"

	DefaultEC2AccessKeyID     = "AKIAEDGEPLANESIM0000"
	DefaultEC2SecretAccessKey = "edgeplaneEmulatorSecretAccessKey00000000"
)

// EC2Credential is one access key the EC2 front accepts. Each key acts for
// an account: addresses belong to the account that allocated them, and
// another account can neither see nor change them.
type EC2Credential struct {
	// SecretAccessKey signs the requests. An entry without one (a PATCH
	// of {"AKIA…": null} through the admin API) is removed: the key is
	// revoked.
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
	// AccountID defaults to Settings.EC2AccountID, the account the
	// fixtures' instances and ENIs belong to.
	AccountID string `json:"accountId,omitempty"`
}

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
	// Nil means the well-known emulator pair only; an empty map accepts no
	// key at all. An entry with an empty key is removed (revoked).
	TencentCredentials map[string]string `json:"tencentCredentials,omitempty"`
	// EC2Credentials maps access key IDs to their secret and account for
	// SigV4 checks. Nil means the well-known emulator pair only; an empty
	// map accepts no key at all.
	EC2Credentials map[string]EC2Credential `json:"ec2Credentials,omitempty"`
	// EC2SignatureMaxSkew is the accepted distance between a request's
	// X-Amz-Date and the wall clock (real API: 15 minutes). Negative
	// disables the check.
	EC2SignatureMaxSkew Duration `json:"ec2SignatureMaxSkew,omitempty"`
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
	if s.TencentCredentials == nil {
		s.TencentCredentials = map[string]string{DefaultTencentSecretID: DefaultTencentSecretKey}
	}
	for id, key := range s.TencentCredentials {
		if key == "" {
			delete(s.TencentCredentials, id)
		}
	}
	if s.TencentSignatureMaxSkew == 0 {
		s.TencentSignatureMaxSkew = Duration(5 * time.Minute)
	}
	if s.EC2Credentials == nil {
		s.EC2Credentials = map[string]EC2Credential{DefaultEC2AccessKeyID: {SecretAccessKey: DefaultEC2SecretAccessKey}}
	}
	for id, c := range s.EC2Credentials {
		switch {
		case c.SecretAccessKey == "":
			delete(s.EC2Credentials, id)
		case c.AccountID == "":
			c.AccountID = s.EC2AccountID
			s.EC2Credentials[id] = c
		}
	}
	if s.EC2SignatureMaxSkew == 0 {
		s.EC2SignatureMaxSkew = Duration(15 * time.Minute)
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
