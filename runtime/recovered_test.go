package runtime_test

import (
	"encoding/json"
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// recovered_output is the Go API's own event: protocol 1 does not know it,
// and its data encodes as it always has, step, channel and text.
func TestRecoveredOutputOutsideProtocol(t *testing.T) {
	if e, ok := protocol.Lookup(runtime.TypeRecoveredOutput); ok {
		t.Errorf("protocol.Lookup knows recovered_output: %+v", e)
	}
	if protocol.PayloadFor(runtime.TypeRecoveredOutput) != nil {
		t.Error("protocol.PayloadFor knows recovered_output")
	}
	if slices.Contains(protocol.Types(), runtime.TypeRecoveredOutput) {
		t.Error("protocol.Types lists recovered_output")
	}
	ev := runtime.Event{Type: runtime.TypeRecoveredOutput, Data: &runtime.RecoveredOutput{Step: 3, Channel: protocol.ChannelReasoning, Text: "half <a> thought"}}
	want := `{"step":3,"channel":"reasoning","text":"half \u003ca\u003e thought"}`
	if b, err := json.Marshal(ev.Data); err != nil || string(b) != want {
		t.Errorf("encoding/json: %s %v, want %s", b, err, want)
	}
	want = `{"step":3,"channel":"reasoning","text":"half <a> thought"}`
	if b, err := jsonv2.Marshal(ev.Data); err != nil || string(b) != want {
		t.Errorf("json v2: %s %v, want %s", b, err, want)
	}
	var back runtime.RecoveredOutput
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Step != 3 || back.Channel != "reasoning" || back.Text != "half <a> thought" {
		t.Errorf("decoded %+v %v", back, err)
	}
}
