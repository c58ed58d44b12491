package runtime

import "octet.dev/host/runtime/internal/copilot"

// The GitHub Copilot seam. The embedding application implements
// CopilotHost (the device login, the durable store of the GitHub
// credential, the identity); a CopilotProvider turns that login into
// short-lived sessions, the model table and authenticated inference. The
// coding adapter (package runtime/copilot, `octet --login copilot`) is one
// CopilotHost: the file store ~/.octet/credentials/copilot.json and the
// identity in ~/.octet/settings.json.
type (
	// CopilotHost is implemented by the embedder. Available must reject a
	// deleted or replaced login even while a session is cached for it.
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
	// CopilotProvider exchanges and refreshes sessions (Skew before the
	// local refresh deadline, 60 s by default, checked before every HTTP
	// request; concurrent callers share one exchange), registers the
	// models (RegisterModels) and authenticates inference (Client).
	CopilotProvider = copilot.Provider
	// CopilotProtocol is a model's wire, from the inventory.
	CopilotProtocol = copilot.Protocol
	// CopilotModel is one model of the Copilot inventory.
	CopilotModel = copilot.Model
	// CopilotSecret prints, logs and marshals as [redacted].
	CopilotSecret = copilot.Secret
	// CopilotFileHost is the coding adapter's CopilotHost.
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
