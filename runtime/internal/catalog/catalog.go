package catalog

import (
	"strings"
)

// Catalog is the set of routes known without a run request: the built-in
// models plus the models configured in ~/.octet/models.json. It is immutable
// once built.
type Catalog struct {
	models []Model         // sorted by provider, then ID
	byID   map[string]int  // ID -> index in models
	byPair map[pairKey]int // provider and API model -> index in models
}

type pairKey struct{ provider, apiModel string }

// newCatalog returns a catalog of the built-in models and the given
// configured models. IDs and provider/model pairs must be unique and no ID
// may start with "inline-"; Load guarantees this, so a violation is a bug and
// newCatalog panics.
func newCatalog(extra []Model) *Catalog {
	ms := Builtin()
	for _, m := range extra {
		ms = append(ms, m.clone())
	}
	sortModels(ms)
	c := &Catalog{
		models: ms,
		byID:   make(map[string]int, len(ms)),
		byPair: make(map[pairKey]int, len(ms)),
	}
	for i, m := range ms {
		pair := pairKey{m.Provider, m.APIModel}
		_, dupID := c.byID[m.ID]
		_, dupPair := c.byPair[pair]
		if dupID || dupPair || strings.HasPrefix(m.ID, InlineIDPrefix) {
			panic("catalog: invalid or duplicate model " + m.Provider + "/" + m.ID)
		}
		c.byID[m.ID] = i
		c.byPair[pair] = i
	}
	return c
}

// Models returns a copy of every model in the catalog, sorted by provider and
// then by ID.
func (c *Catalog) Models() []Model {
	out := make([]Model, len(c.models))
	for i, m := range c.models {
		out[i] = m.clone()
	}
	return out
}

// Lookup finds a model by its catalog ID (a built-in's bare ID, or a
// configured model's listed ID) or by "provider/model", where model is the
// name sent to the provider. It returns a copy.
func (c *Catalog) Lookup(id string) (Model, bool) {
	if i, ok := c.byID[id]; ok {
		return c.models[i].clone(), true
	}
	provider, apiModel, ok := strings.Cut(id, "/")
	if !ok || provider == "" || apiModel == "" {
		return Model{}, false
	}
	if i, ok := c.byPair[pairKey{provider, apiModel}]; ok {
		return c.models[i].clone(), true
	}
	return Model{}, false
}
