// Package tencent is the emulator's Tencent Cloud API 3.0 front-end: JSON
// POST routed by X-TC-Action / X-TC-Version / X-TC-Region, TC3-HMAC-SHA256
// signatures verified against the configured keys, answers as
// {"Response":{…,"RequestId"}} and errors as HTTP 200 with Response.Error,
// like the real API. State and behaviour live in internal/cloudsim/core.
package tencent

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Handler serves the Tencent Cloud API subset edgeplane uses.
type Handler struct {
	world *core.World
	log   *slog.Logger
	// wallClock is used for signature freshness: clients sign with their
	// wall clock even when the emulator runs on a manual clock.
	wallClock func() time.Time
}

// NewHandler returns the Tencent front-end for w. wallClock (nil:
// time.Now) is what X-TC-Timestamp is checked against.
func NewHandler(w *core.World, log *slog.Logger, wallClock func() time.Time) *Handler {
	if log == nil {
		log = slog.Default()
	}
	if wallClock == nil {
		wallClock = time.Now
	}
	return &Handler{world: w, log: log, wallClock: wallClock}
}

type call struct {
	req *Request
	adm core.Admission
}

type action struct {
	service  string
	version  string
	needsRgn bool
	run      func(h *Handler, c *call) (any, *core.APIError)
}

var actions = map[string]action{
	"AllocateAddresses":         {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).allocateAddresses},
	"AssociateAddress":          {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).associateAddress},
	"DisassociateAddress":       {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).disassociateAddress},
	"ReleaseAddresses":          {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).releaseAddresses},
	"DescribeAddresses":         {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).describeAddresses},
	"DescribeTaskResult":        {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).describeTaskResult},
	"DescribeNetworkInterfaces": {service: "vpc", version: VersionVPC, needsRgn: true, run: (*Handler).describeNetworkInterfaces},
	"DescribeInstances":         {service: "cvm", version: VersionCVM, needsRgn: true, run: (*Handler).describeInstances},
	"DescribeResourcesByTags":   {service: "tag", version: VersionTag, run: (*Handler).describeResourcesByTags},
	"ModifyResourceTags":        {service: "tag", version: VersionTag, run: (*Handler).modifyResourceTags},
}

var knownServices = map[string]bool{"vpc": true, "cvm": true, "tag": true}

// Actions lists the supported actions.
func Actions() []string {
	out := make([]string, 0, len(actions))
	for a := range actions {
		out = append(out, a)
	}
	return out
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	traceResponse(rw, r)
	req, apiErr := DecodeRequest(r)
	if apiErr != nil {
		h.writeError(rw, r.Header.Get("X-TC-Action"), h.world.RequestID(), apiErr)
		return
	}
	key, ok := h.world.TencentSecretKey(req.Auth.SecretID)
	if !ok {
		h.writeError(rw, req.Action, h.world.RequestID(), tcErr(core.TCAuthFailureSecretIDNotFound, "the SecretId is not found; check that it is correct"))
		return
	}
	if apiErr := req.Verify(r, key, h.wallClock(), h.world.Settings().TencentSignatureMaxSkew.D()); apiErr != nil {
		h.writeError(rw, req.Action, h.world.RequestID(), apiErr)
		return
	}
	// With an endpoint override every service shares one host, so the
	// service a request was meant for is the one in its credential scope:
	// emulate "<service>.tencentcloudapi.com" answering it. SDKs that take
	// the service from the endpoint's first label (the Node.js SDK) put
	// "127" or "localhost" there; such requests are routed by action.
	act, ok := actions[req.Action]
	switch {
	case !ok || (knownServices[req.Auth.Service] && act.service != req.Auth.Service):
		h.writeError(rw, req.Action, h.world.RequestID(), tcErr(core.TCInvalidAction, "the action %s does not exist in service %s (or is not emulated)", req.Action, req.Auth.Service))
		return
	case req.Version != act.version:
		h.writeError(rw, req.Action, h.world.RequestID(), tcErr(core.TCNoSuchVersion, "the version %s of service %s does not exist; use %s", req.Version, act.service, act.version))
		return
	case act.needsRgn && req.Region == "":
		h.writeError(rw, req.Action, h.world.RequestID(), tcErr(core.TCMissingParameter, "the X-TC-Region header is missing"))
		return
	}

	adm, apiErr := h.world.Admit(core.ProviderTencent, req.Action, "")
	if apiErr != nil {
		h.writeError(rw, req.Action, adm.RequestID, apiErr)
		return
	}
	core.Sleep(r.Context(), adm.Latency)
	out, apiErr := act.run(h, &call{req: req, adm: adm})
	if apiErr != nil {
		h.writeError(rw, req.Action, adm.RequestID, apiErr)
		return
	}
	body, err := marshalResponse(out, adm.RequestID)
	if err != nil {
		h.writeError(rw, req.Action, adm.RequestID, tcErr(core.TCInternalError, "encoding the response: %v", err))
		return
	}
	h.world.Record(core.ProviderTencent, req.Action, "")
	if adm.Drop {
		h.log.Info("Dropped Tencent response after commit", "action", req.Action, "requestID", adm.RequestID)
		core.HoldAndDrop(r.Context(), adm.DropHold)
	}
	writeBody(rw, body)
}

