// Package copilot is the GitHub Copilot seam and its GitHub.com adapter.
//
// The seam (Provider, Host) is generic: a Provider is built with an
// explicit Endpoint and takes the short-lived Session and each model's
// Protocol from its Host; it caches the session until its local refresh
// deadline minus the skew, validates the model table, and authenticates
// inference (Client); it contacts no GitHub endpoint itself.
//
// The GitHub.com coding adapter (GitHub, over a Login such as FileHost;
// what `octet --login copilot` uses) is one Host: the device flow on
// github.com (DeviceFlow), the private store
// ~/.octet/credentials/copilot.json (FileHost), the identity
// (~/.octet/settings.json), the token exchange at api.github.com, the
// inventory (GET <origin>/models) and the origin allowlist
// (InferenceOrigins). The public package runtime/copilot owns the public
// types and converts them at its edge; the façade (package runtime) opens
// its Provider through Unwrap.
package copilot
