package engine

import (
	"crypto/sha256"
	"encoding/hex"

	"octet.dev/host/runtime/internal/catalog"
)

// promptCacheKey returns the prompt-cache key of a session's model calls
// on route m (provider.Request.CacheKey, sent as prompt_cache_key where
// the wire takes one): stable across the session's steps and runs, so the
// provider routes them to the cache that holds their prefix, and distinct
// per session and route. It is a digest, so it tells the provider nothing
// about the session id, and it is made of no secret (never the API key).
// Every run has a session (a run without session_id gets a new one), so
// there is always a key; a run on a fresh session starts a fresh key.
func promptCacheKey(sessionID string, m catalog.Model) string {
	sum := sha256.Sum256([]byte("octet prompt cache\x00" + sessionID + "\x00" + m.Provider + "\x00" + m.ID))
	return "octet-" + hex.EncodeToString(sum[:16])
}
