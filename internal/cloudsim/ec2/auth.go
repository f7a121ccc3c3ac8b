package ec2

import (
	"crypto/hmac"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// SigV4 is how EC2 authenticates Query requests ("Signature Version 4"
// in the AWS General Reference and the EC2 API reference, Query
// requests). The emulator checks header-signed requests, the form every
// SDK and the AWS CLI use; presigned query-string signatures are not
// emulated (edgeplane never sends them).
const sigV4Algorithm = "AWS4-HMAC-SHA256"

// amzDateFormat is X-Amz-Date's ISO 8601 basic format.
const amzDateFormat = "20060102T150405Z"

// sigV4Auth is a parsed Authorization header:
//
//	AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request,
//	SignedHeaders=content-type;host;x-amz-date, Signature=<64 hex>
type sigV4Auth struct {
	AccessKeyID   string
	Date          string
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
}

var (
	scopeDatePattern = regexp.MustCompile(`^\d{8}$`)
	sigPattern       = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// The EC2 error codes of a failed authentication, with the status EC2
// answers (EC2 API reference, Error codes, common client errors:
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html,
// and the common errors of the AWS APIs).
func missingAuth() *core.APIError {
	// MissingAuthenticationToken: "The request must contain either a
	// valid (registered) AWS access key ID or X.509 certificate."
	return core.Errf(http.StatusUnauthorized, core.EC2MissingAuthenticationToken, "The request must contain either a valid (registered) AWS access key ID or X.509 certificate.")
}

func incompleteSignature(format string, args ...any) *core.APIError {
	// IncompleteSignature: "The request signature does not conform to AWS
	// standards."
	return core.Errf(http.StatusBadRequest, core.EC2IncompleteSignature, format, args...)
}

func unknownKey() *core.APIError {
	// AuthFailure: "The provided credentials could not be validated." EC2
	// answers an access key ID it does not know this way (401), where
	// other AWS APIs say InvalidClientTokenId.
	return core.Errf(http.StatusUnauthorized, core.EC2AuthFailure, "AWS was not able to validate the provided access credentials")
}

func signatureMismatch(format string, args ...any) *core.APIError {
	// SignatureDoesNotMatch: "The request signature that Amazon EC2
	// calculated does not match the signature you provided" (403).
	return core.Errf(http.StatusForbidden, core.EC2SignatureDoesNotMatch, format, args...)
}

func requestExpired(format string, args ...any) *core.APIError {
	// RequestExpired: "The request reached the service more than 15
	// minutes after the date stamp on the request …, or the date stamp on
	// the request is more than 15 minutes in the future" (400).
	return core.Errf(http.StatusBadRequest, core.EC2RequestExpired, format, args...)
}

// parseSigV4 parses the Authorization header's syntax.
func parseSigV4(h string) (sigV4Auth, *core.APIError) {
	var a sigV4Auth
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || alg != sigV4Algorithm {
		return a, incompleteSignature("Unsupported authorization type; the emulator accepts %s only", sigV4Algorithm)
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, incompleteSignature("Authorization header element %q is not key=value", strings.TrimSpace(part))
		}
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 5 || f[0] == "" || !scopeDatePattern.MatchString(f[1]) || f[2] == "" || f[4] != "aws4_request" {
				return a, incompleteSignature("Credential %q must be <AccessKeyId>/<YYYYMMDD>/<region>/<service>/aws4_request", v)
			}
			a.AccessKeyID, a.Date, a.Region, a.Service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			a.SignedHeaders = strings.Split(v, ";")
		case "Signature":
			a.Signature = v
		}
	}
	switch {
	case a.AccessKeyID == "":
		return a, incompleteSignature("Authorization header requires 'Credential' parameter.")
	case len(a.SignedHeaders) == 0 || a.SignedHeaders[0] == "":
		return a, incompleteSignature("Authorization header requires 'SignedHeaders' parameter.")
	case a.Signature == "":
		return a, incompleteSignature("Authorization header requires 'Signature' parameter.")
	case !slices.Contains(a.SignedHeaders, "host"):
		return a, incompleteSignature("The host header must be signed.")
	}
	return a, nil
}

