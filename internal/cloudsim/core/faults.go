package core

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// FaultSpec injects failures into requests for one provider and action. It
// is set at run time (admin API or World.SetFaults) and evaluated with the
// world's seeded random source, so a fixed seed and a fixed request order
// give the same faults every run.
type FaultSpec struct {
	// Provider is "ec2" or "tencent"; empty matches both.
	Provider string `json:"provider,omitempty"`
	// Action is the API action name ("AllocateAddress"); empty or "*" matches
	// every action of the provider.
	Action string `json:"action,omitempty"`

	// ErrorRate is the probability (0..1) that a request fails with ErrorCode
	// before anything is changed.
	ErrorRate float64 `json:"errorRate,omitempty"`
	// ErrorCode defaults to InternalError.
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// ErrorHTTPStatus is used by EC2 only (Tencent always answers 200);
	// it defaults to a status derived from the code.
	ErrorHTTPStatus int `json:"errorHTTPStatus,omitempty"`

	// Latency is added (wall clock) before the request is processed.
	Latency Duration `json:"latency,omitempty"`

	// DropRate is the probability (0..1) of commit-then-drop: the request is
	// applied, then the response is withheld and the connection is closed,
	// so the client sees a timeout although the change happened.
	DropRate float64 `json:"dropRate,omitempty"`
	// DropHold is how long a dropped response is held before the connection
	// is closed. Zero holds it until the client gives up (at most
	// MaxDropHold), which is what makes the client see a timeout.
	DropHold Duration `json:"dropHold,omitempty"`

	// VisibilityDelay is an eventual-consistency window: addresses created by
	// a matching allocation are invisible to Describe calls for this long.
	VisibilityDelay Duration `json:"visibilityDelay,omitempty"`

	// TaskFailureRate is the probability (0..1) that the async task started
	// by a matching Tencent request ends FAILED (its change is rolled back).
	TaskFailureRate float64 `json:"taskFailureRate,omitempty"`

	// Times limits the spec to the next N matching requests; 0 means no
	// limit. The spec is removed once used up.
	Times int `json:"times,omitempty"`
}

// MaxDropHold caps how long a dropped response is held when DropHold is 0.
const MaxDropHold = 2 * time.Minute

// Validate checks ranges and names.
func (f *FaultSpec) Validate() error {
	switch f.Provider {
	case "", ProviderEC2, ProviderTencent:
	default:
		return fmt.Errorf("fault provider %q: must be %q, %q or empty", f.Provider, ProviderEC2, ProviderTencent)
	}
	for name, p := range map[string]float64{"errorRate": f.ErrorRate, "dropRate": f.DropRate, "taskFailureRate": f.TaskFailureRate} {
		if p < 0 || p > 1 {
			return fmt.Errorf("fault %s %v: must be within [0,1]", name, p)
		}
	}
	if f.Latency < 0 || f.DropHold < 0 || f.VisibilityDelay < 0 || f.Times < 0 {
		return fmt.Errorf("fault durations and times must not be negative")
	}
	if strings.ContainsAny(f.Action, " /") {
		return fmt.Errorf("fault action %q: must be an action name", f.Action)
	}
	return nil
}

func (f *FaultSpec) matches(provider, action string) bool {
	return (f.Provider == "" || f.Provider == provider) &&
		(f.Action == "" || f.Action == "*" || f.Action == action)
}

// specificity orders matching specs: an exact provider+action spec wins over
// a wildcard one.
func (f *FaultSpec) specificity() int {
	n := 0
	if f.Provider != "" {
		n++
	}
	if f.Action != "" && f.Action != "*" {
		n += 2
	}
	return n
}

// Decision is what the fault injector decided for one request.
type Decision struct {
	Latency         time.Duration
	Err             *APIError
	Drop            bool
	DropHold        time.Duration
	VisibilityDelay time.Duration
	TaskFail        bool
}

// decide evaluates the most specific matching fault spec. Called with w.mu
// held.
func (w *World) decide(provider, action string) Decision {
	idx := -1
	for i, f := range w.faults {
		if f.matches(provider, action) && (idx < 0 || f.specificity() > w.faults[idx].specificity()) {
			idx = i
		}
	}
	if idx < 0 {
		return Decision{}
	}
	f := w.faults[idx]
	d := Decision{Latency: f.Latency.D(), VisibilityDelay: f.VisibilityDelay.D(), DropHold: f.DropHold.D()}
	// Draw every random number unconditionally so one spec's decisions do
	// not shift the sequence seen by the next request.
	errDraw, dropDraw, taskDraw := w.rng.Float64(), w.rng.Float64(), w.rng.Float64()
	if errDraw < f.ErrorRate {
		code := f.ErrorCode
		if code == "" {
			code = "InternalError"
		}
		msg := f.ErrorMessage
		if msg == "" {
			msg = "injected fault"
		}
		status := f.ErrorHTTPStatus
		if status == 0 {
			status = statusForCode(code)
		}
		d.Err = &APIError{Code: code, Message: msg, HTTPStatus: status}
	}
	d.Drop = d.Err == nil && dropDraw < f.DropRate
	d.TaskFail = taskDraw < f.TaskFailureRate
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			w.faults = append(w.faults[:idx], w.faults[idx+1:]...)
		}
	}
	return d
}

// statusForCode maps an error code to the HTTP status EC2 would use.
func statusForCode(code string) int {
	switch {
	case code == EC2RequestLimitExceeded, code == "ServiceUnavailable", code == "Unavailable":
		return http.StatusServiceUnavailable
	case code == EC2InternalError, code == "InternalFailure", strings.HasPrefix(code, "Internal"):
		return http.StatusInternalServerError
	case code == EC2AuthFailure:
		return http.StatusUnauthorized
	case code == EC2UnauthorizedOperation:
		return http.StatusForbidden
	default:
		return http.StatusBadRequest
	}
}

// SetFaults replaces all fault specs.
func (w *World) SetFaults(specs []FaultSpec) error {
	for i := range specs {
		if err := specs[i].Validate(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = w.faults[:0]
	for i := range specs {
		f := specs[i]
		w.faults = append(w.faults, &f)
	}
	return nil
}

// AddFault appends one fault spec.
func (w *World) AddFault(spec FaultSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, &spec)
	return nil
}

// Faults returns a copy of the active fault specs.
func (w *World) Faults() []FaultSpec {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.faultsLocked()
}

func (w *World) faultsLocked() []FaultSpec {
	out := make([]FaultSpec, 0, len(w.faults))
	for _, f := range w.faults {
		out = append(out, *f)
	}
	return out
}
