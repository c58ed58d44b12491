package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/codex"
	"octet.dev/host/runtime/provider"
)

// CodexPrefix selects a Codex route: "codex/<model>" runs <model> on the
// Responses wire with the Codex CLI's login (CONTRACT §11).
const CodexPrefix = "codex/"

// CodexRoute resolves "codex/<name>": the credential is imported from
// ~/.codex/auth.json on first use into ~/.octet/credentials/codex.json
// (mode 0600, under a cross-process lock; the source is never modified) and
// refreshed under the same lock when it is about to expire, or when the
// provider refuses it during the run (RefreshCodex). A ChatGPT login goes
// to the Codex backend with its account header; an API key to the OpenAI
// API. It returns the model, the bearer and the extra headers.
func CodexRoute(ctx context.Context, env Env, name string) (catalog.Model, string, map[string]string, *Refusal) {
	if name == "" {
		return catalog.Model{}, "", nil, refuse(protocol.CodeModelNotFound, "a Codex route names a model: codex/<model>")
	}
	st := env.CodexStore()
	cred, err := st.Credential(ctx)
	var nc *codex.NoCredentialError
	switch {
	case errors.As(err, &nc):
		return catalog.Model{}, "", nil, refuse(protocol.CodeCredentialsMissing, "no Codex credential: "+nc.Reason)
	case err != nil:
		return catalog.Model{}, "", nil, refuse(protocol.CodeCredentialsMissing, "the Codex credential could not be used: "+err.Error())
	}
	m := catalog.Model{ID: CodexPrefix + name, Provider: "codex", Name: name, APIModel: name, Mode: catalog.ModeOpenAIResponses,
		ContextWindowTokens: catalog.DefaultInlineContextWindow, MaxOutputTokens: catalog.DefaultInlineMaxOutput,
		InputModalities: []string{"text"}, SupportsReasoning: true}
	if cat, err := catalog.Load(env.Home); err == nil {
		if known, ok := cat.Lookup(name); ok && known.Provider == catalog.ProviderOpenAI {
			m.Name, m.ContextWindowTokens, m.MaxOutputTokens = known.Name, known.ContextWindowTokens, known.MaxOutputTokens
			m.InputModalities, m.SupportsReasoning, m.Cost = known.InputModalities, known.SupportsReasoning, known.Cost
		}
	}
	m.BaseURL = codex.APIBaseURL
	if cred.APIKey == "" {
		m.BaseURL = codex.ChatGPTBaseURL
	}
	if env.CodexBaseURL != "" {
		m.BaseURL = env.CodexBaseURL
	}
	return m, cred.Bearer(), CodexHeaders(cred), nil
}

// CodexStore is the store of the host's Codex credential, shared through
// its lock with every other run and process on the same home directory.
func (env Env) CodexStore() codex.Store {
	return codex.Store{Home: env.Home, Now: env.Now, HTTPClient: env.HTTPClient, TokenURL: env.CodexTokenURL}
}

// CodexHeaders returns the headers a Codex route sends besides the
// credential: a ChatGPT login's account header, when the login has one.
func CodexHeaders(cred codex.Credential) map[string]string {
	if cred.APIKey != "" || cred.AccountID == "" {
		return nil
	}
	return map[string]string{codex.AccountIDHeader: cred.AccountID}
}

// IsCodexRoute reports whether m is a "codex/<model>" route, whose
// credential this host owns and can refresh. An inline route never is,
// whatever it is named: its api_key is the request's.
func IsCodexRoute(m catalog.Model) bool {
	return !m.Inline && m.Provider == "codex" && strings.HasPrefix(m.ID, CodexPrefix)
}

// CodexUnauthorized reports whether err, from a model call on m, is the
// provider refusing a Codex route's credential with HTTP 401.
func CodexUnauthorized(m catalog.Model, err error) bool {
	var pe *provider.Error
	return IsCodexRoute(m) && errors.As(err, &pe) && pe.Kind == provider.FailHTTPStatus && pe.Status == http.StatusUnauthorized
}

// Refreshed is a Codex route's refreshed credential: the provider rebuilt
// with it, the new bearer, and every secret the redactor is to learn.
type Refreshed struct {
	Provider provider.Provider
	Key      string
	Secrets  []string
}

// RefreshCodex answers a model call on m (sent with key) that the provider
// refused with HTTP 401 (err, CodexUnauthorized): it refreshes the
// credential under the cross-process lock, even though it is not near
// expiry (a token revoked, or rotated by another login, is refused long
// before its exp), and rebuilds the route's provider with build, given the
// new bearer and headers. On failure it returns err with the refresh's
// failure added. The caller allows one refresh per step.
//
// The repeated call is not a recovery attempt: a 401 is answered before
// the model runs, so nothing was billed or streamed. No event is emitted
// (the protocol has none for a credential refresh); it is logged on log at
// info instead. The log, like the error, names no key or token.
func RefreshCodex(ctx context.Context, env Env, log *slog.Logger, key string, err error,
	build func(bearer string, headers map[string]string) (provider.Provider, error)) (*Refreshed, error) {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return nil, err
	}
	st := env.CodexStore()
	cred, rerr := st.Refresh(ctx, codex.Credential{AccessToken: key})
	if rerr == nil && cred.Bearer() == key {
		// Nothing new to send: an API-key login has nothing to refresh.
		rerr = errors.New("the credential is an API key, which cannot be refreshed")
	}
	var prov provider.Provider
	if rerr == nil {
		// The route as prepare built it, with the new credential.
		prov, rerr = build(cred.Bearer(), CodexHeaders(cred))
	}
	if rerr != nil {
		msg := scrub(scrub(rerr.Error(), key), cred.Bearer())
		log.LogAttrs(ctx, slog.LevelWarn, "the provider refused the Codex credential (HTTP 401), and refreshing it failed", slog.String("error", msg))
		failed := *pe
		failed.Message += "; refreshing the Codex credential failed: " + msg
		return nil, &failed
	}
	r := &Refreshed{Provider: prov, Key: cred.Bearer(), Secrets: []string{cred.Bearer()}}
	for _, v := range CodexHeaders(cred) {
		r.Secrets = append(r.Secrets, v)
	}
	log.LogAttrs(ctx, slog.LevelInfo, "the provider refused the Codex credential (HTTP 401); it was refreshed, and the call is made once more")
	return r, nil
}

// codexBackendPath ends the API root of the ChatGPT Codex backend
// (codex.ChatGPTBaseURL), where a ChatGPT login goes; a proxy or a test
// stand-in for that backend (Env.CodexBaseURL) keeps the path.
const codexBackendPath = "/backend-api/codex"

// OutputCap is the max_output_tokens a model call on m asks for: the
// model's cap, except on a Codex route to the ChatGPT Codex backend, which
// manages its own output budget and rejects the field with HTTP 400
// {"detail":"Unsupported parameter: max_output_tokens"}; there the call
// asks for none (0, which the Responses wire leaves out). An API-key Codex
// login goes to the platform API, which takes the cap like every other
// route.
func OutputCap(m catalog.Model) int {
	if strings.HasPrefix(m.ID, CodexPrefix) && strings.HasSuffix(strings.TrimRight(m.BaseURL, "/"), codexBackendPath) {
		return 0
	}
	return m.MaxOutputTokens
}

// CodexAvailable reports whether a Codex credential exists under home or
// can be imported, without importing it.
func CodexAvailable(home string) bool {
	for _, p := range []string{filepath.Join(home, ".octet", "credentials", "codex.json"), filepath.Join(home, ".codex", "auth.json")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
