package prepare

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/auth"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/customheader"
	"octet.dev/host/runtime/internal/opfile"
	"octet.dev/host/runtime/provider"
)

// Route is a resolved model route: what a ProviderFactory needs to build a
// Provider. APIKey is the credential; never log it.
type Route struct {
	ModelID  string // catalog or inline id
	APIModel string // the model name sent to the provider
	Provider string
	Mode     string // openai-compatible | openai-responses | anthropic-messages
	BaseURL  string
	APIKey   string
	Headers  map[string]string
	// SupportsReasoning reports whether the model reasons (Responses routes
	// then carry encrypted reasoning forward).
	SupportsReasoning bool
	// AcceptsPromptCacheKey reports that the route's Chat Completions
	// endpoint is known to accept prompt_cache_key (OpenAI's own API, the
	// built-in openai entries); Responses routes always get one.
	AcceptsPromptCacheKey bool
	// Transport is the catalog entry's transport: "" or "http", or
	// "websocket" for the Responses WebSocket mode (openai-responses
	// routes of ~/.octet/models.json or the built-in catalog; inline
	// routes always use HTTP).
	Transport string
	// AudioOutput asks the route for audio output (an openai-compatible
	// route whose model declares audio among its output modalities).
	AudioOutput bool
	// ImageOutput offers the model the image_generation tool (an
	// openai-responses route whose model declares image among its output
	// modalities).
	ImageOutput bool
}

// UnsupportedModeError is what a provider factory returns for a route
// whose wire mode this build cannot serve: the run is refused as
// unsupported, not route_invalid.
type UnsupportedModeError struct{ Mode string }

func (e UnsupportedModeError) Error() string {
	return "provider_mode " + e.Mode + " is not served by this build yet"
}

// Resolved is a route resolved for a model: its catalog entry, its
// provider, and the credential and extra headers the provider sends
// (both redacted from the run's output).
type Resolved struct {
	Model   catalog.Model
	Prov    provider.Provider
	Key     string
	Headers map[string]string
}

// Defaults for a discovered model the server does not describe.
const (
	DiscoveredContextWindow = catalog.DefaultInlineContextWindow
	DiscoveredMaxOutput     = catalog.DefaultInlineMaxOutput
)

// ResolveRoute resolves model (with route, an inline route) to its catalog
// entry, its credential and its provider: an inline route, a Copilot or a
// Codex route, else the catalog (with the models live discovery found).
func ResolveRoute(ctx context.Context, cfg *Config, model string, route *InlineRoute) (Resolved, *RunError) {
	var res Resolved
	if r := route; r != nil {
		if r.BaseURL == "" {
			return res, &RunError{Code: protocol.CodeRouteInvalid, Message: "inline route fields need base_url; without base_url, model names a catalog entry and the route fields must be omitted"}
		}
		// The custom headers, names and values, are checked here and only
		// here (customheader.Check), as the provider edge checks them, so
		// that a bad header is headers_rejected, never route_invalid; the
		// catalog checks the route's other fields (catalog.InlineRoute).
		if err := customheader.Check(r.Headers); err != nil {
			return res, &RunError{Code: protocol.CodeHeadersRejected, Message: err.Error()}
		}
		m, err := catalog.InlineRoute(catalog.InlineSpec{
			Provider: r.Provider, BaseURL: r.BaseURL, Model: model, Mode: r.Mode,
			ContextWindowTokens: r.ContextWindowTokens, MaxOutputTokens: r.MaxOutputTokens,
			InputModalities: r.InputModalities, Vision: r.Vision, SupportsReasoning: r.SupportsReasoning,
		})
		if err != nil {
			return res, &RunError{Code: protocol.CodeRouteInvalid, Message: Scrub(err.Error(), r.APIKey)}
		}
		res.Model, res.Key, res.Headers = m, r.APIKey, r.Headers
	} else if name, ok := auth.CopilotName(model); ok {
		// A Copilot route carries no key: the Copilot client adds the
		// session to every request (package auth).
		m, prov, r := cfg.Copilot.Route(ctx, cfg.Auth, name)
		if r != nil {
			return res, &RunError{Code: r.Code, Message: r.Message}
		}
		res.Model, res.Prov = m, prov
		return res, nil
	} else if name, ok := strings.CutPrefix(model, auth.CodexPrefix); ok {
		m, k, h, r := auth.CodexRoute(ctx, cfg.Auth, name)
		if r != nil {
			return res, &RunError{Code: r.Code, Message: r.Message}
		}
		res.Model, res.Key, res.Headers = m, k, h
	} else {
		cat, err := catalog.Load(cfg.Home)
		if err != nil {
			return res, &RunError{Code: protocol.CodeModelNotFound, Message: "the model catalog cannot be loaded: " + err.Error()}
		}
		m, ok := cat.Lookup(model)
		if !ok {
			m, ok = discoveredRoute(cat, model)
		}
		if !ok {
			return res, &RunError{Code: protocol.CodeModelNotFound, Message: "no model " + strconv.Quote(textutil.Truncate(model, 128)) + " in the catalog; list them with the models command, or define an inline route with base_url"}
		}
		res.Model = m
		// Built-in providers always need a key; a configured provider needs
		// one when it names api_key_env (a local server may take none).
		builtin := m.Provider == catalog.ProviderOpenAI || m.Provider == catalog.ProviderAnthropic
		key, rerr := Credential(ctx, cfg, m)
		if rerr != nil {
			return res, rerr
		}
		if key == "" && (builtin || m.CredentialEnv != "") {
			return res, &RunError{Code: protocol.CodeCredentialsMissing, Message: "no API key for provider " + strconv.Quote(m.Provider) + ": set " + m.CredentialEnv + " or write ~/.octet/credentials/" + m.Provider + ".json"}
		}
		res.Key = key
	}
	prov, err := cfg.NewProvider(RouteFor(res.Model, res.Key, res.Headers))
	var unsupported UnsupportedModeError
	switch {
	case errors.As(err, &unsupported):
		return res, &RunError{Code: protocol.CodeUnsupported, Message: err.Error()}
	case err != nil:
		return res, &RunError{Code: protocol.CodeRouteInvalid, Message: Scrub(err.Error(), res.Key)}
	}
	res.Prov = prov
	return res, nil
}

