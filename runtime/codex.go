package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/codex"
)

// codexPrefix selects a Codex route: "codex/<model>" runs <model> on the
// Responses wire with the Codex CLI's login (CONTRACT §11).
const codexPrefix = "codex/"

// codexRoute resolves "codex/<name>": the credential is imported from
// ~/.codex/auth.json on first use into ~/.octet/credentials/codex.json
// (mode 0600, under a cross-process lock; the source is never modified) and
// refreshed under the same lock when it is about to expire. A ChatGPT login
// goes to the Codex backend with its account header; an API key to the
// OpenAI API.
func (a *Agent) codexRoute(ctx context.Context, name string) (catalog.Model, string, map[string]string, *RunError) {
	if name == "" {
		return catalog.Model{}, "", nil, refuse(CodeModelNotFound, "a Codex route names a model: codex/<model>")
	}
	st := codex.Store{Home: a.opts.Home, Now: a.opts.Now, HTTPClient: a.opts.HTTPClient, TokenURL: a.opts.CodexTokenURL}
	cred, err := st.Credential(ctx)
	var nc *codex.NoCredentialError
	switch {
	case errors.As(err, &nc):
		return catalog.Model{}, "", nil, refuse(CodeCredentialsMissing, "no Codex credential: %s", nc.Reason)
	case err != nil:
		return catalog.Model{}, "", nil, refuse(CodeCredentialsMissing, "the Codex credential could not be used: %s", err.Error())
	}
	m := catalog.Model{ID: codexPrefix + name, Provider: "codex", Name: name, APIModel: name, Mode: catalog.ModeOpenAIResponses,
		ContextWindowTokens: catalog.DefaultInlineContextWindow, MaxOutputTokens: catalog.DefaultInlineMaxOutput,
		InputModalities: []string{"text"}, SupportsReasoning: true}
	if cat, err := catalog.Load(a.opts.Home); err == nil {
		if known, ok := cat.Lookup(name); ok && known.Provider == catalog.ProviderOpenAI {
			m.Name, m.ContextWindowTokens, m.MaxOutputTokens = known.Name, known.ContextWindowTokens, known.MaxOutputTokens
			m.InputModalities, m.SupportsReasoning, m.Cost = known.InputModalities, known.SupportsReasoning, known.Cost
		}
	}
	var headers map[string]string
	m.BaseURL = codex.APIBaseURL
	if cred.APIKey == "" {
		m.BaseURL = codex.ChatGPTBaseURL
		if cred.AccountID != "" {
			headers = map[string]string{codex.AccountIDHeader: cred.AccountID}
		}
	}
	if a.opts.CodexBaseURL != "" {
		m.BaseURL = a.opts.CodexBaseURL
	}
	return m, cred.Bearer(), headers, nil
}

// codexBackendPath ends the API root of the ChatGPT Codex backend
// (codex.ChatGPTBaseURL), where a ChatGPT login goes; a proxy or a test
// stand-in for that backend (Options.CodexBaseURL) keeps the path.
const codexBackendPath = "/backend-api/codex"

// requestOutputCap is the max_output_tokens a model call on m asks for:
// the model's cap, except on a Codex route to the ChatGPT Codex backend,
// which manages its own output budget and rejects the field with HTTP 400
// {"detail":"Unsupported parameter: max_output_tokens"}; there the call
// asks for none (0, which the Responses wire leaves out). An API-key Codex
// login goes to the platform API, which takes the cap like every other
// route.
func requestOutputCap(m catalog.Model) int {
	if strings.HasPrefix(m.ID, codexPrefix) && strings.HasSuffix(strings.TrimRight(m.BaseURL, "/"), codexBackendPath) {
		return 0
	}
	return m.MaxOutputTokens
}

// codexAvailable reports whether a Codex credential exists or can be
// imported, without importing it.
func (a *Agent) codexAvailable() bool {
	for _, p := range []string{filepath.Join(a.opts.Home, ".octet", "credentials", "codex.json"), filepath.Join(a.opts.Home, ".codex", "auth.json")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
