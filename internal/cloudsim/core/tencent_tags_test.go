package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTencentModifyResourceTags(t *testing.T) {
	w, _ := newWorld(t, Settings{}, &Fixtures{Tencent: TencentFixtures{
		Addresses: []TCAddressFixture{{AddressID: "eip-tags0001", Tags: map[string]string{"pool": "a", "old": "x"}}},
		Instances: []TCInstanceFixture{{InstanceID: "ins-tags0001"}},
	}})
	const eip = "qcs::cvm:ap-hongkong:uin/:eip/eip-tags0001"
	tagsOf := func() map[string]string {
		for _, a := range w.Snapshot().Tencent.Addresses {
			if a.AddressID == "eip-tags0001" {
				out := map[string]string{}
				for _, tg := range a.Tags {
					out[tg.Key] = tg.Value
				}
				return out
			}
		}
		return nil
	}
	if err := w.TCModifyResourceTags(TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, DeleteSent: true,
		ReplaceTags: []Tag{{Key: "edgeplane.io/cluster", Value: "c1"}, {Key: "pool", Value: "b"}}, DeleteTags: []string{"old", "never-there"}}); err != nil {
		t.Fatalf("modify: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"edgeplane.io/cluster": "c1", "pool": "b"}, tagsOf()); diff != "" {
		t.Fatalf("tags (-want +got):\n%s", diff)
	}
	// The vpc service type names addresses too, and instances are tagged.
	if err := w.TCModifyResourceTags(TCModifyResourceTagsInput{Resource: "qcs::vpc:ap-hongkong:uin/123:eip/eip-tags0001", DeleteSent: true, DeleteTags: []string{"pool"}}); err != nil {
		t.Fatalf("modify by vpc: %v", err)
	}
	if err := w.TCModifyResourceTags(TCModifyResourceTagsInput{Resource: "qcs::cvm:ap-hongkong:uin/:instance/ins-tags0001", ReplaceSent: true, ReplaceTags: []Tag{{Key: "k", Value: "v"}}}); err != nil {
		t.Fatalf("modify an instance: %v", err)
	}

	for name, tc := range map[string]struct {
		in   TCModifyResourceTagsInput
		code string
	}{
		"no resource":        {TCModifyResourceTagsInput{ReplaceSent: true, ReplaceTags: []Tag{{Key: "k"}}}, TCMissingParameter},
		"malformed resource": {TCModifyResourceTagsInput{Resource: "eip-tags0001", ReplaceSent: true, ReplaceTags: []Tag{{Key: "k"}}}, TCResourceDescriptionError},
		"no uin segment":     {TCModifyResourceTagsInput{Resource: "qcs::cvm:ap-hongkong::eip/eip-tags0001", ReplaceSent: true, ReplaceTags: []Tag{{Key: "k"}}}, TCResourceDescriptionError},
		"unknown kind":       {TCModifyResourceTagsInput{Resource: "qcs::clb:ap-hongkong:uin/:clb/lb-1", ReplaceSent: true, ReplaceTags: []Tag{{Key: "k"}}}, TCResourceDescriptionError},
		"unknown address":    {TCModifyResourceTagsInput{Resource: "qcs::cvm:ap-hongkong:uin/:eip/eip-gone0000", ReplaceSent: true, ReplaceTags: []Tag{{Key: "k"}}}, TCResourceIDInvalid},
		"neither list":       {TCModifyResourceTagsInput{Resource: eip}, TCMissingParameter},
		"empty list":         {TCModifyResourceTagsInput{Resource: eip, DeleteSent: true}, TCInvalidParameterValue},
		"key in both":        {TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, DeleteSent: true, ReplaceTags: []Tag{{Key: "k"}}, DeleteTags: []string{"k"}}, TCDeleteTagsParamError},
		"reserved key":       {TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, ReplaceTags: []Tag{{Key: "QCloud:x", Value: "v"}}}, TCReservedTagKey},
		"empty key":          {TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, ReplaceTags: []Tag{{Value: "v"}}}, TCTagKeyEmpty},
		"bad key character":  {TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, ReplaceTags: []Tag{{Key: "a*b", Value: "v"}}}, TCTagKeyCharacterIllegal},
		"bad value character": {TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true, ReplaceTags: []Tag{{Key: "a", Value: "v;"}}},
			TCTagValueCharacterIllegal},
	} {
		t.Run(name, func(t *testing.T) {
			err := w.TCModifyResourceTags(tc.in)
			if err == nil || err.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	many := TCModifyResourceTagsInput{Resource: eip, ReplaceSent: true}
	for i := range 51 {
		many.ReplaceTags = append(many.ReplaceTags, Tag{Key: "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Value: "v"})
	}
	if err := w.TCModifyResourceTags(many); err == nil || err.Code != TCResourceAttachedTagsLimit {
		t.Fatalf("51 tags: err = %v, want %s", err, TCResourceAttachedTagsLimit)
	}
	if diff := cmp.Diff(map[string]string{"edgeplane.io/cluster": "c1"}, tagsOf()); diff != "" {
		t.Fatalf("a refused change changed the tags (-want +got):\n%s", diff)
	}
}
