// Package ec2 is the emulator's EC2 Query API front-end: form-encoded POST
// (or GET) with Action and Version=2016-11-15, 1-indexed list parameters,
// XML responses in the EC2 namespace and the EC2 error envelope. State and
// behaviour live in internal/cloudsim/core.
package ec2

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 1 << 20

// Handler serves the EC2 Query API subset edgeplane uses.
type Handler struct {
	world *core.World
	log   *slog.Logger
	// wallClock is used for signature freshness: clients sign with their
	// wall clock even when the emulator runs on a manual clock.
	wallClock func() time.Time
}

// NewHandler returns the EC2 front-end for w. wallClock (nil: time.Now)
// is what request dates are checked against.
func NewHandler(w *core.World, log *slog.Logger, wallClock func() time.Time) *Handler {
	if log == nil {
		log = slog.Default()
	}
	if wallClock == nil {
		wallClock = time.Now
	}
	return &Handler{world: w, log: log, wallClock: wallClock}
}

// request is what an operation sees.
type request struct {
	params *Params
	region string
	// account is the caller's, from its access key.
	account string
	adm     core.Admission
}

type operation func(h *Handler, r *request) (any, error)

var operations = map[string]operation{
	"AllocateAddress":           (*Handler).allocateAddress,
	"AssociateAddress":          (*Handler).associateAddress,
	"DisassociateAddress":       (*Handler).disassociateAddress,
	"ReleaseAddress":            (*Handler).releaseAddress,
	"DescribeAddresses":         (*Handler).describeAddresses,
	"DescribeNetworkInterfaces": (*Handler).describeNetworkInterfaces,
	"CreateTags":                (*Handler).createTags,
	"DeleteTags":                (*Handler).deleteTags,
}

// Actions lists the supported actions.
func Actions() []string {
	out := make([]string, 0, len(operations))
	for a := range operations {
		out = append(out, a)
	}
	return out
}

// ReadParams extracts the Query parameters from a request: the query string
// plus, for a form POST, the body. It is the EC2 front-end's parser entry
// point (and fuzz target).
func ReadParams(r *http.Request) (*Params, error) {
	raw := r.URL.RawQuery
	if r.Method == http.MethodPost {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/x-www-form-urlencoded" {
			return nil, paramErr(core.EC2InvalidParameterValue, "Content-Type must be application/x-www-form-urlencoded")
		}
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
		if err != nil {
			return nil, paramErr("RequestEntityTooLarge", "request body exceeds %d bytes", MaxBodyBytes)
		}
		switch {
		case raw == "":
			raw = string(body)
		case len(body) > 0:
			raw = raw + "&" + string(body)
		}
	}
	return DecodeParams(raw)
}

