package tencent

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// API versions of the services the emulator speaks.
const (
	VersionVPC = "2017-03-12"
	VersionCVM = "2017-03-12"
	VersionTag = "2018-08-13"
)

// MaxBodyBytes bounds a request body (the real API's limit is larger; our
// requests are tiny).
const MaxBodyBytes = 1 << 20

// Request is a decoded request envelope: the common parameters from the
// X-TC-* headers, the parsed Authorization and the raw JSON body. Signature
// verification needs the secret key, so it is a separate step (Verify).
type Request struct {
	Action    string
	Version   string
	Region    string
	Timestamp int64
	Token     string
	Auth      Authorization
	Body      []byte
}

// DecodeRequest reads and checks the envelope of a Tencent Cloud API 3.0
// request. It is the front-end's parser entry point (and fuzz target); it
// never verifies the signature.
func DecodeRequest(r *http.Request) (*Request, *core.APIError) {
	if r.Method != http.MethodPost {
		return nil, tcErr(core.TCUnsupportedProtocol, "the emulator accepts POST with a JSON body only, not %s", r.Method)
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "application/json" {
		return nil, tcErr(core.TCUnsupportedProtocol, "Content-Type must be application/json")
	}
	req := &Request{
		Action:  r.Header.Get("X-TC-Action"),
		Version: r.Header.Get("X-TC-Version"),
		Region:  r.Header.Get("X-TC-Region"),
		Token:   r.Header.Get("X-TC-Token"),
	}
	if req.Action == "" {
		return nil, tcErr(core.TCMissingParameter, "the X-TC-Action header is missing")
	}
	if req.Version == "" {
		return nil, tcErr(core.TCMissingParameter, "the X-TC-Version header is missing")
	}
	ts := r.Header.Get("X-TC-Timestamp")
	if ts == "" {
		return nil, tcErr(core.TCMissingParameter, "the X-TC-Timestamp header is missing")
	}
	if req.Timestamp, err = strconv.ParseInt(ts, 10, 64); err != nil || req.Timestamp <= 0 {
		return nil, tcErr(core.TCInvalidParameter, "X-TC-Timestamp %q is not a Unix timestamp", ts)
	}
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return nil, tcErr(core.TCAuthFailureInvalidAuthz, "the Authorization header is missing")
	}
	if req.Auth, err = ParseAuthorization(authz); err != nil {
		return nil, tcErr(core.TCAuthFailureInvalidAuthz, "%v", err)
	}
	if want := time.Unix(req.Timestamp, 0).UTC().Format("2006-01-02"); req.Auth.Date != want {
		return nil, tcErr(core.TCAuthFailureSignatureFailure, "the credential scope date %s does not match X-TC-Timestamp (%s)", req.Auth.Date, want)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		return nil, tcErr(core.TCRequestSizeLimitExceeded, "the request body exceeds %d bytes", MaxBodyBytes)
	}
	req.Body = body
	return req, nil
}

// Verify checks the signature and the timestamp's freshness against now
// (maxSkew < 0 disables the freshness check).
func (req *Request) Verify(r *http.Request, secretKey string, now time.Time, maxSkew time.Duration) *core.APIError {
	if maxSkew >= 0 {
		skew := now.Sub(time.Unix(req.Timestamp, 0))
		if skew > maxSkew || skew < -maxSkew {
			return tcErr(core.TCAuthFailureSignatureExpire, "the signature expired: X-TC-Timestamp is %s away from the server time", skew.Round(time.Second))
		}
	}
	// The Go SDK signs the Host header as sent (host:port); the Node.js SDK
	// signs the URL's hostname without the port. On the real API the port
	// is always the default one, so both agree there; on the emulator's
	// port either form is accepted.
	hosts := []string{r.Host}
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		hosts = append(hosts, h)
	}
	ts := strconv.FormatInt(req.Timestamp, 10)
	for _, host := range hosts {
		want := Signature(secretKey, req.Auth, ts, CanonicalRequest(r, req.Auth.SignedHeaders, req.Body, host))
		if hmac.Equal([]byte(want), []byte(req.Auth.Signature)) {
			return nil
		}
	}
	return tcErr(core.TCAuthFailureSignatureFailure, "the provided credentials could not be validated; check your signature is correct")
}

// decodeParams decodes the JSON body into an action's parameter struct the
// way the real API treats input: unknown parameters are rejected by name,
// wrong types are invalid parameters. An empty body means no parameters.
func decodeParams(body []byte, v any) *core.APIError {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	// encoding/json matches field names case-insensitively; the API does
	// not ("TaskID" is an unknown parameter), so check names first.
	var raw any
	if err := json.Unmarshal(body, &raw); err == nil {
		if name, ok := unknownKey(raw, reflect.TypeOf(v)); !ok {
			return tcErr(core.TCUnknownParameter, "the parameter `%s` is not recognized", name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil {
		if dec.More() {
			return tcErr(core.TCInvalidParameter, "the request body holds more than one JSON value")
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return tcErr(core.TCInvalidParameter, "the parameter `%s` must be of type %s, not %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return tcErr(core.TCInvalidParameter, "the request body is not valid JSON: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return tcErr(core.TCUnknownParameter, "the parameter `%s` is not recognized", name)
	default:
		return tcErr(core.TCInvalidParameter, "decoding the request body: %v", err)
	}
}

// unknownKey walks a decoded JSON value alongside the Go type it will be
// decoded into and reports the first object key that is not exactly a
// field's JSON name (ok is false then). Type mismatches are left to the
// decoder.
func unknownKey(v any, t reflect.Type) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch val := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", true
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
		for _, k := range sortedKeys(val) {
			ft, ok := fields[k]
			if !ok {
				return k, false
			}
			if name, ok := unknownKey(val[k], ft); !ok {
				return k + "." + name, false
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return "", true
		}
		for i, e := range val {
			if name, ok := unknownKey(e, t.Elem()); !ok {
				return fmt.Sprintf("%d.%s", i, name), false
			}
		}
	}
	return "", true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func tcErr(code, format string, args ...any) *core.APIError {
	return &core.APIError{Code: code, Message: fmt.Sprintf(format, args...), HTTPStatus: http.StatusOK}
}
