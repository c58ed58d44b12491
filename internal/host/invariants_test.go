package host

import (
	"encoding/json"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

var terminalTypes = map[protocol.EventType]bool{"hello": true, "models": true, "shutdown": true, "final_result": true, "protocol_error": true}

// checkInvariants runs the protocol session invariants of tla/Session.tla
// (as the spec package states them) over a transcript's output.
func checkInvariants(t *testing.T, out string) {
	t.Helper()
	var frames []spec.Frame
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, "exit ") {
			continue
		}
		var f struct {
			RequestID *string            `json:"request_id"`
			Seq       int                `json:"seq"`
			Type      protocol.EventType `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("output line is not an event: %q", line)
		}
		frames = append(frames, spec.Frame{RequestID: f.RequestID, Seq: f.Seq, Type: f.Type, Terminal: terminalTypes[f.Type]})
	}
	if err := spec.All(frames); err != nil {
		t.Errorf("session invariants: %v", err)
	}
}
