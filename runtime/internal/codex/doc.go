// Package codex owns the host's Codex credential (CONTRACT §11): the one-time
// import of a Codex CLI login from ~/.codex/auth.json into the host's own
// copy at ~/.octet/credentials/codex.json, and the OAuth refresh of that
// copy's access token.
//
// # Files
//
// Everything lives in ~/.octet/credentials (created 0700; an existing
// directory is narrowed to 0700):
//
//   - codex.json, the host's copy, mode 0600, always replaced atomically
//     (codex.json.tmp is written, chmod 0600, fsynced, renamed over
//     codex.json, and the directory is fsynced);
//   - codex.json.lock, mode 0600, which carries the exclusive flock and is
//     never removed.
//
// codex.json of a ChatGPT login (expires_at and refreshed_at only when
// known; refreshed_at after the first refresh):
//
//	{
//	  "schema_version": 1,
//	  "source": "codex-cli-import",
//	  "imported_at": "2026-01-02T03:04:05Z",
//	  "access_token": "<JWT>",
//	  "refresh_token": "<opaque>",
//	  "id_token": "<JWT>",
//	  "account_id": "<ChatGPT account id>",
//	  "expires_at": "2026-01-12T03:04:05Z",
//	  "refreshed_at": "2026-01-03T03:04:05Z"
//	}
//
// An API-key login stores "api_key" instead of the token members. Only
// schema_version, source, imported_at and one credential kind are required;
// unknown members are ignored so newer builds' files still load. A file of a
// higher schema version, a symbolic link, or a file that does not hold
// exactly one credential kind fails with ErrInvalidStore and is never
// repaired or replaced behind the user's back.
//
// The source, ~/.codex/auth.json, is the Codex CLI's file:
//
//	{
//	  "auth_mode": "chatgpt",
//	  "OPENAI_API_KEY": null,
//	  "tokens": {"id_token": "<JWT>", "access_token": "<JWT>",
//	             "refresh_token": "<opaque>", "account_id": "<id>"},
//	  "last_refresh": "2026-01-02T03:04:05Z"
//	}
//
// It is read once, on the first use, when codex.json does not exist yet, and
// never again: later logins or refreshes done by the Codex CLI are not seen
// (delete codex.json to import again). The source is never modified, chmoded,
// renamed or deleted. It is opened read-only with O_NOFOLLOW, so a symbolic
// link in the last path component is refused (a link higher up, such as a
// linked ~/.codex directory, is followed), and anything but a regular file
// of at most 1 MiB is refused. auth_mode "apikey" (or no auth_mode and a
// non-empty OPENAI_API_KEY, as the Codex CLI itself decides) imports the API
// key; "chatgpt" (or no auth_mode and no key) imports the tokens, which need
// a non-empty access_token and refresh_token. The account id comes from
// tokens.account_id, else from the chatgpt_account_id claim of the ID token
// or of the access token. Any other mode, a missing or invalid file, and a
// file without a usable credential are a *NoCredentialError (errors.Is
// ErrNoCredential), and no copy is written.
//
// # Lock and refresh
//
// Store.Credential takes the exclusive lock (polling flock with LOCK_NB and
// short sleeps, so it honours ctx) before it looks at codex.json, and holds
// it across the import, the refresh request and the write. The expiry is the
// exp claim of the access token, read by decoding the JWT payload without
// verifying its signature (the token is only ever checked by its issuer);
// an access token that is not a JWT with exp uses the stored expires_at, and
// one with neither never refreshes on its own (Store.Refresh forces one,
// e.g. after the provider answered 401). A token that expires within
// RefreshSkew is refreshed: POST TokenURL with the JSON body
// {"client_id", "grant_type": "refresh_token", "refresh_token"}, as the
// Codex CLI does. The answer's access_token is required; a missing
// refresh_token or id_token keeps the old one. Because every caller re-reads
// codex.json after taking the lock, a second process or goroutine waiting
// for the lock finds the refreshed tokens and does not spend the (single-use)
// refresh token again. A failed refresh is a *RefreshError and leaves
// codex.json untouched.
//
// # Secrets
//
// No error message of this package contains a key or token: reasons name
// files and fields, never values; refresh errors carry the HTTP status and,
// when it looks like one, the OAuth error code, never the response body; and
// every message is scrubbed of the tokens in play as a last defence.
// Credential formats, logs (slog.LogValuer) and marshals to JSON in a
// redacted form.
package codex