// authenticate checks a request's SigV4 signature against the emulator's
// credentials and returns the caller's account. The order follows EC2:
// the request must be signed at all, the access key must exist, the date
// must be within the skew window, then the signature must match.
func (h *Handler) authenticate(r *http.Request, body []byte) (string, *core.APIError) {
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return "", missingAuth()
	}
	a, apiErr := parseSigV4(authz)
	if apiErr != nil {
		return "", apiErr
	}
	cred, ok := h.world.EC2Credential(a.AccessKeyID)
	if !ok {
		return "", unknownKey()
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if amzDate == "" {
		return "", incompleteSignature("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	signed, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return "", incompleteSignature("X-Amz-Date %q is not in the format %s", amzDate, amzDateFormat)
	}
	if maxSkew := h.world.Settings().EC2SignatureMaxSkew.D(); maxSkew >= 0 {
		now := h.wallClock().UTC()
		if skew := now.Sub(signed); skew > maxSkew || skew < -maxSkew {
			return "", requestExpired("Request has expired: X-Amz-Date %s is %s away from the server time %s.", amzDate, skew.Round(time.Second), now.Format(amzDateFormat))
		}
	}
	if a.Date != signed.Format("20060102") {
		return "", signatureMismatch("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'", a.Date, signed.Format("20060102"))
	}
	if a.Service != "ec2" {
		return "", signatureMismatch("Credential should be scoped to correct service: 'ec2'.")
	}
	want := sigV4Signature(cred.SecretAccessKey, a, amzDate, canonicalRequest(r, a.SignedHeaders, body))
	if !sigPattern.MatchString(a.Signature) || !hmac.Equal([]byte(want), []byte(a.Signature)) {
		return "", signatureMismatch("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return cred.AccountID, nil
}

// canonicalRequest is SigV4's canonical form of an HTTP request: method,
// URI, sorted query, the signed headers as "name:value\n" lines, the
// signed header list and the payload hash.
func canonicalRequest(r *http.Request, signedHeaders []string, body []byte) string {
	var hdrs strings.Builder
	for _, name := range signedHeaders {
		hdrs.WriteString(name)
		hdrs.WriteByte(':')
		hdrs.WriteString(canonicalHeaderValue(r, name))
		hdrs.WriteByte('\n')
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = core.SHA256Hex(body)
	}
	return strings.Join([]string{
		r.Method,
		canonicalURI(r.URL),
		canonicalQuery(r.URL.RawQuery),
		hdrs.String(),
		strings.Join(signedHeaders, ";"),
		payload,
	}, "\n")
}

// canonicalHeaderValue joins a header's values with commas, trimmed and
// with runs of spaces collapsed; Go keeps Host out of r.Header.
func canonicalHeaderValue(r *http.Request, name string) string {
	var vals []string
	if name == "host" {
		vals = []string{r.Host}
	} else {
		vals = r.Header.Values(name)
	}
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

// canonicalURI encodes each path segment (services other than S3 encode
// the already-escaped path once more).
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = uriEncode(s)
	}
	return strings.Join(segs, "/")
}

// canonicalQuery sorts the query parameters by name, then value, each
// encoded as SigV4 requires.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k)+"="+uriEncode(v))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// uriEncode percent-encodes everything but RFC 3986's unreserved
// characters, in upper-case hex.
func uriEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// sigV4Signature derives the signing key from the secret and the scope
// and signs the string to sign.
func sigV4Signature(secret string, a sigV4Auth, amzDate, canonical string) string {
	scope := strings.Join([]string{a.Date, a.Region, a.Service, "aws4_request"}, "/")
	stringToSign := strings.Join([]string{sigV4Algorithm, amzDate, scope, core.SHA256Hex([]byte(canonical))}, "\n")
	k := core.HMACSHA256([]byte("AWS4"+secret), a.Date)
	k = core.HMACSHA256(k, a.Region)
	k = core.HMACSHA256(k, a.Service)
	k = core.HMACSHA256(k, "aws4_request")
	return hex.EncodeToString(core.HMACSHA256(k, stringToSign))
}
