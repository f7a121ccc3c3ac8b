package tencent

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Algorithm is the only signature algorithm the emulator accepts.
const Algorithm = "TC3-HMAC-SHA256"

// Authorization is a parsed TC3-HMAC-SHA256 Authorization header:
//
//	TC3-HMAC-SHA256 Credential=<SecretId>/<YYYY-MM-DD>/<service>/tc3_request,
//	SignedHeaders=content-type;host, Signature=<64 hex>
type Authorization struct {
	SecretID      string
	Date          string
	Service       string
	SignedHeaders []string
	Signature     string
}

var (
	datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	// The service is normally a product name (vpc, cvm, tag), but SDKs
	// derive it from the endpoint's first label, so with an endpoint
	// override it can be "127" or "localhost".
	servicePattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	headerPattern    = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
	signaturePattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseAuthorization parses and validates the header's syntax.
func ParseAuthorization(h string) (Authorization, error) {
	var a Authorization
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || alg != Algorithm {
		return a, fmt.Errorf("the algorithm must be %s", Algorithm)
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || seen[k] {
			return a, fmt.Errorf("malformed Authorization element %q", part)
		}
		seen[k] = true
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 4 || f[0] == "" || f[3] != "tc3_request" || !datePattern.MatchString(f[1]) || !servicePattern.MatchString(f[2]) {
				return a, fmt.Errorf("credential %q must be <SecretId>/<YYYY-MM-DD>/<service>/tc3_request", v)
			}
			a.SecretID, a.Date, a.Service = f[0], f[1], f[2]
		case "SignedHeaders":
			a.SignedHeaders = strings.Split(v, ";")
			for _, hd := range a.SignedHeaders {
				if !headerPattern.MatchString(hd) {
					return a, fmt.Errorf("signed header %q is not a lower-case header name", hd)
				}
			}
			if !slices.IsSorted(a.SignedHeaders) {
				return a, fmt.Errorf("SignedHeaders must be sorted")
			}
		case "Signature":
			if !signaturePattern.MatchString(v) {
				return a, fmt.Errorf("the signature must be 64 lower-case hex digits")
			}
			a.Signature = v
		default:
			return a, fmt.Errorf("unknown Authorization element %q", k)
		}
	}
	if a.SecretID == "" || a.SignedHeaders == nil || a.Signature == "" {
		return a, fmt.Errorf("the Authorization header needs Credential, SignedHeaders and Signature")
	}
	if !slices.Contains(a.SignedHeaders, "content-type") || !slices.Contains(a.SignedHeaders, "host") {
		return a, fmt.Errorf("SignedHeaders must include content-type and host")
	}
	return a, nil
}

// headerValue reads a request header the way the signer sees it. Host is
// passed in because Go moves it out of r.Header and because SDKs disagree
// about the port (see Request.Verify).
func headerValue(r *http.Request, name, host string) string {
	if name == "host" {
		return host
	}
	return strings.Join(r.Header.Values(name), ",")
}

// CanonicalRequest builds the TC3 canonical request for a POST: method, "/",
// an empty query, the signed headers as lower-case "name:value\n" lines, the
// signed header list and the payload hash. A request with
// X-TC-Content-SHA256: UNSIGNED-PAYLOAD signs the hash of that literal
// instead of the body, as the SDKs do. host is the value signed for the
// host header.
func CanonicalRequest(r *http.Request, signedHeaders []string, body []byte, host string) string {
	var hdrs strings.Builder
	for _, h := range signedHeaders {
		hdrs.WriteString(h)
		hdrs.WriteByte(':')
		hdrs.WriteString(strings.ToLower(strings.TrimSpace(headerValue(r, h, host))))
		hdrs.WriteByte('\n')
	}
	payload := body
	if r.Header.Get("X-TC-Content-SHA256") == "UNSIGNED-PAYLOAD" {
		payload = []byte("UNSIGNED-PAYLOAD")
	}
	return strings.Join([]string{
		r.Method,
		"/",
		r.URL.RawQuery,
		hdrs.String(),
		strings.Join(signedHeaders, ";"),
		core.SHA256Hex(payload),
	}, "\n")
}

// Signature computes the expected TC3 signature.
func Signature(secretKey string, a Authorization, timestamp string, canonicalRequest string) string {
	scope := a.Date + "/" + a.Service + "/tc3_request"
	stringToSign := Algorithm + "\n" + timestamp + "\n" + scope + "\n" + core.SHA256Hex([]byte(canonicalRequest))
	k := core.HMACSHA256([]byte("TC3"+secretKey), a.Date)
	k = core.HMACSHA256(k, a.Service)
	k = core.HMACSHA256(k, "tc3_request")
	return hex.EncodeToString(core.HMACSHA256(k, stringToSign))
}

// Sign returns an Authorization header for a request, for tests and tools
// that talk to the emulator without an SDK.
func Sign(r *http.Request, body []byte, secretID, secretKey, service string, timestamp time.Time) string {
	a := Authorization{
		SecretID: secretID, Date: timestamp.UTC().Format("2006-01-02"), Service: service,
		SignedHeaders: []string{"content-type", "host"},
	}
	ts := fmt.Sprint(timestamp.Unix())
	sig := Signature(secretKey, a, ts, CanonicalRequest(r, a.SignedHeaders, body, r.Host))
	return fmt.Sprintf("%s Credential=%s/%s/%s/tc3_request, SignedHeaders=content-type;host, Signature=%s", Algorithm, secretID, a.Date, service, sig)
}
