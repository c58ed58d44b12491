// Package catalog owns the model routes the host can run: the built-in
// catalog of current OpenAI and Anthropic models, the user-configured
// providers read from ~/.octet/models.json, and the inline routes a run
// request may define (CONTRACT §7, §8, §11).
//
// A Model describes one route: which provider and wire mode serve it, the
// endpoint root and credential variable to use, its context window and output
// cap, the input modalities it accepts, whether it reasons, and its price per
// million tokens when that is known. The values reported to callers are
// route-effective: audio input is advertised only where the selected wire mode
// carries native audio (today only OpenAI Chat Completions).
//
// The package also owns the rules that make inline routes safe to accept:
// base URL validation, header-name validation, modality validation, the
// endpoint path for each wire mode, and the SHA-256-derived inline model ID,
// which never collides with a catalog ID because catalog IDs never start with
// "inline-".
//
// The package performs no network I/O and reads no credentials; it only names
// the environment variable that holds a route's key.
//
// Concurrency: a Catalog is immutable after Load returns and may be shared by
// concurrent readers. Functions return copies, so callers may modify the
// Models they receive.
package catalog
