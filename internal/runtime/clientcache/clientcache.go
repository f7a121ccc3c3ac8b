// Package clientcache keeps one cloud client per account for every object
// that uses it, so that all of them share the client's rate-limit buckets
// and credential gate, and a burst of reconciles reads the provider config
// and its Secret once:
//
//   - a provider config resolved within ConfigTTL is not read again;
//     concurrent passes that need one being resolved wait for that
//     resolution (golang.org/x/sync/singleflight) instead of reading it
//     themselves;
//   - resolving names the client the config needs by a fingerprint of
//     everything it is built from (endpoint, region, keys, identity): an
//     unchanged config keeps its client, changed keys (rotated, or fixed
//     after a rejection) get a new one at once;
//   - both maps are apimachinery LRUExpireCaches: a client unused for
//     ClientTTL, or beyond Size accounts, is dropped, so configs that come
//     and go leave nothing behind.
package clientcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// Config configures a Cache.
type Config struct {
	// ConfigTTL is how long a resolved provider config is reused.
	ConfigTTL time.Duration
	// ClientTTL is how long a client nobody resolves to is kept (default
	// one hour).
	ClientTTL time.Duration
	// Size bounds the configs and the clients kept (default 1024).
	Size int
	// Timeout bounds one resolution, which serves every caller waiting for
	// it (default one minute).
	Timeout time.Duration
	// Clock times the TTLs (default: the real clock).
	Clock clock.PassiveClock
}

// Account is what resolving a provider config yields.
type Account[C any] struct {
	// Fingerprint names the client: equal for configs that need the same
	// client (see Fingerprint).
	Fingerprint string
	// New builds the client when none with this fingerprint is kept.
	New func(ctx context.Context) (C, error)
}

// Cache maps provider configs to clients of type C. Use New.
type Cache[C any] struct {
	cfg     Config
	group   singleflight.Group
	configs *cache.LRUExpireCache // config key -> C
	clients *cache.LRUExpireCache // fingerprint -> C
}

// New returns an empty Cache.
func New[C any](cfg Config) *Cache[C] {
	if cfg.ClientTTL <= 0 {
		cfg.ClientTTL = time.Hour
	}
	if cfg.Size <= 0 {
		cfg.Size = 1024
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Cache[C]{cfg: cfg,
		configs: cache.NewLRUExpireCacheWithClock(cfg.Size, cfg.Clock),
		clients: cache.NewLRUExpireCacheWithClock(cfg.Size, cfg.Clock)}
}

// Get returns the client of the provider config named key: the one
// resolved within ConfigTTL, or the result of resolve (shared with every
// concurrent Get of key). Errors are not remembered: the next Get
// resolves again.
func (c *Cache[C]) Get(ctx context.Context, key string, resolve func(context.Context) (Account[C], error)) (C, error) {
	if v, ok := c.configs.Get(key); ok {
		return v.(C), nil
	}
	ch := c.group.DoChan(key, func() (any, error) {
		// The resolution serves every waiting caller: it must not end with
		// the first one's context.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
		defer cancel()
		acct, err := resolve(rctx)
		if err != nil {
			return nil, err
		}
		var cl C
		if v, ok := c.clients.Get(acct.Fingerprint); ok {
			cl = v.(C)
		} else if cl, err = acct.New(rctx); err != nil {
			return nil, err
		}
		c.clients.Add(acct.Fingerprint, cl, c.cfg.ClientTTL)
		c.configs.Add(key, cl, c.cfg.ConfigTTL)
		return cl, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero C
			return zero, r.Err
		}
		return r.Val.(C), nil
	case <-ctx.Done():
		var zero C
		return zero, fmt.Errorf("waiting for provider config %s to be resolved: %w", key, ctx.Err())
	}
}

// Fingerprint hashes the parts a client is built from into a key (the
// secrets among them stay out of memory dumps of the cache).
func Fingerprint(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}