// traceResponse echoes the client's X-TC-TraceId, as the real API does.
func traceResponse(rw http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("X-TC-TraceId"); id != "" {
		rw.Header().Set("X-TC-TraceId", id)
	}
}

// marshalResponse wraps an action's output as {"Response": {…, "RequestId"}}.
func marshalResponse(out any, requestID string) ([]byte, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	rid, _ := json.Marshal(requestID)
	fields["RequestId"] = rid
	return json.Marshal(map[string]any{"Response": fields})
}

func writeBody(rw http.ResponseWriter, body []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(body)
}

type errorBody struct {
	Response struct {
		Error struct {
			Code    string `json:"Code"`
			Message string `json:"Message"`
		} `json:"Error"`
		RequestID string `json:"RequestId"`
	} `json:"Response"`
}

// writeError answers with the API 3.0 error envelope, always HTTP 200: the
// SDKs treat any other status as a transport failure.
func (h *Handler) writeError(rw http.ResponseWriter, action, requestID string, e *core.APIError) {
	if action != "" {
		h.world.Record(core.ProviderTencent, action, e.Code)
	}
	var b errorBody
	b.Response.Error.Code = e.Code
	b.Response.Error.Message = e.Message
	b.Response.RequestID = requestID
	body, _ := json.Marshal(b)
	writeBody(rw, body)
}

func (h *Handler) allocateAddresses(c *call) (any, *core.APIError) {
	var p allocateAddressesParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	ids, task, err := h.world.TCAllocateAddresses(core.TCAllocateInput{
		AddressCount:            p.AddressCount,
		AddressType:             str(p.AddressType),
		AnycastZone:             str(p.AnycastZone),
		InternetChargeType:      str(p.InternetChargeType),
		InternetServiceProvider: str(p.InternetServiceProvider),
		InternetMaxBandwidthOut: p.InternetMaxBandwidthOut,
		AddressName:             str(p.AddressName),
		Tags:                    tags(p.Tags),
		ClientToken:             str(p.ClientToken),
		VisibilityDelay:         c.adm.VisibilityDelay,
		TaskFail:                c.adm.TaskFail,
	})
	if err != nil {
		return nil, err
	}
	return struct {
		AddressSet []string `json:"AddressSet"`
		TaskID     string   `json:"TaskId"`
	}{ids, strconv.FormatUint(task, 10)}, nil
}

// taskResponse is the answer of the async actions: TaskId as a string.
type taskResponse struct {
	TaskID string `json:"TaskId"`
}

func (h *Handler) associateAddress(c *call) (any, *core.APIError) {
	var p associateAddressParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	task, err := h.world.TCAssociateAddress(core.TCAssociateInput{
		AddressID:          str(p.AddressID),
		InstanceID:         str(p.InstanceID),
		NetworkInterfaceID: str(p.NetworkInterfaceID),
		PrivateIPAddress:   str(p.PrivateIPAddress),
		TaskFail:           c.adm.TaskFail,
	})
	if err != nil {
		return nil, err
	}
	return taskResponse{TaskID: strconv.FormatUint(task, 10)}, nil
}

func (h *Handler) disassociateAddress(c *call) (any, *core.APIError) {
	var p disassociateAddressParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	task, err := h.world.TCDisassociateAddress(str(p.AddressID), c.adm.TaskFail)
	if err != nil {
		return nil, err
	}
	return taskResponse{TaskID: strconv.FormatUint(task, 10)}, nil
}

func (h *Handler) releaseAddresses(c *call) (any, *core.APIError) {
	var p releaseAddressesParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	task, err := h.world.TCReleaseAddresses(p.AddressIDs, c.adm.TaskFail)
	if err != nil {
		return nil, err
	}
	return taskResponse{TaskID: strconv.FormatUint(task, 10)}, nil
}

