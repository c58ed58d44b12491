// Package copilot is the engine's side of GitHub Copilot: everything a run
// on a copilot/<model> route needs beyond a wire mode.
//
//   - The login: the OAuth device authorization grant on github.com
//     (DeviceFlow) with the operator's own OAuth app and editor identity
//     (Identity, the "copilot" member of ~/.octet/settings.json; no client
//     id is built in), and the Host an embedder provides to begin and poll
//     the login and to save, load and re-check the credential. FileHost is
//     the coding adapter's Host, the private store
//     ~/.octet/credentials/copilot.json.
//   - The session: Provider exchanges the GitHub login for a short-lived
//     Copilot API session and refreshes it before it expires, keeps the
//     model inventory (Table; only the Chat Completions and Responses
//     protocols are routable), and sends inference through Client.
//   - The transport: every request goes only to an origin of the fixed
//     allowlist (InferenceOrigins), with the identity headers, X-Request-Id
//     and X-Initiator; a 401 exchanges the session once and resends. A
//     session that cannot be had is answered as a synthetic HTTP error, so
//     that recovery classifies it.
//
// Credentials are Secrets: every printed, logged or marshalled form of one
// is Redacted. Package runtime/copilot is the public login of the CLI on
// top of this package.
package copilot
