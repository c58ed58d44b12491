package engine

import (
	"octet.dev/host/protocol"

	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// modelInfo mirrors the models event's entry (wire.ModelInfo), which this
// package cannot import.
type modelInfo struct {
	ID                  string   `json:"id"`
	Provider            string   `json:"provider"`
	Name                string   `json:"name"`
	ProviderMode        string   `json:"provider_mode"`
	ContextWindowTokens int      `json:"context_window_tokens"`
	MaxOutputTokens     int      `json:"max_output_tokens"`
	InputModalities     []string `json:"input_modalities"`
	Vision              bool     `json:"vision"`
	Audio               bool     `json:"audio"`
	SupportsReasoning   bool     `json:"supports_reasoning"`
}

func inventorySize(ms []protocol.ModelInfo) int {
	infos := make([]modelInfo, len(ms))
	for i, m := range ms {
		infos[i] = modelInfo{ID: m.ID, Provider: m.Provider, Name: m.Name, ProviderMode: m.ProviderMode,
			ContextWindowTokens: m.ContextWindowTokens, MaxOutputTokens: m.MaxOutputTokens, InputModalities: m.InputModalities}
	}
	b, _ := json.Marshal(infos) // escapes <, > and & as \u003c: the largest form
	return len(b)
}

// The inventory stays within its frame however many and however long the
// discovered ids, each provider keeping an equal share when it must be cut.
func TestFitInventory(t *testing.T) {
	var out []protocol.ModelInfo
	for i := range 30 {
		out = append(out, protocol.ModelInfo{ID: "cat/m" + strconv.Itoa(i), Provider: "cat", Name: "M", ProviderMode: "openai-compatible",
			ContextWindowTokens: 1 << 30, MaxOutputTokens: 1 << 20, InputModalities: []string{"text", "image"}})
	}
	catalogued := len(out)
	hostile := strings.Repeat(`"\<&é`, 80) // 480 bytes, escaping to much more
	add := func(provider string, n int, id func(int) string) {
		for i := range n {
			out = append(out, protocol.ModelInfo{ID: provider + "/" + id(i), Provider: provider, Name: id(i), ProviderMode: "openai-compatible",
				ContextWindowTokens: 2147483647, MaxOutputTokens: 16384, InputModalities: []string{"text"}})
		}
	}
	add("a-hostile", 2000, func(i int) string { return hostile + strconv.Itoa(i) })
	add("b-small", 10, func(i int) string { return "s" + strconv.Itoa(i) })
	add("c-many", 2000, func(i int) string { return "model-" + strconv.Itoa(i) })
	kept, omitted := fitInventory(out, catalogued, 4)
	if size := inventorySize(kept); size > maxInventoryBytes {
		t.Fatalf("inventory is %d bytes, over %d", size, maxInventoryBytes)
	}
	count := map[string]int{}
	for _, m := range kept {
		count[m.Provider]++
	}
	if count["cat"] != 30 || count["b-small"] != 10 || omitted["b-small"] != 0 || omitted["cat"] != 0 {
		t.Errorf("kept %v, omitted %v", count, omitted)
	}
	for _, p := range []string{"a-hostile", "c-many"} {
		if count[p] < 100 || count[p]+omitted[p] != 2000 {
			t.Errorf("%s: kept %d, omitted %d", p, count[p], omitted[p])
		}
	}
	if kept[catalogued].Provider != "a-hostile" || kept[catalogued].Name != hostile+"0" {
		t.Error("a provider keeps the first models of its list, in order")
	}
	// Room enough: nothing is cut.
	small := append([]protocol.ModelInfo(nil), out[:catalogued+1]...)
	if kept, omitted := fitInventory(small, catalogued, 1); len(kept) != len(small) || len(omitted) != 0 {
		t.Errorf("a small inventory was cut: %d of %d, %v", len(kept), len(small), omitted)
	}
}