func (h *Handler) describeAddresses(c *call) (any, *core.APIError) {
	var p describeAddressesParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	fs, err := filters(p.Filters)
	if err != nil {
		return nil, err
	}
	addrs, total, err := h.world.TCDescribeAddresses(core.TCDescribeAddressesInput{
		AddressIDs: p.AddressIDs, Filters: fs, Offset: p.Offset, Limit: p.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		TotalCount int           `json:"TotalCount"`
		AddressSet []respAddress `json:"AddressSet"`
	}{TotalCount: total, AddressSet: []respAddress{}}
	for _, a := range addrs {
		out.AddressSet = append(out.AddressSet, addressJSON(a))
	}
	return out, nil
}

func (h *Handler) describeNetworkInterfaces(c *call) (any, *core.APIError) {
	var p describeNetworkInterfacesParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	fs := make([]core.Filter, 0, len(p.Filters))
	for _, f := range p.Filters {
		if f.Name == nil || *f.Name == "" {
			return nil, tcErr(core.TCFilterInvalidKey, "Filters.Name must not be empty")
		}
		fs = append(fs, core.Filter{Name: *f.Name, Values: f.Values})
	}
	enis, total, err := h.world.TCDescribeNetworkInterfaces(core.TCDescribeNetworkInterfacesInput{
		NetworkInterfaceIDs: p.NetworkInterfaceIDs, Filters: fs, Offset: p.Offset, Limit: p.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		NetworkInterfaceSet []respNetworkInterface `json:"NetworkInterfaceSet"`
		TotalCount          int                    `json:"TotalCount"`
	}{NetworkInterfaceSet: []respNetworkInterface{}, TotalCount: total}
	for _, e := range enis {
		out.NetworkInterfaceSet = append(out.NetworkInterfaceSet, networkInterfaceJSON(e))
	}
	return out, nil
}

func (h *Handler) describeTaskResult(c *call) (any, *core.APIError) {
	var p describeTaskResultParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	id, result, err := h.world.TCDescribeTaskResult(p.TaskID, str(p.DealName))
	if err != nil {
		return nil, err
	}
	return struct {
		TaskID uint64 `json:"TaskId"`
		Result string `json:"Result"`
	}{id, result}, nil
}

func (h *Handler) describeInstances(c *call) (any, *core.APIError) {
	var p describeInstancesParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	fs, err := filters(p.Filters)
	if err != nil {
		return nil, err
	}
	insts, total, err := h.world.TCDescribeInstances(core.TCDescribeInstancesInput{
		InstanceIDs: p.InstanceIDs, Filters: fs, Offset: p.Offset, Limit: p.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		TotalCount  int            `json:"TotalCount"`
		InstanceSet []respInstance `json:"InstanceSet"`
	}{TotalCount: total, InstanceSet: []respInstance{}}
	for _, in := range insts {
		out.InstanceSet = append(out.InstanceSet, instanceJSON(in))
	}
	return out, nil
}

func (h *Handler) describeResourcesByTags(c *call) (any, *core.APIError) {
	var p describeResourcesByTagsParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	var tf []core.TCTagFilter
	for _, f := range p.TagFilters {
		tf = append(tf, core.TCTagFilter{Key: str(f.TagKey), Values: f.TagValue})
	}
	rows, total, err := h.world.TCDescribeResourcesByTags(core.TCDescribeResourcesByTagsInput{
		TagFilters: tf, ResourcePrefix: str(p.ResourcePrefix), ResourceID: str(p.ResourceID),
		ResourceRegion: str(p.ResourceRegion), ServiceType: str(p.ServiceType),
		Offset: p.Offset, Limit: p.Limit, Region: c.req.Region,
	})
	if err != nil {
		return nil, err
	}
	offset, limit := uint64(0), uint64(15)
	if p.Offset != nil {
		offset = *p.Offset
	}
	if p.Limit != nil && *p.Limit > 0 {
		limit = *p.Limit
	}
	out := struct {
		TotalCount int               `json:"TotalCount"`
		Offset     uint64            `json:"Offset"`
		Limit      uint64            `json:"Limit"`
		Rows       []respResourceTag `json:"Rows"`
	}{TotalCount: total, Offset: offset, Limit: limit, Rows: []respResourceTag{}}
	for _, r := range rows {
		row := respResourceTag{ResourceRegion: r.ResourceRegion, ServiceType: r.ServiceType, ResourcePrefix: r.ResourcePrefix, ResourceID: r.ResourceID, Tags: []respTagPair{}}
		for _, t := range r.Tags {
			row.Tags = append(row.Tags, respTagPair{TagKey: t.Key, TagValue: t.Value})
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

func (h *Handler) modifyResourceTags(c *call) (any, *core.APIError) {
	var p modifyResourceTagsParams
	if err := decodeParams(c.req.Body, &p); err != nil {
		return nil, err
	}
	in := core.TCModifyResourceTagsInput{Resource: str(p.Resource), ReplaceSent: p.ReplaceTags != nil, DeleteSent: p.DeleteTags != nil}
	for _, t := range *orEmpty(p.ReplaceTags) {
		in.ReplaceTags = append(in.ReplaceTags, core.Tag{Key: str(t.TagKey), Value: str(t.TagValue)})
	}
	for _, t := range *orEmpty(p.DeleteTags) {
		in.DeleteTags = append(in.DeleteTags, str(t.TagKey))
	}
	if err := h.world.TCModifyResourceTags(in); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// orEmpty reads a list that may have been left out.
func orEmpty[T any](p *[]T) *[]T {
	if p == nil {
		return &[]T{}
	}
	return p
}
