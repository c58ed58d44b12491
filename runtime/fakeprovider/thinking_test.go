package fakeprovider

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestThinkingTurnValidation: a Messages request that continues a tool-use
// loop (its last user message carries tool_result blocks) keeps the
// thinking mode the assistant turn began with; one that begins a new turn
// may choose either.
func TestThinkingTurnValidation(t *testing.T) {
	const (
		userText  = `{"role":"user","content":[{"type":"text","text":"go"}]}`
		results   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
		resultsUp = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"next prompt"}]}`
		plainUse  = `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]}`
		thinkUse  = `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"t1","name":"ls","input":{}}]}`
		redUse    = `{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"t1","name":"ls","input":{}}]}`
		closed    = `{"role":"assistant","content":[{"type":"text","text":"(ended)"}]}`
		on        = `,"thinking":{"type":"enabled","budget_tokens":1024}`
		adaptive  = `,"thinking":{"type":"adaptive"}`
		off       = ``
		disabled  = `,"thinking":{"type":"disabled"}`
	)
	for _, tc := range []struct {
		name     string
		thinking string
		msgs     []string
		refused  string // a part of the message, "" when accepted
	}{
		{"off, loop without thinking", off, []string{userText, plainUse, results}, ""},
		{"on, loop with thinking", on, []string{userText, thinkUse, results}, ""},
		{"adaptive, loop with redacted thinking", adaptive, []string{userText, redUse, results}, ""},
		{"turned on inside the loop", on, []string{userText, plainUse, results}, "cannot be turned on"},
		{"turned on, adaptive", adaptive, []string{userText, plainUse, results}, "found `tool_use`"},
		{"turned on, prompt merged into the results", on, []string{userText, plainUse, resultsUp}, "cannot be turned on"},
		{"turned off inside the loop (its thinking is ignored)", off, []string{userText, thinkUse, results}, ""},
		{"turned off explicitly (its thinking is ignored)", disabled, []string{userText, thinkUse, results}, ""},
		{"on, new turn after a closed loop", on, []string{userText, plainUse, results, closed, userText}, ""},
		{"off, new turn after a closed loop", off, []string{userText, thinkUse, results, closed, userText}, ""},
		{"on, first message", on, []string{userText}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"model":"m","stream":true,"max_tokens":4096` + tc.thinking + `,"messages":[` + strings.Join(tc.msgs, ",") + `]}`
			var body map[string]any
			if err := json.Unmarshal([]byte(raw), &body); err != nil {
				t.Fatal(err)
			}
			e := validate(ModeAnthropic, []byte(raw), body, nil)
			switch {
			case tc.refused == "" && e != nil:
				t.Errorf("refused: %+v", *e)
			case tc.refused != "" && e == nil:
				t.Error("accepted")
			case tc.refused != "" && (e.status != 400 || !strings.Contains(e.msg, tc.refused)):
				t.Errorf("refused with %+v, want a 400 saying %q", *e, tc.refused)
			}
		})
	}
}
