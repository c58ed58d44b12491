package runtime

import (
	"testing"

	"octet.dev/host/runtime/internal/engine"
	"octet.dev/host/runtime/internal/engine/gate"
)

// TestConstantsMatchTheEngine: the façade states its constants in its own
// words (so that its documentation shows the values); the engine must use
// the same ones.
func TestConstantsMatchTheEngine(t *testing.T) {
	for _, c := range []struct {
		name      string
		our, want any
	}{
		{"DefaultToolSchemaBudgetBytes", DefaultToolSchemaBudgetBytes, engine.DefaultToolSchemaBudgetBytes},
		{"DocsSkill", DocsSkill, engine.DocsSkill},
		{"LevelTrace", LevelTrace, engine.LevelTrace},
		{"RedactedMarker", RedactedMarker, engine.RedactedMarker},
		{"MinRedactedBytes", MinRedactedBytes, engine.MinRedactedBytes},
		{"DelegateTool", DelegateTool, engine.DelegateTool},
		{"MaxConcurrentWorkers", MaxConcurrentWorkers, engine.MaxConcurrentWorkers},
		{"MaxWorkersPerRun", MaxWorkersPerRun, engine.MaxWorkersPerRun},
		{"MaxGateRejections", MaxGateRejections, gate.MaxRejections},
		{"MaxGateReasonBytes", MaxGateReasonBytes, gate.MaxReasonBytes},
		{"MaxHeaderEntries", MaxHeaderEntries, engine.MaxHeaderEntries},
		{"MaxHeaderBytes", MaxHeaderBytes, engine.MaxHeaderBytes},
		{"KindSteering", KindSteering, engine.KindSteering},
		{"KindFollowUp", KindFollowUp, engine.KindFollowUp},
		{"EntryMessage", EntryMessage, engine.EntryMessage},
		{"EntryCompaction", EntryCompaction, engine.EntryCompaction},
	} {
		if c.our != c.want {
			t.Errorf("%s: the façade says %v, the engine %v", c.name, c.our, c.want)
		}
	}
}
