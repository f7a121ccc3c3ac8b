package tencentcloud

import (
	"errors"
	"strings"

	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

var (
	// ErrNotFound is returned by Client look-ups that found nothing.
	// IsNotFound recognises it as well as Tencent's NotFound codes.
	ErrNotFound = errors.New("not found")
	// ErrTaskFailed is returned by WaitForTask when an async task ends
	// FAILED (its change was rolled back).
	ErrTaskFailed = errors.New("async task failed")
)

// Tencent Cloud error codes the classifiers know (API 3.0 common codes and
// tencentcloud-sdk-go vpc/v20170312 per-action lists).
const (
	CodeRequestLimitExceeded      = "RequestLimitExceeded"
	CodeAddressQuotaLimitExceeded = "AddressQuotaLimitExceeded"
	CodeInvalidAddressIDNotFound  = "InvalidAddressId.NotFound"
	CodeInvalidInstanceIDNotFound = "InvalidInstanceId.NotFound"
	CodeAddressNotFound           = "InvalidParameterValue.AddressNotFound"
	CodeResourceNotFound          = "ResourceNotFound"
	CodeInvalidAddressState       = "InvalidAddressState"
	CodeAddressStatusNotPermit    = "UnsupportedOperation.AddressStatusNotPermit"
	CodeAddressIDStatusNotPermit  = "InvalidAddressIdStatus.NotPermit"
	CodeMutexTaskRunning          = "OperationDenied.MutexTaskRunning"
	CodeUnauthorizedAnycastEip    = "UnauthorizedOperation.AnycastEip"
	CodeUnauthorizedOperation     = "UnauthorizedOperation"
	CodeInstanceAlreadyBindEip    = "InvalidInstanceId.AlreadyBindEip"
	CodePrivateIPAlreadyBindEip   = "InvalidPrivateIpAddress.AlreadyBindEip"
	// AssociateAddress to a private IP of an ENI and DescribeNetworkInterfaces
	// (descriptions in tencentcloud-sdk-go vpc/v20170312/errors.go).
	// CodeInvalidNetworkInterfaceIDNotFound: "the NetworkInterfaceId does
	// not exist, or the PrivateIpAddress is not on it";
	// CodeNetworkInterfaceNotFound says the same.
	CodeInvalidNetworkInterfaceIDNotFound = "InvalidNetworkInterfaceId.NotFound"
	CodeNetworkInterfaceNotFound          = "InvalidParameterValue.NetworkInterfaceNotFound"
	// The address is already bound to another ENI, another private IP, or
	// an instance other than the ENI's.
	CodeNetworkInterfaceIDNotMatch   = "InvalidParameterValue.NetworkInterfaceIdNotMatch"
	CodePrivateIPAddressNotMatch     = "InvalidParameterValue.PrivateIpAddressNotMatch"
	CodeInstanceNotMatchAssociateEni = "InvalidParameterValue.InstanceNotMatchAssociateEni"
	CodeMissingAssociateEntity       = "InvalidParameterValue.MissingAssociateEntity"
	CodeInvalidParameterConflict     = "InvalidParameterConflict"
	CodeTaskFailed                   = "FailedOperation.TaskFailed"
	CodeInternalError                = "InternalError"
	CodeServiceUnavailable           = "ServiceUnavailable"
	// SDK-side codes (not sent by the server).
	CodeClientNetworkError    = "ClientError.NetworkError"
	CodeClientHTTPStatusError = "ClientError.HttpStatusCodeError"
	CodeClientIOError         = "ClientError.IOError"
	CodeClientParseJSONError  = "ClientError.ParseJsonError"
)

// ErrorCode returns the Tencent error code of err ("" if err is not a
// *TencentCloudSDKError).
func ErrorCode(err error) string {
	var e *tcerr.TencentCloudSDKError
	if !errors.As(err, &e) {
		return ""
	}
	return e.GetCode()
}

func codeIs(err error, codes ...string) bool {
	c := ErrorCode(err)
	for _, want := range codes {
		if c == want || strings.HasPrefix(c, want+".") {
			return true
		}
	}
	return false
}

// IsNotFound: the address, instance or ENI does not exist (for an ENI
// target also: the private IP is no longer on that ENI; see
// IsNetworkInterfaceNotFound).
func IsNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	c := ErrorCode(err)
	return c == CodeInvalidAddressIDNotFound || c == CodeInvalidInstanceIDNotFound || c == CodeAddressNotFound || c == CodeResourceNotFound ||
		IsNetworkInterfaceNotFound(err)
}