// Scrub removes a credential from a message.
func Scrub(msg, key string) string {
	if len(key) >= 4 {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}

// Credential finds the API key of a catalog route: the environment
// variable, then ~/.octet/credentials/<provider>.json {"api_key": "..."}.
// The file is read as every operator file is (opfile.Read: a link
// followed, then a regular file of at most 64 KiB, opened non-blocking);
// one that is not a regular file or too large is config_invalid, naming
// it. Any other unreadable file is no key.
func Credential(ctx context.Context, cfg *Config, m catalog.Model) (string, *RunError) {
	if m.CredentialEnv != "" {
		if v := strings.TrimSpace(cfg.Getenv(m.CredentialEnv)); v != "" {
			return v, nil
		}
	}
	data, err := opfile.Read(filepath.Join(cfg.Home, ".octet", "credentials", m.Provider+".json"),
		"~/.octet/credentials/"+m.Provider+".json", opfile.CredentialLimit, opfile.Follow)
	if refused := (*opfile.Error)(nil); errors.As(err, &refused) {
		return "", &RunError{Code: protocol.CodeConfigInvalid, Message: err.Error()}
	}
	if err != nil {
		return "", nil
	}
	var c struct {
		APIKey string `json:"api_key"`
	}
	if json.Unmarshal(data, &c, json.RejectUnknownMembers(false)) != nil {
		cfg.Log.LogAttrs(ctx, slog.LevelWarn, "credentials file is not valid JSON; ignoring it", slog.String("provider", m.Provider))
		return "", nil
	}
	return strings.TrimSpace(c.APIKey), nil
}

// RouteFor is the Route the provider factory gets for model m with its
// credential and extra headers.
func RouteFor(m catalog.Model, key string, headers map[string]string) Route {
	return Route{ModelID: m.ID, APIModel: m.APIModel, Provider: m.Provider, Mode: string(m.Mode),
		BaseURL: m.BaseURL, APIKey: key, Headers: headers, SupportsReasoning: m.SupportsReasoning,
		AcceptsPromptCacheKey: AcceptsPromptCacheKey(m), Transport: m.Transport, AudioOutput: m.AudioOutput(), ImageOutput: m.ImageOutput()}
}

// AcceptsPromptCacheKey reports whether the Chat Completions endpoint of
// route m is known to accept prompt_cache_key: only OpenAI's own API, the
// built-in openai entries (a configured provider may not take that name,
// and an inline route of any name may point anywhere). Other
// OpenAI-compatible servers may refuse a member they do not know.
func AcceptsPromptCacheKey(m catalog.Model) bool {
	return !m.Inline && m.Provider == catalog.ProviderOpenAI && m.BaseURL == catalog.OpenAIBaseURL
}

// discoveredRoute resolves "provider/model" for a configured (not built-in)
// provider whose model was found by live discovery rather than listed in
// ~/.octet/models.json: the route is the provider's, the window a default.
func discoveredRoute(cat *catalog.Catalog, id string) (catalog.Model, bool) {
	prov, name, ok := strings.Cut(id, "/")
	if !ok || name == "" || prov == catalog.ProviderOpenAI || prov == catalog.ProviderAnthropic {
		return catalog.Model{}, false
	}
	for _, m := range cat.Models() {
		if m.Provider == prov && !m.Inline && m.BaseURL != "" {
			return catalog.Model{ID: id, Provider: prov, Name: name, APIModel: name, Mode: m.Mode, BaseURL: m.BaseURL,
				CredentialEnv: m.CredentialEnv, ContextWindowTokens: DiscoveredContextWindow,
				MaxOutputTokens: DiscoveredMaxOutput, InputModalities: []string{"text"}, LifecycleEvents: m.LifecycleEvents}, true
		}
	}
	return catalog.Model{}, false
}
