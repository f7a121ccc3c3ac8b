package aws

import (
	"errors"
	"net/http"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// ErrNotFound is returned by Client look-ups that found nothing (for
// example no ENI holds a pod IP). IsNotFound recognises it as well as EC2's
// NotFound codes.
var ErrNotFound = errors.New("not found")

// EC2 error codes the classifiers know (EC2 API reference, errors-overview).
const (
	CodeAddressLimitExceeded       = "AddressLimitExceeded"
	CodeInvalidAddressNotFound     = "InvalidAddress.NotFound"
	CodeInvalidAddressIDNotFound   = "InvalidAddressID.NotFound"
	CodeInvalidAllocationIDNF      = "InvalidAllocationID.NotFound"
	CodeInvalidAssociationIDNF     = "InvalidAssociationID.NotFound"
	CodeInvalidNetworkInterfaceNF  = "InvalidNetworkInterfaceID.NotFound"
	CodeInvalidInstanceIDNotFound  = "InvalidInstanceID.NotFound"
	CodeInvalidInstanceIDMalformed = "InvalidInstanceID.Malformed"
	// CodeInvalidInstanceID is AssociateAddress's answer for an instance
	// with more than one ENI ("There are multiple interfaces attached to
	// instance …").
	CodeInvalidInstanceID          = "InvalidInstanceID"
	CodeRequestLimitExceeded       = "RequestLimitExceeded"
	CodeResourceAlreadyAssociated  = "Resource.AlreadyAssociated"
	CodeInvalidIPAddressInUse      = "InvalidIPAddress.InUse"
	CodeAuthFailure                = "AuthFailure"
	CodeUnauthorizedOperation      = "UnauthorizedOperation"
	CodeSignatureDoesNotMatch      = "SignatureDoesNotMatch"
	CodeRequestExpired             = "RequestExpired"
	CodeMissingAuthenticationToken = "MissingAuthenticationToken"
	CodeIncompleteSignature        = "IncompleteSignature"
	CodeInvalidClientTokenID       = "InvalidClientTokenId"
	CodeOptInRequired              = "OptInRequired"
	CodeBlocked                    = "Blocked"
	CodeInvalidParameterValue      = "InvalidParameterValue"
	CodeInvalidParameterCombo      = "InvalidParameterCombination"
	CodeInvalidPublicIpv4PoolIDNF  = "InvalidPublicIpv4PoolID.NotFound"
	CodeDryRunOperation            = "DryRunOperation"
	CodeInsufficientAddressCapacit = "InsufficientAddressCapacity"
)

var notFoundCodes = map[string]bool{
	CodeInvalidAddressNotFound:    true,
	CodeInvalidAddressIDNotFound:  true,
	CodeInvalidAllocationIDNF:     true,
	CodeInvalidAssociationIDNF:    true,
	CodeInvalidNetworkInterfaceNF: true,
	CodeInvalidInstanceIDNotFound: true,
}

// ErrorCode returns the EC2 error code of err ("" if err is not an API
// error). The "Client." prefix some tools add is removed.
func ErrorCode(err error) string {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return ""
	}
	return strings.TrimPrefix(apiErr.ErrorCode(), "Client.")
}

// IsNotFound: the address, association, ENI or instance does not exist (or
// is not visible yet: EC2 is eventually consistent, so right after a create
// NotFound "does not mean the resource does not exist").
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || notFoundCodes[ErrorCode(err)]
}

// IgnoreNotFound returns nil for NotFound errors and err otherwise, for
// idempotent deletes.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IsThrottled: the request was rejected by EC2's request rate limiting.
func IsThrottled(err error) bool { return ErrorCode(err) == CodeRequestLimitExceeded }

// IsQuotaExceeded: the account reached its Elastic IP quota.
func IsQuotaExceeded(err error) bool { return ErrorCode(err) == CodeAddressLimitExceeded }

// IsAlreadyAssociated: the address is associated with another resource and
// reassociation was not allowed.
func IsAlreadyAssociated(err error) bool { return ErrorCode(err) == CodeResourceAlreadyAssociated }

// IsMultipleInterfaces: AssociateAddress by InstanceId was refused because
// the instance has several ENIs ("the instance must have exactly one
// attached network interface", EC2 API reference, AssociateAddress);
// associate with its primary ENI instead.
func IsMultipleInterfaces(err error) bool { return ErrorCode(err) == CodeInvalidInstanceID }

// IsInUse: the address is still associated and cannot be released.
func IsInUse(err error) bool { return ErrorCode(err) == CodeInvalidIPAddressInUse }

// authCodes are EC2's answers to a request whose credentials it does not
// accept: an unknown or revoked key (AuthFailure, InvalidClientTokenId), a
// wrong secret (SignatureDoesNotMatch), a clock off by more than 15
// minutes (RequestExpired), no or a malformed signature, an account that
// is blocked or not signed up, or IAM denying the action
// (UnauthorizedOperation). EC2 API reference, Error codes, common client
// errors.
var authCodes = map[string]bool{
	CodeAuthFailure:                true,
	CodeUnauthorizedOperation:      true,
	CodeSignatureDoesNotMatch:      true,
	CodeRequestExpired:             true,
	CodeMissingAuthenticationToken: true,
	CodeIncompleteSignature:        true,
	CodeInvalidClientTokenID:       true,
	CodeOptInRequired:              true,
	CodeBlocked:                    true,
}

// IsAuthError: the credentials were rejected or IAM denied the action.
// Retrying the same call will not help until the credentials change.
func IsAuthError(err error) bool { return authCodes[ErrorCode(err)] }

// IsCredentialsRejected: EC2 refused the credentials themselves (every call
// of the account fails alike), as opposed to IAM denying one action
// (UnauthorizedOperation).
func IsCredentialsRejected(err error) bool {
	c := ErrorCode(err)
	return authCodes[c] && c != CodeUnauthorizedOperation
}

// IsInvalidParameter: the request itself is wrong (a bad value or
// combination); retrying it unchanged will not help.
func IsInvalidParameter(err error) bool {
	c := ErrorCode(err)
	return c == CodeInvalidParameterValue || c == CodeInvalidParameterCombo || c == CodeInvalidPublicIpv4PoolIDNF ||
		c == CodeInvalidInstanceIDMalformed
}

// IsOutcomeUnknown: the call may or may not have taken effect — a timeout,
// a broken connection or a server error. For AllocateAddress the caller must
// look for the address by its creation tags before allocating again.
func IsOutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	if code := ErrorCode(err); code != "" {
		var re *awshttp.ResponseError
		return errors.As(err, &re) && re.HTTPStatusCode() >= http.StatusInternalServerError && code != CodeRequestLimitExceeded
	}
	switch cloud.TransportCode(err) {
	case cloud.CodeTimeout, cloud.CodeNetwork:
		return true
	}
	// A response that could not be read or parsed also leaves the outcome
	// unknown.
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() >= http.StatusInternalServerError
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
