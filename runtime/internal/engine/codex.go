package engine

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

// codexPrefix selects a Codex route: "codex/<model>" runs <model> on the
// Responses wire with the Codex CLI's login (CONTRACT §11).
const codexPrefix = "codex/"

// codexRoute resolves "codex/<name>": the credential is imported from
// ~/.codex/auth.json on first use into ~/.octet/credentials/codex.json
// (mode 0600, under a cross-process lock; the source is never modified) and
// refreshed under the same lock when it is about to expire, or when the
// provider refuses it during the run (driver.reauthCodex). A ChatGPT login
// goes to the Codex backend with its account header; an API key to the
// OpenAI API.
func (a *Agent) codexRoute(ctx context.Context, name string) (catalog.Model, string, map[string]string, *RunError) {
	if name == "" {
		return catalog.Model{}, "", nil, refuse(protocol.CodeModelNotFound, "a Codex route names a model: codex/<model>")
	}
	st := a.codexStore()
	cred, err := st.Credential(ctx)
	var nc *codex.NoCredentialError
	switch {
	case errors.As(err, &nc):
		return catalog.Model{}, "", nil, refuse(protocol.CodeCredentialsMissing, "no Codex credential: %s", nc.Reason)
	case err != nil:
		return catalog.Model{}, "", nil, refuse(protocol.CodeCredentialsMissing, "the Codex credential could not be used: %s", err.Error())
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
	m.BaseURL = codex.APIBaseURL
	if cred.APIKey == "" {
		m.BaseURL = codex.ChatGPTBaseURL
	}
	if a.opts.CodexBaseURL != "" {
		m.BaseURL = a.opts.CodexBaseURL
	}
	return m, cred.Bearer(), codexHeaders(cred), nil
}

// codexStore is the store of the host's Codex credential, shared through
// its lock with every other run and process on the same home directory.
func (a *Agent) codexStore() codex.Store {
	return codex.Store{Home: a.opts.Home, Now: a.opts.Now, HTTPClient: a.opts.HTTPClient, TokenURL: a.opts.CodexTokenURL}
}

// codexHeaders returns the headers a Codex route sends besides the
// credential: a ChatGPT login's account header, when the login has one.
func codexHeaders(cred codex.Credential) map[string]string {
	if cred.APIKey != "" || cred.AccountID == "" {
		return nil
	}
	return map[string]string{codex.AccountIDHeader: cred.AccountID}
}

// isCodexRoute reports whether m is a "codex/<model>" route, whose
// credential this host owns and can refresh. An inline route never is,
// whatever it is named: its api_key is the request's.
func isCodexRoute(m catalog.Model) bool {
	return !m.Inline && m.Provider == "codex" && strings.HasPrefix(m.ID, codexPrefix)
}

// reauthCodex answers a model call that failed with err. When the call was
// refused with HTTP 401 on a Codex route, and the step has not refreshed
// its credential yet, it refreshes the credential under the cross-process
// lock, even though it is not near expiry (a token revoked, or rotated by
// another login, is refused long before its exp), rebuilds the route's
// provider with the new Authorization header, and reports that the call is
// to be made once more. Otherwise it returns false and err, with the
// refresh's failure added when one was tried.
//
// The repeated call is not a recovery attempt: a 401 is answered before
// the model runs, so nothing was billed or streamed, and the retry budget
// and provider_retry are left to failures recovery classifies. It emits no
// event either: the protocol has none for a credential refresh, and the
// consumer has nothing to discard or reconcile; it is logged at info
// instead. The log, like the error, names no key or token.
func (d *driver) reauthCodex(ctx context.Context, step int, err error) (bool, error) {
	var pe *provider.Error
	if !isCodexRoute(d.p.model) || d.reauthed == step || !errors.As(err, &pe) ||
		pe.Kind != provider.FailHTTPStatus || pe.Status != http.StatusUnauthorized {
		return false, err
	}
	d.reauthed = step // once per step: a refreshed credential refused again ends the turn
	log := d.a.log.With(slog.String("run_id", d.p.req.RunID), slog.Int("step", step), slog.String("model", d.p.model.ID))
	st := d.a.codexStore()
	cred, rerr := st.Refresh(ctx, codex.Credential{AccessToken: d.p.key})
	if rerr == nil && cred.Bearer() == d.p.key {
		// Nothing new to send: an API-key login has nothing to refresh.
		rerr = errors.New("the credential is an API key, which cannot be refreshed")
	}
	var prov Provider
	if rerr == nil {
		// The route as prepare built it, with the new credential.
		prov, rerr = d.a.opts.ProviderFactory(routeFor(d.p.model, cred.Bearer(), codexHeaders(cred)))
	}
	if rerr != nil {
		msg := scrub(scrub(rerr.Error(), d.p.key), cred.Bearer())
		log.LogAttrs(ctx, slog.LevelWarn, "the provider refused the Codex credential (HTTP 401), and refreshing it failed", slog.String("error", msg))
		failed := *pe
		failed.Message += "; refreshing the Codex credential failed: " + msg
		return false, &failed
	}
	d.p.prov, d.p.key = prov, cred.Bearer()
	d.p.red.add(cred.Bearer())
	for _, v := range codexHeaders(cred) {
		d.p.red.add(v)
	}
	log.LogAttrs(ctx, slog.LevelInfo, "the provider refused the Codex credential (HTTP 401); it was refreshed, and the call is made once more")
	return true, nil
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
