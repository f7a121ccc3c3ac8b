package cniipam

import (
	"fmt"

	"github.com/containernetworking/cni/pkg/types"
)

// Reason is a stable CamelCase cause of a refusal: the CNI error's message
// starts with it and the pod's Event carries it.
type Reason string

// Refusals, each with its CNI error code (docs/floatippool.md lists them).
const (
	ReasonInvalidArgs           Reason = "InvalidArgs"
	ReasonInvalidConfig         Reason = "InvalidNetworkConfig"
	ReasonAllocationPending     Reason = "FloatIPNotAllocated"
	ReasonPodNotFound           Reason = "PodNotFound"
	ReasonPodUIDMismatch        Reason = "PodUIDMismatch"
	ReasonNoFloatIP             Reason = "NoFloatIP"
	ReasonNoFloatIPForInterface Reason = "NoFloatIPForInterface"
	ReasonIPOutsidePool         Reason = "IPOutsidePool"
	ReasonIPHeldByOtherPod      Reason = "IPHeldByOtherPod"
	ReasonIPNotAllocatedToPod   Reason = "IPNotAllocatedToPod"
	ReasonAPIUnavailable        Reason = "APIServerUnavailable"
	ReasonAddressMismatch       Reason = "AddressMismatch"
	ReasonNotAvailable          Reason = "PluginNotAvailable"

	// ReasonAssigned is the Normal Event of a successful ADD.
	ReasonAssigned Reason = "FloatIPAssigned"
)

// Plugin-specific CNI error codes (100 and up; below 100 the spec's own).
const (
	CodePodNotFound           uint = 100
	CodePodUIDMismatch        uint = 101
	CodeNoFloatIP             uint = 102
	CodeNoFloatIPForInterface uint = 103
	CodeIPOutsidePool         uint = 104
	CodeIPHeldByOtherPod      uint = 105
	CodeAPIUnavailable        uint = 106
	CodeAddressMismatch       uint = 107
	CodeIPNotAllocatedToPod   uint = 108
)

var codes = map[Reason]uint{
	ReasonInvalidArgs:           types.ErrInvalidEnvironmentVariables,
	ReasonInvalidConfig:         types.ErrInvalidNetworkConfig,
	ReasonAllocationPending:     types.ErrTryAgainLater,
	ReasonPodNotFound:           CodePodNotFound,
	ReasonPodUIDMismatch:        CodePodUIDMismatch,
	ReasonNoFloatIP:             CodeNoFloatIP,
	ReasonNoFloatIPForInterface: CodeNoFloatIPForInterface,
	ReasonIPOutsidePool:         CodeIPOutsidePool,
	ReasonIPHeldByOtherPod:      CodeIPHeldByOtherPod,
	ReasonAPIUnavailable:        CodeAPIUnavailable,
	ReasonAddressMismatch:       CodeAddressMismatch,
	ReasonIPNotAllocatedToPod:   CodeIPNotAllocatedToPod,
	ReasonNotAvailable:          types.ErrPluginNotAvailable,
}

// Code is the CNI error code of a reason.
func (r Reason) Code() uint { return codes[r] }

// Refusal is why a pod's interface gets no address.
type Refusal struct {
	Reason Reason
	// Message names the pod and says what is wrong.
	Message string
}

func (r *Refusal) Error() string { return string(r.Reason) + ": " + r.Message }

// CNIError is the refusal as the CNI error the runtime logs.
func (r *Refusal) CNIError() *types.Error {
	return types.NewError(r.Reason.Code(), r.Error(), "")
}

func refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}
