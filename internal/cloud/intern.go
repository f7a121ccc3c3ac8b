package cloud

import "unique"

// TagKey returns one shared copy of a tag key. Every listed address carries
// the same few keys (cluster, owner, claim, mode, pod...), and each listing
// decodes them afresh: the listings the look-ups and sweeps hold would
// otherwise keep one copy per address and key. unique's handles are weak,
// so a key no listing holds any more is collected.
func TagKey(k string) string { return unique.Make(k).Value() }
