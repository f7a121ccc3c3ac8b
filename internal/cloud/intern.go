package cloud

import "sync"

// maxTagKeys bounds the tag keys TagKey shares: far above the keys one
// cluster's addresses carry (edgeplane's, the legacy controllers', a few of
// the user's), so that a cloud with many distinct keys costs memory only
// up to it.
const maxTagKeys = 1024

var tagKeys = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

// TagKey returns one shared copy of a tag key. Every listed address carries
// the same few keys (cluster, owner, claim, mode, pod...), and each listing
// decodes them afresh: the listings the look-ups and sweeps hold would
// otherwise keep one copy per address and key. Keys beyond maxTagKeys are
// returned as they are.
func TagKey(k string) string {
	tagKeys.RLock()
	shared, ok := tagKeys.m[k]
	tagKeys.RUnlock()
	if ok {
		return shared
	}
	tagKeys.Lock()
	defer tagKeys.Unlock()
	if shared, ok := tagKeys.m[k]; ok {
		return shared
	}
	if len(tagKeys.m) < maxTagKeys {
		tagKeys.m[k] = k
	}
	return k
}
