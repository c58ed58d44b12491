package engine

import (
	"cmp"
	"context"
	"slices"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/discovery"
	"octet.dev/host/runtime/internal/prepare"
)

// models builds the inventory from the built-in catalog and
// ~/.octet/models.json. Unless offline, it also lists the live models of
// the configured OpenAI-compatible endpoints (GET /models, 2 s each);
// failures come back as issues and never fail the command (CONTRACT §7).
// offline:true never touches the network.
func (a *Agent) models(ctx context.Context, offline bool) ([]protocol.ModelInfo, []protocol.DiscoveryIssue, error) {
	cat, err := catalog.Load(a.opts.Home)
	if err != nil {
		return nil, nil, err
	}
	ms := cat.Models()
	out := make([]protocol.ModelInfo, 0, len(ms))
	known := map[[2]string]bool{}
	for _, m := range ms {
		out = append(out, fromCatalog(m))
		known[[2]string{m.Provider, m.APIModel}] = true
	}
	// With a Codex login present, the OpenAI Responses models are listed
	// a second time as codex/<model> (no import happens here).
	if a.codexAvailable() {
		for _, m := range ms {
			if m.Provider == catalog.ProviderOpenAI && m.Mode == catalog.ModeOpenAIResponses {
				cm := fromCatalog(m)
				cm.ID, cm.Provider, cm.Cost = codexPrefix+m.APIModel, "codex", nil
				out = append(out, cm)
			}
		}
	}
	if offline {
		return out, nil, nil
	}
	// Copilot models join the online inventory (copilot.go); a failure
	// leaves them out and is one issue.
	cms, cissue := a.copilotModels(ctx, cat)
	out = append(out, cms...)
	cfg := a.prepareConfig()
	eps := discovery.FromCatalog(ms, func(m catalog.Model) string { k, _ := prepare.Credential(ctx, &cfg, m); return k })
	if len(eps) == 0 {
		if cissue != nil {
			return out, []protocol.DiscoveryIssue{*cissue}, nil
		}
		return out, nil, nil
	}
	modes := map[string]string{}
	for _, m := range ms {
		modes[m.Provider] = string(m.Mode)
	}
	found, problems := discovery.Discover(ctx, a.opts.HTTPClient, eps, 0)
	catalogued := len(out)
	for _, d := range found {
		if known[[2]string{d.Provider, d.ID}] {
			continue // already configured, with its own figures
		}
		window := d.ContextWindowTokens
		if window <= 0 {
			window = prepare.DiscoveredContextWindow
		}
		out = append(out, protocol.ModelInfo{
			ID: d.Provider + "/" + d.ID, Provider: d.Provider, Name: d.ID, ProviderMode: modes[d.Provider],
			ContextWindowTokens: window, MaxOutputTokens: min(prepare.DiscoveredMaxOutput, window),
			InputModalities: []string{"text"},
		})
	}
	out, trimmed := fitInventory(out, catalogued, len(eps))
	var issues []protocol.DiscoveryIssue
	if cissue != nil {
		issues = append(issues, *cissue)
	}
	for _, p := range problems {
		if p.Code == protocol.CodeDiscoveryTruncated {
			trimmed[p.Provider] += p.Omitted
			continue
		}
		issues = append(issues, protocol.DiscoveryIssue{Provider: p.Provider, Code: p.Code, Message: p.Message})
	}
	for provider, n := range trimmed {
		issues = append(issues, protocol.DiscoveryIssue{Provider: provider, Code: protocol.CodeDiscoveryTruncated, Message: discovery.TruncatedMessage(n)})
	}
	slices.SortStableFunc(issues, func(a, b protocol.DiscoveryIssue) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Code, b.Code))
	})
	return out, issues, nil
}

func fromCatalog(m catalog.Model) protocol.ModelInfo {
	out := protocol.ModelInfo{
		ID:                  m.ID,
		Provider:            m.Provider,
		Name:                m.Name,
		ProviderMode:        string(m.Mode),
		ContextWindowTokens: m.ContextWindowTokens,
		MaxOutputTokens:     m.MaxOutputTokens,
		InputModalities:     m.EffectiveModalities(),
		Vision:              m.Vision(),
		Audio:               m.Audio(),
		SupportsReasoning:   m.SupportsReasoning,
	}
	if m.Cost != nil {
		c := *m.Cost // a copy: the inventory never shares the catalog's values
		out.Cost = &c
	}
	return out
}
