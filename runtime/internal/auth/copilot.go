package auth

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/provider/chat"
	"octet.dev/host/runtime/internal/provider/responses"
	"octet.dev/host/runtime/provider"
)

// CopilotPrefix selects a Copilot route: "copilot/<model>", and the alias
// "github-copilot/<model>".
const (
	CopilotPrefix      = "copilot/"
	copilotAliasPrefix = "github-copilot/"
	CopilotProvider    = "copilot"
)

// Copilot is an Agent's Copilot provider, built on first use: Env.Copilot,
// else one on the file host of Env.Home. The zero value is ready; every
// call gives the same Env.
type Copilot struct {
	once sync.Once
	prov *copilot.Provider
	file *copilot.FileHost // the default host, nil when the embedder gave one
}

func (c *Copilot) init(env Env) {
	c.once.Do(func() {
		if env.Copilot != nil {
			c.prov = env.Copilot
			return
		}
		c.file = &copilot.FileHost{Home: env.Home, HTTPClient: env.HTTPClient, Now: env.Now}
		c.prov = copilot.NewGitHubProvider(c.file, env.HTTPClient, env.Now)
	})
}

// Enabled reports whether Copilot models are to be listed: an embedder's
// provider always, the file host when a login is stored.
func (c *Copilot) Enabled(env Env) bool {
	c.init(env)
	return c.file == nil || c.file.Exists()
}

// Models registers the Copilot models (online only) and returns their
// catalog form; a failure leaves Copilot out of this listing, keeps the
// previous table, and is reported as one discovery issue.
func (c *Copilot) Models(ctx context.Context, env Env, cat *catalog.Catalog) ([]catalog.Model, *protocol.DiscoveryIssue) {
	if !c.Enabled(env) {
		return nil, nil
	}
	t, err := c.prov.RegisterModels(ctx, func(id string) bool {
		_, ok := cat.Lookup(CopilotPrefix + id)
		return ok
	})
	if err != nil {
		return nil, &protocol.DiscoveryIssue{Provider: CopilotProvider, Code: protocol.CodeDiscoveryFailed, Message: textutil.Truncate(err.Error(), 512)}
	}
	out := make([]catalog.Model, 0, len(t.Models))
	for _, m := range t.Models {
		out = append(out, copilotCatalogModel(m))
	}
	return out, nil
}

// copilotCatalogModel is the catalog form of a Copilot model (no
// credential in it).
func copilotCatalogModel(m copilot.Model) catalog.Model {
	mode := catalog.ModeOpenAICompatible
	if m.Protocol == copilot.ProtocolOpenAiResponses {
		mode = catalog.ModeOpenAIResponses
	}
	in := []string{"text"}
	if m.Vision {
		in = append(in, "image")
	}
	return catalog.Model{ID: CopilotPrefix + m.ID, Provider: CopilotProvider, Name: m.Name, APIModel: m.ID, Mode: mode,
		ContextWindowTokens: m.ContextWindowTokens, MaxOutputTokens: m.MaxOutputTokens, InputModalities: in,
		SupportsReasoning: m.Reasoning, BaseURL: copilot.DefaultInferenceOrigin}
}

// Route resolves "copilot/<model>": the model must be in the table
// (registered now when there is none yet), the session is exchanged before
// the run starts, and the provider is built on the Copilot client with the
// codec the model's protocol selects.
func (c *Copilot) Route(ctx context.Context, env Env, name string) (catalog.Model, provider.Provider, *Refusal) {
	if name == "" {
		return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "a Copilot route names a model: copilot/<model>")
	}
	c.init(env)
	prov := c.prov
	t := prov.Table()
	if _, ok := t.Lookup(name); !ok {
		cat, err := catalog.Load(env.Home)
		if err != nil {
			return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "the model catalog cannot be loaded: "+err.Error())
		}
		var rerr error
		if t, rerr = prov.RegisterModels(ctx, func(id string) bool { _, ok := cat.Lookup(CopilotPrefix + id); return ok }); rerr != nil {
			return catalog.Model{}, nil, copilotRefusal(rerr)
		}
	}
	m, ok := t.Lookup(name)
	if !ok {
		return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "no Copilot model "+strconv.Quote(textutil.Truncate(name, 128))+" for this login; list them with the models command")
	}
	s, err := prov.Session(ctx)
	if err != nil {
		return catalog.Model{}, nil, copilotRefusal(err)
	}
	cm := copilotCatalogModel(m)
	cm.BaseURL = s.API.String()
	p, err := copilotCodec(env, prov, m, cm)
	if err != nil {
		return catalog.Model{}, nil, refuse(protocol.CodeRouteInvalid, err.Error())
	}
	return cm, p, nil
}

// copilotCodec builds the codec the model's protocol selects, on the
// Copilot client; a model's name never chooses it.
func copilotCodec(env Env, prov *copilot.Provider, m copilot.Model, cm catalog.Model) (provider.Provider, error) {
	client := prov.Client()
	switch m.Protocol {
	case copilot.ProtocolOpenAiChat:
		return chat.New(chat.Config{BaseURL: cm.BaseURL, HTTPClient: client, IdleTimeout: env.IdleTimeout, Now: env.Now})
	case copilot.ProtocolOpenAiResponses:
		return responses.New(responses.Config{BaseURL: cm.BaseURL, HTTPClient: client, IdleTimeout: env.IdleTimeout, Now: env.Now, IncludeEncryptedReasoning: cm.SupportsReasoning})
	}
	return nil, errors.New("the Copilot model's protocol " + strconv.Quote(string(m.Protocol)) + " is not served: only Chat Completions and Responses are")
}

// copilotRefusal maps a login, exchange or registration failure to the
// run's refusal, with no secret in it.
func copilotRefusal(err error) *Refusal {
	var xe *copilot.ExchangeError
	switch {
	case errors.Is(err, copilot.ErrNotLoggedIn), errors.Is(err, copilot.ErrLoginReplaced), errors.Is(err, copilot.ErrInvalidStore):
		return refuse(protocol.CodeCredentialsMissing, err.Error())
	case errors.As(err, &xe) && xe.Reason == copilot.ReasonCredentialInvalid:
		return refuse(protocol.CodeCredentialsMissing, err.Error())
	}
	return refuse(protocol.CodeModelNotFound, err.Error())
}

// CopilotName returns the model of a "copilot/…" or "github-copilot/…" id.
func CopilotName(model string) (string, bool) {
	if n, ok := strings.CutPrefix(model, CopilotPrefix); ok {
		return n, true
	}
	return strings.CutPrefix(model, copilotAliasPrefix)
}
