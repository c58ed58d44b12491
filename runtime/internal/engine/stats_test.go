package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/store"
)

// Statistics sums the usage ledger of every run of a session, survives a
// reopen, and reports recorded uncertainty; SessionExists creates nothing.
func TestSessionStatistics(t *testing.T) {
	f := newFixture(t, text("one"), text("two"))
	id := NewSessionID()
	if ok, err := f.agent.SessionExists(f.sessions, id); ok || err != nil {
		t.Fatalf("SessionExists before any run = %v, %v; want false, nil", ok, err)
	}
	if ok, _ := f.agent.SessionExists(f.sessions, id); ok {
		t.Fatal("SessionExists created the session")
	}
	for i, runID := range []string{"run-1", "run-2"} {
		req := f.req("q")
		req.RunID, req.SessionID = runID, id
		if _, res := f.run(req); res.Status != "completed" {
			t.Fatalf("run %d: %+v", i, res)
		}
	}
	if ok, err := f.agent.SessionExists(f.sessions, id); !ok || err != nil {
		t.Fatalf("SessionExists after a run = %v, %v; want true, nil", ok, err)
	}
	if _, err := f.agent.SessionExists(f.sessions, "bad/id"); err == nil {
		t.Fatal("SessionExists accepted an invalid ID")
	}
	s, err := f.agent.OpenSession(f.sessions, id)
	if err != nil {
		t.Fatal(err)
	}
	// text() reports input 100 (40 of them cached), output 10, no total.
	want := SessionStatistics{ModelCalls: 2, InputTokens: 200, OutputTokens: 20, CacheReadTokens: 80, TotalTokens: 220,
		ByOperation: map[string]OperationUsage{"assistant_turn": {Calls: 2, InputTokens: 200, OutputTokens: 20, CacheReadTokens: 80, TotalTokens: 220}}}
	if diff := cmp.Diff(want, s.Statistics()); diff != "" {
		t.Fatalf("Statistics() (-want +got):\n%s", diff)
	}
	if err := s.RecordUsageUncertainty("local", "local-model", "assistant_turn"); err != nil {
		t.Fatal(err)
	}
	// A priced call with a reported total: both are summed as recorded.
	priced := store.Usage{RunID: "run-3", Step: 1, Model: "m", CostUSD: 0.25,
		Usage: store.NewUsageV1(ProviderUsage{InputTokens: 3, OutputTokens: 2, CacheWriteTokens: 1, ReasoningTokens: 1, TotalTokens: 7})}
	if err := s.s.Append(store.Record{Body: priced}); err != nil {
		t.Fatal(err)
	}
	want = SessionStatistics{ModelCalls: 3, InputTokens: 203, OutputTokens: 22, CacheReadTokens: 80, CacheWriteTokens: 1,
		ReasoningTokens: 1, TotalTokens: 227, Cost: 0.25,
		ByOperation: map[string]OperationUsage{"assistant_turn": {Calls: 3, InputTokens: 203, OutputTokens: 22, CacheReadTokens: 80,
			CacheWriteTokens: 1, ReasoningTokens: 1, TotalTokens: 227, Cost: 0.25, UsageUncertain: true}}}
	s.Close()
	s, err = f.agent.OpenSession(f.sessions, id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want.UsageUncertain = true
	if diff := cmp.Diff(want, s.Statistics()); diff != "" {
		t.Fatalf("after reopen with uncertainty: Statistics() (-want +got):\n%s", diff)
	}
	if NewSessionID() == NewSessionID() {
		t.Fatal("NewSessionID repeated itself")
	}
}
