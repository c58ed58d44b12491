// Package copilot is the coding adapter's GitHub Copilot login, for the
// octet CLI (`octet --login copilot [--headless]`, `octet --logout
// copilot`, alias github-copilot) and for embedders that want the same
// behaviour: the OAuth device flow on github.com with the operator's own
// OAuth app (the "copilot" member of ~/.octet/settings.json; no client id
// is built in), the private store ~/.octet/credentials/copilot.json (0600,
// directory 0700, replaced atomically under copilot.json.lock, the layout
// of the Codex credential), and a local logout.
//
// The login never prints a secret: only the verification URI (checked to
// be an https address on github.com) and the user code are shown.
package copilot
