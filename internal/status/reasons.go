package status

// Classifier maps one class of errors to a stable CamelCase reason.
type Classifier struct {
	// Reason is the condition reason for errors of this class, for example
	// "QuotaExceeded".
	Reason string
	// Matches reports whether an error belongs to the class; use the
	// cloud package's classifiers (IsQuotaExceeded, IsThrottled, ...).
	Matches func(error) bool
}

// ReasonFor returns the Reason of the first classifier that matches err, or
// fallback when none does (or err is nil). Condition reasons must not carry
// error text: the reason stays the same across retries, so alerts and
// `kubectl get` columns are stable and status is not rewritten every pass.
func ReasonFor(err error, fallback string, classifiers ...Classifier) string {
	if err == nil {
		return fallback
	}
	for _, c := range classifiers {
		if c.Matches != nil && c.Matches(err) {
			return c.Reason
		}
	}
	return fallback
}
