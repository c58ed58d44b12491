package runtime

import (
	"context"

	"octet.dev/host/runtime/internal/catalog"
)

// models builds the inventory from the built-in catalog and
// ~/.octet/models.json. Live discovery of configured endpoints is not done
// yet, so offline changes nothing today; it is accepted so that callers can
// already ask for it (CONTRACT §7).
func (a *Agent) models(_ context.Context, _ bool) ([]Model, []DiscoveryIssue, error) {
	cat, err := catalog.Load(a.opts.Home)
	if err != nil {
		return nil, nil, err
	}
	ms := cat.Models()
	out := make([]Model, 0, len(ms))
	for _, m := range ms {
		out = append(out, fromCatalog(m))
	}
	return out, nil, nil
}

func fromCatalog(m catalog.Model) Model {
	out := Model{
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
		out.Cost = &Cost{Input: m.Cost.Input, Output: m.Cost.Output, CacheRead: m.Cost.CacheRead, CacheWrite: m.Cost.CacheWrite, Currency: m.Cost.Currency}
	}
	return out
}
