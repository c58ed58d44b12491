// Package copilot is the public GitHub Copilot seam and the coding
// adapter's login.
//
// The seam (seam.go): the embedder's Host supplies the short-lived Session
// and each Model's Protocol; a Provider, built with an explicit Endpoint
// (NewProvider) or on the coding adapter's FileHost (NewGitHubProvider),
// is what runtime.Options.Copilot takes. Its work is done by
// runtime/internal/copilot; this package converts at its edge and never
// imports the façade (runtime).
//
// The login (copilot.go), for the octet CLI (`octet --login copilot
// [--headless]`, `octet --logout copilot`, alias github-copilot) and for
// embedders that want the same
// behaviour: the OAuth device flow on github.com with the operator's own
// OAuth app (the "copilot" member of ~/.octet/settings.json; no client id
// is built in), the private store ~/.octet/credentials/copilot.json (0600,
// directory 0700, replaced atomically under copilot.json.lock, the layout
// of the Codex credential), and a local logout.
//
// The login never prints a secret: only the verification URI (checked to
// be an https address on github.com) and the user code are shown.
package copilot
