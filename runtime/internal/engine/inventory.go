package engine

import (
	"octet.dev/host/protocol"

	"cmp"
	"slices"
	"strings"

	"octet.dev/host/runtime/internal/discovery"
)

// maxInventoryBytes bounds the JSON of the model inventory: the host sends
// it as one models event, a protocol frame of at most 1 MiB (CONTRACT §3).
// The rest of the frame is left for the envelope.
const maxInventoryBytes = 1<<20 - 32<<10

// modelJSONBound is at least the size of m in the models event: the
// members with their largest numbers (20 digits for an integer, 24
// characters for a price), and each string at its largest escaped size.
func modelJSONBound(m protocol.ModelInfo) int {
	n := 177 + 2*20 + jsonStringBound(m.ID) + jsonStringBound(m.Provider) + jsonStringBound(m.Name) + jsonStringBound(m.ProviderMode)
	for _, x := range m.InputModalities {
		n += jsonStringBound(x) + 3
	}
	if m.Cost != nil {
		n += 71 + 4*24 + jsonStringBound(m.Cost.Currency)
	}
	return n
}

// jsonStringBound is at least the bytes s takes inside a JSON string, for
// any usual encoder: a quote or backslash is escaped in 2, a control
// character (or, by an HTML-safe encoder, '<', '>', '&') in 6 (\u00XX), and
// a non-ASCII byte takes at most 3 (an invalid one becomes U+FFFD; an
// escaped U+2028 is 6 bytes for 3).
func jsonStringBound(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&':
			n += 6
		case c >= 0x80:
			n += 3
		default:
			n++
		}
	}
	return n
}

// issueJSONBound is at least the size of a discovery issue of provider
// (its code is one of discovery's, none longer than CodeTruncated).
func issueJSONBound(provider string) int {
	return 48 + jsonStringBound(provider) + len(protocol.CodeDiscoveryTruncated) + 3*discovery.MaxMessageBytes
}

// fitInventory keeps the inventory within maxInventoryBytes, leaving out
// discovered models (out[catalogued:], sorted by provider) when it must:
// each provider gets an equal share of the room the catalog and the
// discovery issues (one per endpoint, of endpoints) leave, and a provider
// that needs less leaves the rest to the others; each keeps the first
// models of its list. It returns the kept inventory, in order, and how many
// models of each provider were left out.
func fitInventory(out []protocol.ModelInfo, catalogued, endpoints int) ([]protocol.ModelInfo, map[string]int) {
	omitted := map[string]int{}
	room := maxInventoryBytes
	for _, m := range out[:catalogued] {
		room -= modelJSONBound(m)
	}
	type group struct {
		provider   string
		start, end int
		size       int
	}
	var groups []group
	total := 0
	for i, m := range out[catalogued:] {
		i += catalogued
		size := modelJSONBound(m)
		total += size
		if n := len(groups); n > 0 && groups[n-1].provider == m.Provider {
			groups[n-1].end, groups[n-1].size = i+1, groups[n-1].size+size
			continue
		}
		groups = append(groups, group{provider: m.Provider, start: i, end: i + 1, size: size})
	}
	for _, g := range groups {
		room -= issueJSONBound(g.provider)
	}
	// An endpoint with no model listed may have an issue too; provider
	// names are at most 64 bytes of ASCII letters, digits, '-', '_', '.'.
	room -= max(endpoints-len(groups), 0) * issueJSONBound(strings.Repeat("x", 64))
	if total <= room {
		return out, omitted
	}
	room = max(room, 0)
	// Water-filling: the smallest lists first, each within its share.
	order := slices.Clone(groups)
	slices.SortStableFunc(order, func(a, b group) int { return cmp.Compare(a.size, b.size) })
	keep := map[string]int{} // models kept per provider
	for i, g := range order {
		share := room / (len(order) - i)
		used, n := 0, 0
		for _, m := range out[g.start:g.end] {
			size := modelJSONBound(m)
			if used+size > share {
				break
			}
			used += size
			n++
		}
		keep[g.provider] = n
		room -= used
		if left := g.end - g.start - n; left > 0 {
			omitted[g.provider] = left
		}
	}
	kept := out[:catalogued]
	for _, g := range groups {
		kept = append(kept, out[g.start:g.start+keep[g.provider]]...)
	}
	return kept, omitted
}