// ServeHTTP answers one EC2 Query request.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		h.writeError(rw, "", h.world.RequestID(), core.Errf(http.StatusMethodNotAllowed, "InvalidRequest", "The HTTP method %s is not supported.", r.Method))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		h.writeError(rw, "", h.world.RequestID(), core.Errf(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "request body exceeds %d bytes", MaxBodyBytes))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p, err := ReadParams(r)
	if err != nil {
		h.writeError(rw, "", h.world.RequestID(), toAPIError(err))
		return
	}
	action := p.Action()
	op, ok := operations[action]
	switch {
	case action == "":
		h.writeError(rw, "", h.world.RequestID(), core.Errf(http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action"))
		return
	case !ok:
		h.writeError(rw, action, h.world.RequestID(), core.Errf(http.StatusBadRequest, core.EC2InvalidAction, "The action %s is not valid for this web service.", action))
		return
	case p.Version() == "":
		h.writeError(rw, action, h.world.RequestID(), core.Errf(http.StatusBadRequest, core.EC2MissingParameter, "The request must contain the parameter Version"))
		return
	case p.Version() != APIVersion:
		h.writeError(rw, action, h.world.RequestID(), core.Errf(http.StatusBadRequest, core.EC2InvalidParameterValue, "Version %s is not supported by the emulator; use %s", p.Version(), APIVersion))
		return
	}

	// Authentication comes before throttling and faults, as on EC2: a
	// rejected request costs the account nothing.
	account, apiErr := h.authenticate(r, body)
	if apiErr != nil {
		h.writeError(rw, action, h.world.RequestID(), apiErr)
		return
	}
	adm, apiErr := h.world.Admit(core.ProviderEC2, action, bucketKey(action, p))
	if apiErr != nil {
		h.writeError(rw, action, adm.RequestID, apiErr)
		return
	}
	core.Sleep(r.Context(), adm.Latency)

	req := &request{params: p, region: SigningRegion(r.Header.Get("Authorization")), account: account, adm: adm}
	dry, err := p.Bool("DryRun")
	if err != nil {
		h.writeError(rw, action, adm.RequestID, toAPIError(err))
		return
	}
	out, err := op(h, req)
	if err == nil && dry != nil && *dry {
		// Operations check DryRun before changing anything (see dryRun).
		err = core.Errf(http.StatusPreconditionFailed, core.EC2DryRunOperation, "Request would have succeeded, but DryRun flag is set.")
	}
	if err != nil {
		h.writeError(rw, action, adm.RequestID, toAPIError(err))
		return
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(out); err != nil {
		h.writeError(rw, action, adm.RequestID, core.Errf(http.StatusInternalServerError, core.EC2InternalError, "encoding response: %v", err))
		return
	}
	h.world.Record(core.ProviderEC2, action, "")
	if adm.Drop {
		h.log.Info("Dropped EC2 response after commit", "action", action, "requestID", adm.RequestID)
		core.HoldAndDrop(r.Context(), adm.DropHold)
	}
	rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	rw.Header().Set("X-Amzn-RequestId", adm.RequestID)
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(buf.Bytes())
}

// bucketKey picks the token bucket: DescribeNetworkInterfaces without any
// filter or pagination draws from EC2's smaller "unfiltered" bucket.
func bucketKey(action string, p *Params) string {
	if action == "DescribeNetworkInterfaces" && !p.HasPrefix("Filter") && !p.Has("MaxResults") && !p.Has("NextToken") {
		return core.BucketEC2DescribeNetworkInterfacesUnfiltered
	}
	return core.ProviderEC2 + "/" + action
}

// SigningRegion extracts the region from a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request,
// …"); "" when absent or unsigned.
func SigningRegion(authz string) string {
	_, cred, ok := strings.Cut(authz, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[2]
}

func toAPIError(err error) *core.APIError {
	var apiErr *core.APIError
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var pe *ParamError
	if errors.As(err, &pe) {
		return core.Errf(http.StatusBadRequest, pe.Code, "%s", pe.Message)
	}
	return core.Errf(http.StatusInternalServerError, core.EC2InternalError, "%v", err)
}

func (h *Handler) writeError(rw http.ResponseWriter, action, requestID string, e *core.APIError) {
	if action != "" {
		h.world.Record(core.ProviderEC2, action, e.Code)
	}
	body, err := xml.Marshal(errorResponse{Errors: []xmlError{{Code: e.Code, Message: e.Message}}, RequestID: requestID})
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	status := e.HTTPStatus
	if status == 0 {
		status = http.StatusBadRequest
	}
	rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	rw.Header().Set("X-Amzn-RequestId", requestID)
	rw.WriteHeader(status)
	_, _ = rw.Write([]byte(xml.Header))
	_, _ = rw.Write(body)
}

// dryRun reports whether the request is a dry run; operations call it after
// validating and before changing state, so a dry run never changes anything.
func dryRun(r *request) bool {
	v, _ := r.params.Bool("DryRun")
	return v != nil && *v
}

func (h *Handler) allocateAddress(r *request) (any, error) {
	p := r.params
	specs, err := p.TagSpecifications()
	if err != nil {
		return nil, err
	}
	in := core.EC2AllocateInput{
		Domain:             p.String("Domain"),
		PublicIPv4Pool:     p.String("PublicIpv4Pool"),
		Address:            p.String("Address"),
		NetworkBorderGroup: p.String("NetworkBorderGroup"),
		Region:             r.region,
		Account:            r.account,
		TagSpecs:           specs,
		VisibilityDelay:    r.adm.VisibilityDelay,
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	a, apiErr := h.world.EC2AllocateAddress(in)
	if apiErr != nil {
		return nil, apiErr
	}
	return allocateAddressResponse{
		Xmlns: Namespace, RequestID: r.adm.RequestID,
		PublicIP: a.PublicIP, Domain: a.Domain, AllocationID: a.AllocationID,
		PublicIPv4Pool: a.PublicIPv4Pool, NetworkBorderGroup: a.NetworkBorderGroup,
	}, nil
}

func (h *Handler) associateAddress(r *request) (any, error) {
	p := r.params
	allow, err := p.Bool("AllowReassociation")
	if err != nil {
		return nil, err
	}
	in := core.EC2AssociateInput{
		AllocationID:       p.String("AllocationId"),
		PublicIP:           p.String("PublicIp"),
		InstanceID:         p.String("InstanceId"),
		NetworkInterfaceID: p.String("NetworkInterfaceId"),
		PrivateIPAddress:   p.String("PrivateIpAddress"),
		AllowReassociation: allow,
		Account:            r.account,
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	id, apiErr := h.world.EC2AssociateAddress(in)
	if apiErr != nil {
		return nil, apiErr
	}
	return associateAddressResponse{Xmlns: Namespace, RequestID: r.adm.RequestID, Return: true, AssociationID: id}, nil
}

func (h *Handler) disassociateAddress(r *request) (any, error) {
	p := r.params
	assoc, ip := p.String("AssociationId"), p.String("PublicIp")
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	if apiErr := h.world.EC2DisassociateAddress(r.account, assoc, ip); apiErr != nil {
		return nil, apiErr
	}
	return returnOK("DisassociateAddressResponse", r), nil
}

func (h *Handler) releaseAddress(r *request) (any, error) {
	p := r.params
	alloc, ip := p.String("AllocationId"), p.String("PublicIp")
	p.String("NetworkBorderGroup")
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	if apiErr := h.world.EC2ReleaseAddress(r.account, alloc, ip); apiErr != nil {
		return nil, apiErr
	}
	return returnOK("ReleaseAddressResponse", r), nil
}

func returnOK(name string, r *request) returnResponse {
	return returnResponse{XMLName: xml.Name{Local: name}, Xmlns: Namespace, RequestID: r.adm.RequestID, Return: true}
}

func (h *Handler) describeAddresses(r *request) (any, error) {
	p := r.params
	ids, err := p.List("AllocationId")
	if err != nil {
		return nil, err
	}
	ips, err := p.List("PublicIp")
	if err != nil {
		return nil, err
	}
	filters, err := p.Filters()
	if err != nil {
		return nil, err
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	addrs, apiErr := h.world.EC2DescribeAddresses(r.account, ids, ips, filters)
	if apiErr != nil {
		return nil, apiErr
	}
	resp := describeAddressesResponse{Xmlns: Namespace, RequestID: r.adm.RequestID, Addresses: []addressItem{}}
	for _, a := range addrs {
		resp.Addresses = append(resp.Addresses, addressXML(a))
	}
	return resp, nil
}

func (h *Handler) describeNetworkInterfaces(r *request) (any, error) {
	p := r.params
	ids, err := p.List("NetworkInterfaceId")
	if err != nil {
		return nil, err
	}
	filters, err := p.Filters()
	if err != nil {
		return nil, err
	}
	maxResults, err := p.Int("MaxResults")
	if err != nil {
		return nil, err
	}
	next := p.String("NextToken")
	if _, err := p.Bool("IncludeManagedResources"); err != nil {
		return nil, err
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	enis, token, apiErr := h.world.EC2DescribeNetworkInterfaces(core.EC2DescribeNetworkInterfacesInput{
		NetworkInterfaceIDs: ids, Filters: filters, MaxResults: maxResults, NextToken: next,
	})
	if apiErr != nil {
		return nil, apiErr
	}
	owner := h.world.Settings().EC2AccountID
	resp := describeNetworkInterfacesResponse{Xmlns: Namespace, RequestID: r.adm.RequestID, NextToken: token, NetworkInterfaces: []eniItem{}}
	for _, e := range enis {
		resp.NetworkInterfaces = append(resp.NetworkInterfaces, eniXML(e, owner))
	}
	return resp, nil
}

func (h *Handler) createTags(r *request) (any, error) {
	p := r.params
	ids, err := p.List("ResourceId")
	if err != nil {
		return nil, err
	}
	tags, err := p.Tags("Tag")
	if err != nil {
		return nil, err
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	if apiErr := h.world.EC2CreateTags(r.account, ids, tags); apiErr != nil {
		return nil, apiErr
	}
	return returnOK("CreateTagsResponse", r), nil
}

func (h *Handler) deleteTags(r *request) (any, error) {
	p := r.params
	ids, err := p.List("ResourceId")
	if err != nil {
		return nil, err
	}
	tags, err := p.DeleteTags()
	if err != nil {
		return nil, err
	}
	if err := p.Unknown(); err != nil {
		return nil, err
	}
	if dryRun(r) {
		return nil, nil
	}
	if apiErr := h.world.EC2DeleteTags(r.account, ids, tags); apiErr != nil {
		return nil, apiErr
	}
	return returnOK("DeleteTagsResponse", r), nil
}
