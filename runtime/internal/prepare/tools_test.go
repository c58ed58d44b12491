package prepare

import (
	"strings"
	"testing"

	"octet.dev/host/protocol"
)

func TestSelectTools(t *testing.T) {
	all, err := SelectTools(nil)
	if err != nil || len(all) != len(AllTools()) || all[len(all)-1].Spec.Name != "bash" {
		t.Fatalf("nil selects every tool, bash last: %d, %v", len(all), err)
	}
	none, err := SelectTools([]string{})
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("an empty selection is no tool: %v, %v", none, err)
	}
	if _, err := SelectTools([]string{"read", "read"}); err == nil || err.Code != protocol.CodeToolsInvalid || !strings.Contains(err.Message, `"read" twice`) {
		t.Errorf("a tool named twice: %v", err)
	}
	if _, err := SelectTools([]string{strings.Repeat("x", 100)}); err == nil || err.Code != protocol.CodeToolsInvalid || strings.Contains(err.Message, strings.Repeat("x", 100)) {
		t.Errorf("an unknown name, cut in the message: %v", err)
	}
}

// TestCheckToolBudget: a provider that sizes its tool array is taken at
// its word; another is measured by the neutral JSON of the specs; no
// tools fit any budget.
func TestCheckToolBudget(t *testing.T) {
	defs := AllTools()
	p := &testProv{t: t}
	if err := CheckToolBudget(DefaultToolSchemaBudgetBytes, p, defs); err != nil {
		t.Fatalf("the default tools over the default budget: %v", err)
	}
	if err := CheckToolBudget(100, p, defs); err == nil || err.Code != protocol.CodeToolSchemaTooLarge || !strings.Contains(err.Message, "the budget is 100") {
		t.Errorf("neutral size over 100 bytes: %v", err)
	}
	if err := CheckToolBudget(0, p, nil); err != nil {
		t.Errorf("no tools over a zero budget: %v", err)
	}
	sized := sizedProv{&testProv{t: t, size: 5000}}
	if err := CheckToolBudget(4999, sized, defs[:1]); err == nil || !strings.Contains(err.Message, "the tool array is 5000 bytes") {
		t.Errorf("the provider's own size: %v", err)
	}
	if err := CheckToolBudget(5000, sized, defs[:1]); err != nil {
		t.Errorf("exactly the budget: %v", err)
	}
}
