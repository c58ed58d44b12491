package engine

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
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/customheader"
	"octet.dev/host/runtime/internal/opfile"
)

func (a *Agent) resolveRoute(ctx context.Context, p *prepared) *RunError {
	req := p.req
	key := ""
	var headers map[string]string
	if r := req.Route; r != nil {
		if r.BaseURL == "" {
			return refuse(protocol.CodeRouteInvalid, "inline route fields need base_url; without base_url, model names a catalog entry and the route fields must be omitted")
		}
		// Values are checked here as the provider edge checks them, so
		// that a bad header is headers_rejected, never route_invalid.
		if err := customheader.Check(r.Headers); err != nil {
			return refuse(protocol.CodeHeadersRejected, "%s", err.Error())
		}
		m, err := catalog.InlineRoute(catalog.InlineSpec{
			Provider: r.Provider, BaseURL: r.BaseURL, Model: req.Model, Mode: r.Mode,
			ContextWindowTokens: r.ContextWindowTokens, MaxOutputTokens: r.MaxOutputTokens,
			InputModalities: r.InputModalities, Vision: r.Vision, SupportsReasoning: r.SupportsReasoning,
		})
		if err != nil {
			return refuse(protocol.CodeRouteInvalid, "%s", scrub(err.Error(), r.APIKey))
		}
		p.model, key = m, r.APIKey
		headers = r.Headers
	} else if name, ok := copilotName(req.Model); ok {
		// A Copilot route carries no key: the Copilot client adds the
		// session to every request (copilot.go).
		m, prov, err := a.copilotRoute(ctx, name)
		if err != nil {
			return err
		}
		p.model, p.prov, p.key, p.red = m, prov, "", newRedactor("", nil)
		return nil
	} else if name, ok := strings.CutPrefix(req.Model, codexPrefix); ok {
		m, k, h, err := a.codexRoute(ctx, name)
		if err != nil {
			return err
		}
		p.model, key, headers = m, k, h
	} else {
		cat, err := catalog.Load(a.opts.Home)
		if err != nil {
			return refuse(protocol.CodeModelNotFound, "the model catalog cannot be loaded: %s", err.Error())
		}
		m, ok := cat.Lookup(req.Model)
		if !ok {
			m, ok = discoveredRoute(cat, req.Model)
		}
		if !ok {
			return refuse(protocol.CodeModelNotFound, "no model %s in the catalog; list them with the models command, or define an inline route with base_url", strconv.Quote(textutil.Truncate(req.Model, 128)))
		}
		p.model = m
		// Built-in providers always need a key; a configured provider needs
		// one when it names api_key_env (a local server may take none).
		builtin := m.Provider == catalog.ProviderOpenAI || m.Provider == catalog.ProviderAnthropic
		var rerr *RunError
		if key, rerr = a.credential(ctx, m); rerr != nil {
			return rerr
		}
		if key == "" && (builtin || m.CredentialEnv != "") {
			return refuse(protocol.CodeCredentialsMissing, "no API key for provider %s: set %s or write ~/.octet/credentials/%s.json", strconv.Quote(m.Provider), m.CredentialEnv, m.Provider)
		}
	}
	prov, err := a.opts.ProviderFactory(routeFor(p.model, key, headers))
	var unsupported errUnsupportedMode
	switch {
	case errors.As(err, &unsupported):
		return refuse(protocol.CodeUnsupported, "%s", err.Error())
	case err != nil:
		return refuse(protocol.CodeRouteInvalid, "%s", scrub(err.Error(), key))
	}
	p.prov, p.key, p.red = prov, key, newRedactor(key, headers)
	return nil
}

// scrub removes a credential from a message.
func scrub(msg, key string) string {
	if len(key) >= 4 {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}

// credential finds the API key of a catalog route: the environment
// variable, then ~/.octet/credentials/<provider>.json {"api_key": "..."}.
// The file is read as every operator file is (opfile.Read: a link
// followed, then a regular file of at most 64 KiB, opened non-blocking);
// one that is not a regular file or too large is config_invalid, naming
// it. Any other unreadable file is no key.
func (a *Agent) credential(ctx context.Context, m catalog.Model) (string, *RunError) {
	if m.CredentialEnv != "" {
		if v := strings.TrimSpace(a.opts.Getenv(m.CredentialEnv)); v != "" {
			return v, nil
		}
	}
	data, err := opfile.Read(filepath.Join(a.opts.Home, ".octet", "credentials", m.Provider+".json"),
		"~/.octet/credentials/"+m.Provider+".json", opfile.CredentialLimit, opfile.Follow)
	if refused := (*opfile.Error)(nil); errors.As(err, &refused) {
		return "", refuse(protocol.CodeConfigInvalid, "%s", err.Error())
	}
	if err != nil {
		return "", nil
	}
	var c struct {
		APIKey string `json:"api_key"`
	}
	if json.Unmarshal(data, &c, json.RejectUnknownMembers(false)) != nil {
		a.log.LogAttrs(ctx, slog.LevelWarn, "credentials file is not valid JSON; ignoring it", slog.String("provider", m.Provider))
		return "", nil
	}
	return strings.TrimSpace(c.APIKey), nil
}

// routeFor is the Route the provider factory gets for model m with its
// credential and extra headers.
func routeFor(m catalog.Model, key string, headers map[string]string) Route {
	return Route{ModelID: m.ID, APIModel: m.APIModel, Provider: m.Provider, Mode: string(m.Mode),
		BaseURL: m.BaseURL, APIKey: key, Headers: headers, SupportsReasoning: m.SupportsReasoning,
		AcceptsPromptCacheKey: acceptsPromptCacheKey(m), Transport: m.Transport, AudioOutput: m.AudioOutput(), ImageOutput: m.ImageOutput()}
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
				CredentialEnv: m.CredentialEnv, ContextWindowTokens: discoveredContextWindow,
				MaxOutputTokens: discoveredMaxOutput, InputModalities: []string{"text"}, LifecycleEvents: m.LifecycleEvents}, true
		}
	}
	return catalog.Model{}, false
}
