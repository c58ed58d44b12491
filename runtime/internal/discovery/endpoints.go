package discovery

import (
	"cmp"
	"slices"

	"octet.dev/host/runtime/internal/catalog"
)

// FromCatalog returns the endpoints to list for the configured providers
// among models (normally catalog.Catalog.Models): one per provider that is
// neither built-in ("openai", "anthropic") nor inline and that speaks an
// OpenAI wire mode (openai-compatible or openai-responses; Anthropic Messages
// servers have no OpenAI model list). key resolves a provider's API key from
// one of its models (the environment variable named by CredentialEnv, a
// credentials file, ...); it is called once per provider and may be nil,
// which means no key. The result is sorted by provider.
//
// The catalog has no list of providers of its own: a provider is known
// through its models, so a configured provider with an empty "models" list
// is not found here.
func FromCatalog(models []catalog.Model, key func(catalog.Model) string) []Endpoint {
	seen := make(map[string]bool)
	var out []Endpoint
	for _, m := range models {
		if m.Inline || m.Provider == catalog.ProviderOpenAI || m.Provider == catalog.ProviderAnthropic ||
			m.BaseURL == "" || seen[m.Provider] {
			continue
		}
		if m.Mode != catalog.ModeOpenAICompatible && m.Mode != catalog.ModeOpenAIResponses {
			continue
		}
		seen[m.Provider] = true
		ep := Endpoint{Provider: m.Provider, BaseURL: m.BaseURL}
		if key != nil {
			ep.APIKey = key(m)
		}
		out = append(out, ep)
	}
	slices.SortStableFunc(out, func(a, b Endpoint) int { return cmp.Compare(a.Provider, b.Provider) })
	return out
}
