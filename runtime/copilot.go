package runtime

import (
	"net/http"

	"octet.dev/host/runtime/internal/copilot"
)

// The GitHub Copilot seam. The embedding application implements
// CopilotHost: it supplies the short-lived CopilotSession and each model's
// CopilotProtocol; a CopilotProvider, built with an explicit
// CopilotEndpoint, caches the session, validates the model table and
// authenticates inference, and contacts no GitHub endpoint itself. The
// GitHub.com coding adapter (package runtime/copilot, `octet --login
// copilot`) is one CopilotHost: the device login, the file store
// ~/.octet/credentials/copilot.json (CopilotFileHost), the identity in
// ~/.octet/settings.json, the token exchange at api.github.com, the
// inventory and the origin allowlist live there.
type (
	// CopilotHost is implemented by the embedder: NewSession, Models (each
	// with its protocol), Headers; Current must reject a session whose
	// login was deleted or replaced even while it is cached.
	CopilotHost = copilot.Host
	// CopilotCredential is a GitHub login (its token is a CopilotSecret).
	CopilotCredential = copilot.Credential
	// CopilotDeviceLogin is a started device authorization: the user code
	// and verification URI to show, the poll interval and the expiry, all
	// bounded; the device code is a CopilotSecret.
	CopilotDeviceLogin = copilot.DeviceLogin
	// CopilotIdentity is the operator's OAuth client id and the editor
	// identity headers; nothing of it is hard-coded.
	CopilotIdentity = copilot.Identity
	// CopilotEndpoint is an explicit origin root (ParseCopilotEndpoint).
	CopilotEndpoint = copilot.Endpoint
	// CopilotSession is a short-lived Copilot API session.
	CopilotSession = copilot.Session
	// CopilotProvider takes sessions from its CopilotHost and replaces
	// them Skew before the local refresh deadline (60 s by default,
	// checked before every HTTP request; concurrent callers share one
	// request), registers the models (RegisterModels) and authenticates
	// inference to its CopilotEndpoint (Client). NewCopilotProvider
	// builds one.
	CopilotProvider = copilot.Provider
	// CopilotProtocol is a model's wire, from the inventory.
	CopilotProtocol = copilot.Protocol
	// CopilotModel is one model of the Copilot inventory.
	CopilotModel = copilot.Model
	// CopilotSecret prints, logs and marshals as [redacted].
	CopilotSecret = copilot.Secret
	// CopilotFileHost is the coding adapter's login store, under its
	// CopilotHost (NewCopilotGitHubProvider).
	CopilotFileHost = copilot.FileHost
	// CopilotExchangeError is a failed session exchange (status and codes
	// only, never GitHub's message).
	CopilotExchangeError = copilot.ExchangeError
)

// Copilot protocols: OpenAiChat selects Chat Completions, OpenAiResponses
// the Responses API; anything else is rejected.
const (
	CopilotOpenAiChat      = copilot.ProtocolOpenAiChat
	CopilotOpenAiResponses = copilot.ProtocolOpenAiResponses
)

// ParseCopilotEndpoint validates an explicit HTTPS origin root; plain http
// only to a literal loopback address (tests); any path, query, fragment or
// userinfo is rejected.
func ParseCopilotEndpoint(raw string) (CopilotEndpoint, error) { return copilot.ParseEndpoint(raw) }

// CopilotInferenceOrigins is the fixed allowlist of Copilot API origins.
func CopilotInferenceOrigins() []string { return append([]string(nil), copilot.InferenceOrigins...) }

// NewCopilotProvider is the seam on the embedder's host: inference goes to
// endpoint (a session the host gives with its own vetted origin goes
// there), through client (nil: http.DefaultClient).
func NewCopilotProvider(endpoint CopilotEndpoint, host CopilotHost, client *http.Client) *CopilotProvider {
	return &copilot.Provider{Endpoint: endpoint, Host: host, HTTPClient: client}
}

// NewCopilotGitHubProvider is the GitHub.com coding adapter's provider on
// the login store fh: the token exchange at api.github.com, the inventory,
// the origin allowlist, and api.githubcopilot.com as the endpoint.
func NewCopilotGitHubProvider(fh *CopilotFileHost, client *http.Client) *CopilotProvider {
	return copilot.NewGitHubProvider(fh, client, nil)
}
