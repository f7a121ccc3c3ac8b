package cloudsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
type adminHandler struct {
	s   *Server
	mux *http.ServeMux
}

const maxAdminBody = 8 << 20

func newAdminHandler(s *Server) *adminHandler {
	h := &adminHandler{s: s, mux: http.NewServeMux()}
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
	h.mux.ServeHTTP(rw, r)
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

// readBody decodes a JSON or YAML body into v, rejecting unknown fields so a
// typo in a fixture does not silently do nothing.
func readBody(r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAdminBody))
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
		writeAdminError(rw, http.StatusBadRequest, err)
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
		writeAdminError(rw, http.StatusBadRequest, err)
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
		writeAdminError(rw, http.StatusBadRequest, err)
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
		writeAdminError(rw, http.StatusBadRequest, err)
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
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAdminBody))
	if err != nil {
		writeAdminError(rw, http.StatusBadRequest, err)
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
		writeAdminError(rw, http.StatusBadRequest, err)
		return
	}
	if body.By <= 0 {
		writeAdminError(rw, http.StatusBadRequest, errors.New(`"by" must be a positive duration such as "30s"`))
		return
	}
	mc.Advance(time.Duration(body.By))
	writeJSON(rw, http.StatusOK, map[string]time.Time{"now": mc.Now()})
}
