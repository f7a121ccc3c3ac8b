package core

import (
	"maps"
	"strings"
	"unicode"
)

// Tag API codes of ModifyResourceTags (tencentcloud-sdk-go tag/v20180813
// errors.go, and the action's list of codes in its client.go).
const (
	TCResourceDescriptionError  = "InvalidParameterValue.ResourceDescriptionError"
	TCResourceIDInvalid         = "InvalidParameterValue.ResourceIdInvalid"
	TCReservedTagKey            = "InvalidParameter.ReservedTagKey"
	TCDeleteTagsParamError      = "InvalidParameterValue.DeleteTagsParamError"
	TCTagKeyEmpty               = "InvalidParameterValue.TagKeyEmpty"
	TCTagKeyLengthExceeded      = "InvalidParameterValue.TagKeyLengthExceeded"
	TCTagValueLengthExceeded    = "InvalidParameterValue.TagValueLengthExceeded"
	TCTagKeyCharacterIllegal    = "InvalidParameterValue.TagKeyCharacterIllegal"
	TCTagValueCharacterIllegal  = "InvalidParameterValue.TagValueCharacterIllegal"
	TCResourceAttachedTagsLimit = "LimitExceeded.ResourceAttachedTags"
)

// TCModifyResourceTagsInput is tag ModifyResourceTags' parameters.
type TCModifyResourceTagsInput struct {
	// Resource is the six-segment description
	// qcs::<service>:<region>:uin/<uin>:<prefix>/<id>.
	Resource string
	// ReplaceTags and DeleteTags: nil when not sent.
	ReplaceTags []Tag
	DeleteTags  []string
	// ReplaceSent and DeleteSent say whether each list was sent at all
	// (an empty list is refused, a missing one is not).
	ReplaceSent, DeleteSent bool
}

// TCModifyResourceTags sets and removes tags of one resource: an EIP
// (qcs::cvm:<region>:uin/<uin>:eip/<id>; service type vpc is accepted
// too, as for DescribeResourcesByTags) or a CVM instance (…:instance/<id>).
// The rules, from the action's parameter documentation and error codes
// (tencentcloud-sdk-go tag/v20180813 models.go and client.go): ReplaceTags and
// DeleteTags, at least one of them and neither empty, must not share a
// key; keys are 1-127 and values 0-255 characters of letters, digits,
// spaces and + - = . _ : / @; keys starting with qcloud, tencent or
// project are Tencent's own; a resource carries at most 50 tags. Removing
// a key the resource does not carry is not an error. The answer for a
// resource that does not exist is not documented; the emulator uses
// InvalidParameterValue.ResourceIdInvalid, the tag API's code for an
// invalid resource ID.
func (w *World) TCModifyResourceTags(in TCModifyResourceTagsInput) *APIError {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	tags, apiErr := w.tcTaggedResource(in.Resource)
	if apiErr != nil {
		return apiErr
	}
	switch {
	case !in.ReplaceSent && !in.DeleteSent:
		return badRequest(TCMissingParameter, "one of ReplaceTags and DeleteTags is required")
	case in.ReplaceSent && len(in.ReplaceTags) == 0, in.DeleteSent && len(in.DeleteTags) == 0:
		return badRequest(TCInvalidParameterValue, "ReplaceTags and DeleteTags may be left out, but not sent empty")
	}
	replace := map[string]string{}
	for _, t := range in.ReplaceTags {
		if err := tcCheckTag(t.Key, t.Value); err != nil {
			return err
		}
		replace[t.Key] = t.Value
	}
	for _, k := range in.DeleteTags {
		if k == "" {
			return badRequest(TCTagKeyEmpty, "a tag key is empty")
		}
		if _, both := replace[k]; both {
			return badRequest(TCDeleteTagsParamError, "the tag key %q is in both ReplaceTags and DeleteTags", k)
		}
	}
	next := maps.Clone(*tags)
	if next == nil {
		next = map[string]string{}
	}
	maps.Copy(next, replace)
	for _, k := range in.DeleteTags {
		delete(next, k)
	}
	if len(next) > 50 {
		return badRequest(TCResourceAttachedTagsLimit, "a resource carries at most 50 tags")
	}
	*tags = next
	return nil
}

// tcTaggedResource resolves a six-segment resource description to the
// tags of the resource it names.
func (w *World) tcTaggedResource(resource string) (*map[string]string, *APIError) {
	if resource == "" {
		return nil, badRequest(TCMissingParameter, "missing parameter Resource")
	}
	// qcs : <project> : <service> : <region> : uin/<uin> : <prefix>/<id>
	seg := strings.SplitN(resource, ":", 6)
	if len(seg) != 6 || seg[0] != "qcs" || seg[2] == "" || seg[3] == "" || !strings.HasPrefix(seg[4], "uin/") {
		return nil, badRequest(TCResourceDescriptionError, "the resource description %q is not qcs::<service>:<region>:uin/<uin>:<prefix>/<id>", resource)
	}
	prefix, id, ok := strings.Cut(seg[5], "/")
	if !ok || id == "" {
		return nil, badRequest(TCResourceDescriptionError, "the resource description %q names no <prefix>/<id>", resource)
	}
	switch {
	case prefix == "eip" && (seg[2] == "cvm" || seg[2] == "vpc"):
		if a := w.tc.addresses[id]; a != nil {
			return &a.Tags, nil
		}
	case prefix == "instance" && seg[2] == "cvm":
		if in := w.tc.instances[id]; in != nil {
			return &in.Tags, nil
		}
	default:
		return nil, badRequest(TCResourceDescriptionError, "the emulator tags only EIPs (cvm eip/...) and CVM instances (cvm instance/...), not %s %s", seg[2], prefix)
	}
	return nil, badRequest(TCResourceIDInvalid, "the resource %s does not exist", resource)
}

// tcCheckTag applies the tag API's rules to one key and value.
func tcCheckTag(k, v string) *APIError {
	switch {
	case k == "":
		return badRequest(TCTagKeyEmpty, "a tag key is empty")
	case len([]rune(k)) > 127:
		return badRequest(TCTagKeyLengthExceeded, "the tag key %q is longer than 127 characters", k)
	case len([]rune(v)) > 255:
		return badRequest(TCTagValueLengthExceeded, "the value of tag %q is longer than 255 characters", k)
	case !tcTagChars(k):
		return badRequest(TCTagKeyCharacterIllegal, "the tag key %q has a character other than letters, digits, spaces and + - = . _ : / @", k)
	case !tcTagChars(v):
		return badRequest(TCTagValueCharacterIllegal, "the value of tag %q has a character other than letters, digits, spaces and + - = . _ : / @", k)
	}
	low := strings.ToLower(k)
	for _, p := range []string{"qcloud", "tencent", "project"} {
		if strings.HasPrefix(low, p) {
			return badRequest(TCReservedTagKey, "the tag key %q starts with %s, which Tencent Cloud keeps for itself", k, p)
		}
	}
	return nil
}

func tcTagChars(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" +-=._:/@", r) {
			return false
		}
	}
	return true
}
