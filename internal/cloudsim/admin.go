package cloudsim

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// The admin API (JSON in and out; request bodies may also be YAML):
//
//	GET    /admin/healthz            200 "ok"
//	GET    /admin/state              the whole state (core.Snapshot)
//	POST   /admin/reset              drop all state, faults and counters, then
//	                                 re-apply the start-up fixtures
//	                                 (?fixtures=false: start empty)
//	POST   /admin/fixtures           add fixtures (core.Fixtures); answers with
//	                                 the created IDs (core.FixtureResult)
//	POST   /admin/remove             take resources away as the cloud does when
//	                                 a node or pod goes (core.Removals)
//	GET    /admin/faults             active fault specs
//	PUT    /admin/faults             replace them ([]core.FaultSpec)
//	POST   /admin/faults             add one (core.FaultSpec)
//	DELETE /admin/faults             remove all
//	GET    /admin/settings           current settings (secrets left out)
//	PATCH  /admin/settings           merge a partial core.Settings
//	POST   /admin/clock/advance      {"by":"30s"}: only with a manual clock
//
// Errors are {"error": "..."} with a 4xx/5xx status.
//
// The admin API changes what the emulated cloud does, so it is a door of its
// own: every request must name a loopback host (or one of Options.AdminHosts)
// in its Host header, so a web page cannot reach it through a DNS name of its
// own (DNS rebinding); every request but GET /admin/healthz must carry
// "Authorization: Bearer <Options.AdminToken>" (no token configured: the
// admin API is off); a request with a body must say it is JSON or YAML
// (Content-Type application/json or application/yaml), which a browser
// cannot send across sites without a preflight the emulator never answers;
// bodies are capped at maxAdminBody.
type adminHandler struct {
	s     *Server
	mux   *http.ServeMux
	token string
	hosts map[string]bool
}

// maxAdminBody caps an admin request's body: the largest fixtures the
// chaos harness and the demo post are a few hundred KiB.
const maxAdminBody = 4 << 20

// AdminTokenEnv is the environment variable edgeplane-cloudsim reads its
// admin token from.
const AdminTokenEnv = "EDGEPLANE_CLOUDSIM_ADMIN_TOKEN"

// NewAdminRequest is an admin API request with the token and, for a body,
// its content type (JSON when it is valid JSON, else YAML).
func NewAdminRequest(ctx context.Context, method, url, token, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building the admin request %s %s: %w", method, url, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		typ := "application/yaml"
		if json.Valid([]byte(body)) {
			typ = "application/json"
		}
		req.Header.Set("Content-Type", typ)
	}
	return req, nil
}

func newAdminHandler(s *Server, token string, hosts []string) *adminHandler {
	h := &adminHandler{s: s, mux: http.NewServeMux(), token: token, hosts: map[string]bool{}}
	for _, host := range hosts {
		h.hosts[strings.ToLower(host)] = true
	}
	h.mux.HandleFunc("GET /admin/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(rw, "ok\n")
	})
	h.mux.HandleFunc("GET /admin/state", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, s.world.Snapshot())
	})
	h.mux.HandleFunc("POST /admin/reset", h.reset)
	h.mux.HandleFunc("POST /admin/fixtures", h.fixtures)
	h.mux.HandleFunc("POST /admin/remove", h.remove)
	h.mux.HandleFunc("GET /admin/faults", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, s.world.Faults())
	})
	h.mux.HandleFunc("PUT /admin/faults", h.putFaults)
	h.mux.HandleFunc("POST /admin/faults", h.addFault)
	h.mux.HandleFunc("DELETE /admin/faults", func(rw http.ResponseWriter, _ *http.Request) {
		_ = s.world.SetFaults(nil)
		writeJSON(rw, http.StatusOK, []core.FaultSpec{})
	})
	h.mux.HandleFunc("GET /admin/settings", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, s.world.Snapshot().Settings)
	})
	h.mux.HandleFunc("PATCH /admin/settings", h.patchSettings)
	h.mux.HandleFunc("POST /admin/clock/advance", h.advanceClock)
	return h
}

func (h *adminHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		writeAdminError(rw, http.StatusForbidden, fmt.Errorf("host %q is not this emulator's: the admin API answers loopback names and the hosts of --admin-host only", r.Host))
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/admin/healthz" {
		h.mux.ServeHTTP(rw, r)
		return
	}
	if h.token == "" {
		writeAdminError(rw, http.StatusForbidden, errors.New("the admin API is off: start the emulator with an admin token ("+AdminTokenEnv+" or --admin-token-file)"))
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.token)) != 1 {
		rw.Header().Set("WWW-Authenticate", `Bearer realm="edgeplane-cloudsim admin"`)
		writeAdminError(rw, http.StatusUnauthorized, errors.New("the admin API needs Authorization: Bearer <admin token>"))
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		if typ, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || (typ != "application/json" && typ != "application/yaml") {
			writeAdminError(rw, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %q: the admin API takes application/json or application/yaml", r.Header.Get("Content-Type")))
			return
		}
	}
	r.Body = http.MaxBytesReader(rw, r.Body, maxAdminBody)
	h.mux.ServeHTTP(rw, r)
}

