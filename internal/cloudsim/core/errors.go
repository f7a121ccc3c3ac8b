package core

import (
	"fmt"
	"net/http"
)

// APIError is a cloud API error in protocol-neutral form. The front-ends
// render it in their own envelope: EC2 as <Response><Errors>… with HTTPStatus,
// Tencent Cloud as HTTP 200 with Response.Error (HTTPStatus is ignored there,
// as on the real API).
type APIError struct {
	Code       string
	Message    string
	HTTPStatus int
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errf builds an APIError.
func Errf(status int, code, format string, args ...any) *APIError {
	return &APIError{Code: code, Message: fmt.Sprintf(format, args...), HTTPStatus: status}
}

// badRequest is the common case of a 400 client error.
func badRequest(code, format string, args ...any) *APIError {
	return Errf(http.StatusBadRequest, code, format, args...)
}

// EC2 error codes used by the emulator (errors-overview page of the EC2 API
// reference).
const (
	EC2AddressLimitExceeded          = "AddressLimitExceeded"
	EC2InvalidAddressNotFound        = "InvalidAddress.NotFound"
	EC2InvalidAllocationIDNotFound   = "InvalidAllocationID.NotFound"
	EC2InvalidAssociationIDNotFound  = "InvalidAssociationID.NotFound"
	EC2InvalidNetworkInterfaceIDNF   = "InvalidNetworkInterfaceID.NotFound"
	EC2InvalidInstanceIDNotFound     = "InvalidInstanceID.NotFound"
	EC2InvalidInstanceIDMalformed    = "InvalidInstanceID.Malformed"
	EC2InvalidInstanceID             = "InvalidInstanceID"
	EC2InvalidIPAddressInUse         = "InvalidIPAddress.InUse"
	EC2ResourceAlreadyAssociated     = "Resource.AlreadyAssociated"
	EC2InvalidParameterValue         = "InvalidParameterValue"
	EC2InvalidParameterCombination   = "InvalidParameterCombination"
	EC2MissingParameter              = "MissingParameter"
	EC2UnknownParameter              = "UnknownParameter"
	EC2InvalidAction                 = "InvalidAction"
	EC2InvalidID                     = "InvalidID"
	EC2InvalidFilter                 = "InvalidFilter"
	EC2InvalidPaginationToken        = "InvalidPaginationToken"
	EC2InvalidPublicIpv4PoolNotFound = "InvalidPublicIpv4PoolID.NotFound"
	EC2TagLimitExceeded              = "TagLimitExceeded"
	EC2RequestLimitExceeded          = "RequestLimitExceeded"
	EC2DryRunOperation               = "DryRunOperation"
	EC2InsufficientAddressCapacity   = "InsufficientAddressCapacity"
	EC2InternalError                 = "InternalError"
	EC2AuthFailure                   = "AuthFailure"
	EC2SignatureDoesNotMatch         = "SignatureDoesNotMatch"
	EC2RequestExpired                = "RequestExpired"
	EC2MissingAuthenticationToken    = "MissingAuthenticationToken"
	EC2IncompleteSignature           = "IncompleteSignature"
	EC2UnauthorizedOperation         = "UnauthorizedOperation"
)

// Tencent Cloud error codes used by the emulator (API 3.0 common codes and the
// per-action lists in tencentcloud-sdk-go vpc/v20170312/client.go).
const (
	TCRequestLimitExceeded          = "RequestLimitExceeded"
	TCAddressQuotaLimitExceeded     = "AddressQuotaLimitExceeded"
	TCInvalidAddressIDNotFound      = "InvalidAddressId.NotFound"
	TCInvalidAddressState           = "InvalidAddressState"
	TCInvalidAddressIDStatus        = "InvalidAddressIdStatus.NotPermit"
	TCAddressStatusNotPermit        = "UnsupportedOperation.AddressStatusNotPermit"
	TCMutexTaskRunning              = "OperationDenied.MutexTaskRunning"
	TCUnauthorizedAnycastEip        = "UnauthorizedOperation.AnycastEip"
	TCInvalidInstanceIDNotFound     = "InvalidInstanceId.NotFound"
	TCInvalidInstanceAlreadyBindEip = "InvalidInstanceId.AlreadyBindEip"
	// AssociateAddress to a private IP of an ENI.
	TCInvalidPrivateIPAlreadyBindEip    = "InvalidPrivateIpAddress.AlreadyBindEip"
	TCInvalidNetworkInterfaceIDNotFound = "InvalidNetworkInterfaceId.NotFound"
	TCMissingAssociateEntity            = "InvalidParameterValue.MissingAssociateEntity"
	TCNetworkInterfaceIDNotMatch        = "InvalidParameterValue.NetworkInterfaceIdNotMatch"
	TCPrivateIPAddressNotMatch          = "InvalidParameterValue.PrivateIpAddressNotMatch"
	// DescribeNetworkInterfaces.
	TCResourceNotFound            = "ResourceNotFound"
	TCFilterInvalidKey            = "InvalidParameter.FilterInvalidKey"
	TCParameterMalformed          = "InvalidParameterValue.Malformed"
	TCAddressIDMalformed          = "InvalidParameterValue.AddressIdMalformed"
	TCInstanceIDMalformed         = "InvalidParameterValue.InstanceIdMalformed"
	TCInvalidParameter            = "InvalidParameter"
	TCInvalidParameterCoexist     = "InvalidParameter.Coexist"
	TCInvalidFilter               = "InvalidParameter.InvalidFilter"
	TCInvalidParameterValue       = "InvalidParameterValue"
	TCParameterValueLimitExceeded = "InvalidParameterValue.LimitExceeded"
	TCParameterValueRange         = "InvalidParameterValue.Range"
	TCBandwidthOutOfRange         = "InvalidParameterValue.BandwidthOutOfRange"
	TCInvalidTag                  = "InvalidParameterValue.InvalidTag"
	TCUnavailableZone             = "InvalidParameterValue.UnavailableZone"
	TCNumberOfFilters             = "LimitExceeded.NumberOfFilters"
	TCTagQuota                    = "LimitExceeded.TagQuota"
	TCMissingParameter            = "MissingParameter"
	TCUnknownParameter            = "UnknownParameter"
	TCInvalidAction               = "InvalidAction"
	TCNoSuchVersion               = "NoSuchVersion"
	TCUnsupportedProtocol         = "UnsupportedProtocol"
	TCRequestSizeLimitExceeded    = "RequestSizeLimitExceeded"
	TCResourceInsufficient        = "ResourceInsufficient"
	TCInternalError               = "InternalError"
	TCAuthFailureSignatureFailure = "AuthFailure.SignatureFailure"
	TCAuthFailureSignatureExpire  = "AuthFailure.SignatureExpire"
	TCAuthFailureSecretIDNotFound = "AuthFailure.SecretIdNotFound"
	TCAuthFailureInvalidAuthz     = "AuthFailure.InvalidAuthorization"
)
