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

// acceptsPromptCacheKey reports whether the Chat Completions endpoint of
// route m is known to accept prompt_cache_key: only OpenAI's own API, the
// built-in openai entries (a configured provider may not take that name,
// and an inline route of any name may point anywhere). Other
// OpenAI-compatible servers may refuse a member they do not know.
func acceptsPromptCacheKey(m catalog.Model) bool {
	return !m.Inline && m.Provider == catalog.ProviderOpenAI && m.BaseURL == catalog.OpenAIBaseURL
}