// IsNetworkInterfaceNotFound: AssociateAddress's ENI target is gone: the
// ENI does not exist, or the private IP is not (any more) on it. Look the
// private IP up again (FindNetworkInterfaceByPrivateIP) before retrying.
func IsNetworkInterfaceNotFound(err error) bool {
	c := ErrorCode(err)
	return c == CodeInvalidNetworkInterfaceIDNotFound || c == CodeNetworkInterfaceNotFound
}

// IsBoundElsewhere: the address is already bound to another ENI, private
// IP or instance than the one asked for; it must be unbound first.
func IsBoundElsewhere(err error) bool {
	c := ErrorCode(err)
	return c == CodeNetworkInterfaceIDNotMatch || c == CodePrivateIPAddressNotMatch || c == CodeInstanceNotMatchAssociateEni
}

// IgnoreNotFound returns nil for NotFound errors and err otherwise.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IsThrottled: RequestLimitExceeded and its sub-codes
// (RequestLimitExceeded.UinLimitExceeded, …).
func IsThrottled(err error) bool { return codeIs(err, CodeRequestLimitExceeded) }

// IsQuotaExceeded: the EIP quota (AddressQuotaLimitExceeded and
// AddressQuotaLimitExceeded.DailyAllocate).
func IsQuotaExceeded(err error) bool {
	return codeIs(err, CodeAddressQuotaLimitExceeded) || ErrorCode(err) == "LimitExceeded.AddressQuotaLimitExceeded"
}

// IsTaskRunning: another async task on the address is still running
// (OperationDenied.MutexTaskRunning); try again once it finished.
func IsTaskRunning(err error) bool { return ErrorCode(err) == CodeMutexTaskRunning }

// IsInvalidState: the address is not in a state that allows the operation
// (binding a bound address, releasing a bound one, unbinding an unbound
// one).
func IsInvalidState(err error) bool {
	c := ErrorCode(err)
	return c == CodeInvalidAddressState || c == CodeAddressStatusNotPermit || c == CodeAddressIDStatusNotPermit
}

// IsAlreadyBound: the instance or private IP already has an EIP.
func IsAlreadyBound(err error) bool {
	c := ErrorCode(err)
	return c == CodeInstanceAlreadyBindEip || c == CodePrivateIPAlreadyBindEip
}

// IsAnycastNotAllowed: the account is not allow-listed for AnycastEIP (or
// for the requested AnycastZone).
func IsAnycastNotAllowed(err error) bool { return ErrorCode(err) == CodeUnauthorizedAnycastEip }

// IsAuthError: signature, key or permission failures (AuthFailure.*,
// UnauthorizedOperation). Retrying will not help.
func IsAuthError(err error) bool {
	c := ErrorCode(err)
	return c == "AuthFailure" || strings.HasPrefix(c, "AuthFailure.") || c == CodeUnauthorizedOperation
}

// IsCredentialsRejected: Tencent Cloud refused the credentials themselves
// (AuthFailure.*: unknown SecretId, bad signature, expired signature or
// token), so every call of the account fails alike; UnauthorizedOperation
// (CAM denying one action) is not included.
func IsCredentialsRejected(err error) bool {
	c := ErrorCode(err)
	return c == "AuthFailure" || strings.HasPrefix(c, "AuthFailure.")
}

// IsInvalidParameter: the request itself is wrong.
func IsInvalidParameter(err error) bool {
	return codeIs(err, "InvalidParameter", "InvalidParameterValue", "MissingParameter", "UnknownParameter", "InvalidParameterConflict")
}

// IsTaskFailed: an async task ended FAILED.
func IsTaskFailed(err error) bool {
	return errors.Is(err, ErrTaskFailed) || ErrorCode(err) == CodeTaskFailed
}

// IsOutcomeUnknown: the call may or may not have taken effect (a network
// failure or timeout, a server error, an unreadable response). An
// AllocateAddresses retried with the same ClientToken is safe either way.
func IsOutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	switch c := ErrorCode(err); {
	case c == "":
		t := cloud.TransportCode(err)
		return t == cloud.CodeTimeout || t == cloud.CodeNetwork
	case c == CodeClientNetworkError, c == CodeClientHTTPStatusError, c == CodeClientIOError, c == CodeClientParseJSONError:
		return true
	default:
		return codeIs(err, CodeInternalError, CodeServiceUnavailable, "InternalServerError")
	}
}

// resultCode is the metric label for err.
func resultCode(err error) string {
	if err == nil {
		return cloud.CodeOK
	}
	if c := ErrorCode(err); c != "" {
		return c
	}
	return cloud.TransportCode(err)
}
