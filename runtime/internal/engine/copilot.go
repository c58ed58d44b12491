package engine

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
)

// The GitHub Copilot seam's public names are the façade's (runtime,
// copilot.go); the engine uses package runtime/internal/copilot directly.

// copilotPrefix selects a Copilot route: "copilot/<model>", and the alias
// "github-copilot/<model>".
const (
	copilotPrefix      = "copilot/"
	copilotAliasPrefix = "github-copilot/"
	copilotProvider    = "copilot"
)

// copilotState is the Agent's Copilot provider, built on first use.
type copilotState struct {
	once sync.Once
	prov *copilot.Provider
	file *copilot.FileHost // the default host, nil when the embedder gave one
}

// copilot returns the Agent's Copilot provider: Options.Copilot, else one
// on the file host of Options.Home.
func (a *Agent) copilot() *copilotState {
	st := &a.copilotSt
	st.once.Do(func() {
		if a.opts.Copilot != nil {
			st.prov = a.opts.Copilot
			return
		}
		st.file = &copilot.FileHost{Home: a.opts.Home, HTTPClient: a.opts.HTTPClient, Now: a.opts.Now}
		st.prov = &copilot.Provider{Host: st.file, HTTPClient: a.opts.HTTPClient, Now: a.opts.Now}
	})
	return st
}

// copilotEnabled reports whether Copilot models are to be listed: an
// embedder's provider always, the file host when a login is stored.
func (a *Agent) copilotEnabled() bool {
	st := a.copilot()
	return st.file == nil || st.file.Exists()
}

// copilotModels registers the Copilot models (online only) and returns
// their inventory entries; a failure leaves Copilot out of this listing,
// keeps the previous table, and is reported as one discovery issue.
func (a *Agent) copilotModels(ctx context.Context, cat *catalog.Catalog) ([]protocol.ModelInfo, *protocol.DiscoveryIssue) {
	if !a.copilotEnabled() {
		return nil, nil
	}
	t, err := a.copilot().prov.RegisterModels(ctx, func(id string) bool {
		_, ok := cat.Lookup(copilotPrefix + id)
		return ok
	})
	if err != nil {
		return nil, &protocol.DiscoveryIssue{Provider: copilotProvider, Code: protocol.CodeDiscoveryFailed, Message: textutil.Truncate(err.Error(), 512)}
	}
	out := make([]protocol.ModelInfo, 0, len(t.Models))
	for _, m := range t.Models {
		out = append(out, fromCatalog(copilotCatalogModel(m)))
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
	return catalog.Model{ID: copilotPrefix + m.ID, Provider: copilotProvider, Name: m.Name, APIModel: m.ID, Mode: mode,
		ContextWindowTokens: m.ContextWindowTokens, MaxOutputTokens: m.MaxOutputTokens, InputModalities: in,
		SupportsReasoning: m.Reasoning, BaseURL: copilot.DefaultInferenceOrigin}
}

// copilotRoute resolves "copilot/<model>": the model must be in the table
// (registered now when there is none yet), the session is exchanged before
// the run starts, and the provider is built on the Copilot client with the
// codec the model's protocol selects.
func (a *Agent) copilotRoute(ctx context.Context, name string) (catalog.Model, Provider, *RunError) {
	if name == "" {
		return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "a Copilot route names a model: copilot/<model>")
	}
	st := a.copilot()
	prov := st.prov
	t := prov.Table()
	if _, ok := t.Lookup(name); !ok {
		cat, err := catalog.Load(a.opts.Home)
		if err != nil {
			return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "the model catalog cannot be loaded: %s", err.Error())
		}
		var rerr error
		if t, rerr = prov.RegisterModels(ctx, func(id string) bool { _, ok := cat.Lookup(copilotPrefix + id); return ok }); rerr != nil {
			return catalog.Model{}, nil, copilotRefusal(rerr)
		}
	}
	m, ok := t.Lookup(name)
	if !ok {
		return catalog.Model{}, nil, refuse(protocol.CodeModelNotFound, "no Copilot model %s for this login; list them with the models command", strconv.Quote(textutil.Truncate(name, 128)))
	}
	s, err := prov.Session(ctx)
	if err != nil {
		return catalog.Model{}, nil, copilotRefusal(err)
	}
	cm := copilotCatalogModel(m)
	cm.BaseURL = s.API.String()
	p, err := a.copilotProvider(prov, m, cm)
	if err != nil {
		return catalog.Model{}, nil, refuse(protocol.CodeRouteInvalid, "%s", err.Error())
	}
	return cm, p, nil
}

// copilotProvider builds the codec the model's protocol selects, on the
// Copilot client; a model's name never chooses it.
func (a *Agent) copilotProvider(prov *copilot.Provider, m copilot.Model, cm catalog.Model) (Provider, error) {
	client := prov.Client()
	switch m.Protocol {
	case copilot.ProtocolOpenAiChat:
		return chat.New(chat.Config{BaseURL: cm.BaseURL, HTTPClient: client, IdleTimeout: a.opts.IdleTimeout, Now: a.opts.Now})
	case copilot.ProtocolOpenAiResponses:
		return responses.New(responses.Config{BaseURL: cm.BaseURL, HTTPClient: client, IdleTimeout: a.opts.IdleTimeout, Now: a.opts.Now, IncludeEncryptedReasoning: cm.SupportsReasoning})
	}
	return nil, errors.New("the Copilot model's protocol " + strconv.Quote(string(m.Protocol)) + " is not served: only Chat Completions and Responses are")
}

// copilotRefusal maps a login, exchange or registration failure to the
// run's refusal, with no secret in it.
func copilotRefusal(err error) *RunError {
	var xe *copilot.ExchangeError
	switch {
	case errors.Is(err, copilot.ErrNotLoggedIn), errors.Is(err, copilot.ErrLoginReplaced), errors.Is(err, copilot.ErrInvalidStore):
		return refuse(protocol.CodeCredentialsMissing, "%s", err.Error())
	case errors.As(err, &xe) && xe.Reason == copilot.ReasonCredentialInvalid:
		return refuse(protocol.CodeCredentialsMissing, "%s", err.Error())
	}
	return refuse(protocol.CodeModelNotFound, "%s", err.Error())
}

// copilotName returns the model of a "copilot/…" or "github-copilot/…" id.
func copilotName(model string) (string, bool) {
	if n, ok := strings.CutPrefix(model, copilotPrefix); ok {
		return n, true
	}
	return strings.CutPrefix(model, copilotAliasPrefix)
}