// hostAllowed reports whether a request's Host names this emulator: a
// loopback name or address, or one of the configured hosts (with or
// without the port).
func (h *adminHandler) hostAllowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	if h.hosts[hostport] {
		return true
	}
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || h.hosts[host] {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeAdminError(rw http.ResponseWriter, status int, err error) {
	writeJSON(rw, status, map[string]string{"error": err.Error()})
}

// bodyErrorStatus is 413 for a body over the cap, else 400.
func bodyErrorStatus(err error) int {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// readBody decodes a JSON or YAML body into v, rejecting unknown fields so a
// typo in a fixture does not silently do nothing.
func readBody(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body) // capped by ServeHTTP
	if err != nil {
		return fmt.Errorf("reading body: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("decoding body: %w", err)
	}
	return nil
}

func (h *adminHandler) reset(rw http.ResponseWriter, r *http.Request) {
	keep := r.URL.Query().Get("fixtures") != "false"
	if err := h.s.world.Reset(keep); err != nil {
		writeAdminError(rw, http.StatusInternalServerError, err)
		return
	}
	h.s.log.Info("Reset emulator state", "keepFixtures", keep)
	writeJSON(rw, http.StatusOK, map[string]bool{"reset": true, "fixtures": keep})
}

func (h *adminHandler) fixtures(rw http.ResponseWriter, r *http.Request) {
	var f core.Fixtures
	if err := readBody(r, &f); err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	res, err := h.s.world.ApplyFixtures(&f)
	if err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	writeJSON(rw, http.StatusOK, res)
}

func (h *adminHandler) remove(rw http.ResponseWriter, r *http.Request) {
	var rm core.Removals
	if err := readBody(r, &rm); err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	if err := h.s.world.Remove(&rm); err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	h.s.log.Info("Removed resources", "ec2Instances", len(rm.EC2.Instances), "tencentInstances", len(rm.Tencent.Instances), "tencentPrivateIPs", len(rm.Tencent.PrivateIPs))
	writeJSON(rw, http.StatusOK, map[string]bool{"removed": true})
}

func (h *adminHandler) putFaults(rw http.ResponseWriter, r *http.Request) {
	var specs []core.FaultSpec
	if err := readBody(r, &specs); err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	if err := h.s.world.SetFaults(specs); err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	h.s.log.Info("Replaced fault specs", "count", len(specs))
	writeJSON(rw, http.StatusOK, h.s.world.Faults())
}

func (h *adminHandler) addFault(rw http.ResponseWriter, r *http.Request) {
	var spec core.FaultSpec
	if err := readBody(r, &spec); err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	if err := h.s.world.AddFault(spec); err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	h.s.log.Info("Added fault spec", "provider", spec.Provider, "action", spec.Action)
	writeJSON(rw, http.StatusOK, h.s.world.Faults())
}

func (h *adminHandler) patchSettings(rw http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body) // capped by ServeHTTP
	if err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		writeAdminError(rw, http.StatusBadRequest, fmt.Errorf("decoding body: %w", err))
		return
	}
	var decodeErr error
	err = h.s.world.UpdateSettings(func(s *core.Settings) {
		// Unmarshalling onto the current settings merges: fields absent from
		// the patch keep their values.
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		decodeErr = dec.Decode(s)
	})
	if decodeErr != nil {
		writeAdminError(rw, http.StatusBadRequest, fmt.Errorf("decoding settings: %w", decodeErr))
		return
	}
	if err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	writeJSON(rw, http.StatusOK, h.s.world.Snapshot().Settings)
}

func (h *adminHandler) advanceClock(rw http.ResponseWriter, r *http.Request) {
	mc, ok := h.s.world.Clock().(*core.ManualClock)
	if !ok {
		writeAdminError(rw, http.StatusConflict, errors.New("the emulator runs on the wall clock; start it with a manual clock (--manual-clock) to advance time"))
		return
	}
	var body struct {
		By core.Duration `json:"by"`
	}
	if err := readBody(r, &body); err != nil {
		writeAdminError(rw, bodyErrorStatus(err), err)
		return
	}
	if body.By <= 0 {
		writeAdminError(rw, http.StatusBadRequest, errors.New(`"by" must be a positive duration such as "30s"`))
		return
	}
	mc.Advance(time.Duration(body.By))
	writeJSON(rw, http.StatusOK, map[string]time.Time{"now": mc.Now()})
}
