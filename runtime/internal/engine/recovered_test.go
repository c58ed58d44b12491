package engine

import (
	"slices"
	"testing"

	"octet.dev/host/protocol"
)

// The engine's tests report recovered output with their own Go-API-only
// event, as the façade does with runtime.RecoveredOutput.
const typeRecoveredOutput protocol.EventType = "recovered_output"

type recoveredOutput struct {
	protocol.GoAPIEvent `json:"-"`

	Step    int
	Channel string
	Text    string
}

func testRecoveredOutput(step int, channel, text string) protocol.RunEvent {
	return protocol.RunEvent{Type: typeRecoveredOutput, Data: &recoveredOutput{Step: step, Channel: channel, Text: text}}
}

// Without Options.RecoveredOutput a replaced attempt's partial text is
// reported by no event; the run recovers as it does with one.
func TestRecoveredOutputWithoutConstructor(t *testing.T) {
	f := newFixture(t, text("Hello ", "world"), text("again"))
	f.agent.opts.RecoveredOutput = nil
	f.prov.cuts = []error{pe("stream_cut", 200, true, true)}
	evs, res := f.run(f.req("q"))
	if res.Status != "completed" || res.Output != "Hello world" {
		t.Fatalf("result %+v", res)
	}
	if order := types(evs); !slices.Contains(order, protocol.TypeProviderRetry) || slices.Contains(order, typeRecoveredOutput) {
		t.Errorf("events %v", order)
	}
	for _, ev := range evs {
		if _, ok := ev.Data.(*recoveredOutput); ok {
			t.Errorf("recovered output without a constructor: %+v", ev)
		}
	}
}
