package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
)

// openT opens a session of f's store for the test; it is closed at the
// end unless the test closes it first.
func (f *fixture) openT(a *Agent, id string) *Session {
	f.t.Helper()
	s, err := a.OpenSession(f.sessions, id)
	if err != nil {
		f.t.Fatalf("OpenSession(%s): %v", id, err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

// runOn runs prompt as runID on session id and requires it to complete.
func (f *fixture) runOn(id, runID, prompt string) {
	f.t.Helper()
	req := f.req(prompt)
	req.RunID, req.SessionID = runID, id
	if _, res := f.run(req); res.Status != "completed" {
		f.t.Fatalf("%s on %s: %+v %+v", runID, id, res, res.Error)
	}
}

// requestTexts returns the role:text of the messages of provider call n.
func (f *fixture) requestTexts(n int) []string {
	f.t.Helper()
	f.prov.mu.Lock()
	defer f.prov.mu.Unlock()
	if n >= len(f.prov.reqs) {
		f.t.Fatalf("no provider call %d (%d made)", n, len(f.prov.reqs))
	}
	var out []string
	for _, m := range f.prov.reqs[n].Messages {
		out = append(out, string(m.Role)+":"+m.Text)
	}
	return out
}

// Statistics sums model steps and auxiliary operations' usage records,
// per operation too, and keeps uncertainty per operation and overall.
func TestStatisticsAuxiliaryOperations(t *testing.T) {
	f := newFixture(t, text("one"))
	f.runOn("aux", "run-1", "q")
	s := f.openT(f.agent, "aux")
	summarizer := store.Usage{RunID: "run-1", Step: 1, Operation: operationLocalCompaction, Model: "local-model", CostUSD: 0.5,
		Usage: store.NewUsageV1(ProviderUsage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 600, TotalTokens: 1200})}
	if err := s.s.Append(store.Record{Body: summarizer}, store.Record{Body: summarizer}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsageUncertainty("local", "local-model", operationTerminalGate); err != nil {
		t.Fatal(err)
	}
	want := SessionStatistics{ModelCalls: 3, InputTokens: 2100, OutputTokens: 410, CacheReadTokens: 1240, TotalTokens: 2510,
		Cost: 1, UsageUncertain: true, ByOperation: map[string]OperationUsage{
			operationAssistantTurn:   {Calls: 1, InputTokens: 100, OutputTokens: 10, CacheReadTokens: 40, TotalTokens: 110},
			operationLocalCompaction: {Calls: 2, InputTokens: 2000, OutputTokens: 400, CacheReadTokens: 1200, TotalTokens: 2400, Cost: 1},
			operationTerminalGate:    {UsageUncertain: true},
		}}
	if diff := cmp.Diff(want, s.Statistics()); diff != "" {
		t.Fatalf("Statistics() (-want +got):\n%s", diff)
	}
	// The operation member is written only for auxiliary calls.
	var ops []string
	for _, r := range s.s.Records() {
		if u, ok := r.Body.(store.Usage); ok {
			ops = append(ops, u.Operation)
		}
	}
	if diff := cmp.Diff([]string{"", operationLocalCompaction, operationLocalCompaction}, ops); diff != "" {
		t.Errorf("usage operations (-want +got):\n%s", diff)
	}
	s.Close()
	if s2 := f.openT(f.agent, "aux"); !cmp.Equal(want, s2.Statistics()) {
		t.Errorf("after reopen: %+v", s2.Statistics())
	}
}

// Checkout: the next run's request history ends at the checked-out entry;
// the checkout survives a new Agent; the ledger and the sticky uncertainty
// survive the checkout and the resume.
func TestCheckoutThenRun(t *testing.T) {
	f := newFixture(t, text("a1"), text("a2"), text("a3"))
	f.runOn("co", "run-1", "q1")
	f.runOn("co", "run-2", "q2")
	s := f.openT(f.agent, "co")
	var target SessionEntry
	for _, e := range s.Entries() {
		if e.Kind != EntryMessage || !e.OnHead {
			t.Errorf("entry %+v before any checkout", e)
		}
		if e.Role == "assistant" && e.Text == "a1" {
			target = e
		}
	}
	if target.ID == 0 || target.RunID != "run-1" {
		t.Fatalf("no entry for a1: %+v", s.Entries())
	}
	if err := s.RecordUsageUncertainty("local", "local-model", operationAssistantTurn); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkout(target.ID); err != nil {
		t.Fatal(err)
	}
	if s.Head() != target.ID {
		t.Fatalf("head %d, want %d", s.Head(), target.ID)
	}
	if err := s.Checkout(target.ID + 10_000); !errors.Is(err, ErrNoSessionEntry) {
		t.Fatalf("Checkout(unknown) = %v", err)
	}
	s.Close()

	// A new Agent on the same store resumes at the checked-out entry.
	a2, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	s = f.openT(a2, "co")
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"user:q1", "assistant:a1"}) {
		t.Fatalf("resumed history %v", got)
	}
	if !s.Statistics().UsageUncertain || !s.HasUncertainUsage() {
		t.Fatal("the uncertainty did not survive the checkout and the resume")
	}
	s.Close()
	req := f.req("q3")
	req.RunID, req.SessionID = "run-3", "co"
	rc, err := a2.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "completed" {
		t.Fatalf("run-3: %+v", res)
	}
	if diff := cmp.Diff([]string{"user:q1", "assistant:a1", "user:q3"}, f.requestTexts(2)); diff != "" {
		t.Fatalf("run-3's request history (-want +got):\n%s", diff)
	}
	s = f.openT(a2, "co")
	st := s.Statistics()
	if st.ModelCalls != 3 || !st.UsageUncertain {
		t.Fatalf("after the run: %d calls (want 3: the abandoned branch's call stays), uncertain %v", st.ModelCalls, st.UsageUncertain)
	}
	var onHead, off []string
	for _, e := range s.Entries() {
		if e.OnHead {
			onHead = append(onHead, e.Text)
		} else {
			off = append(off, e.Text)
		}
	}
	if !cmp.Equal(onHead, []string{"q1", "a1", "q3", "a3"}) || !cmp.Equal(off, []string{"q2", "a2"}) {
		t.Fatalf("entries on the head %v, off it %v", onHead, off)
	}
}

func texts(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.Text)
	}
	return out
}

// Fork: both sessions run on independently, each with its own history,
// ledger and lock; the fork starts certain and names its parent.
func TestForkRunsIndependently(t *testing.T) {
	f := newFixture(t, text("a1"), text("c-answer"), text("p-answer")) // the fork runs first
	f.runOn("parent", "run-1", "q1")
	p := f.openT(f.agent, "parent")
	if err := p.RecordUsageUncertainty("local", "local-model", operationAssistantTurn); err != nil {
		t.Fatal(err)
	}
	head := p.Head()
	c, err := p.Fork("child")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if id, entry, ok := c.ForkedFrom(); !ok || id != "parent" || entry != head {
		t.Fatalf("ForkedFrom = %q %d %v, want parent %d", id, entry, ok, head)
	}
	if _, _, ok := p.ForkedFrom(); ok {
		t.Fatal("the parent is no fork")
	}
	if diff := cmp.Diff(p.Messages(), c.Messages()); diff != "" {
		t.Fatalf("fork history (-parent +fork):\n%s", diff)
	}
	if st := c.Statistics(); st.ModelCalls != 0 || st.UsageUncertain || st.ByOperation != nil {
		t.Fatalf("fork's statistics %+v: want a zero, certain ledger", st)
	}
	if _, err := p.Fork("child"); !errors.Is(err, ErrSessionExists) && !errors.Is(err, ErrSessionLocked) {
		t.Fatalf("second Fork(child) = %v", err)
	}
	// Its own lock: open, the fork refuses a run; the parent's lock is
	// another.
	req := f.req("c2")
	req.RunID, req.SessionID = "run-c", "child"
	var re *RunError
	if _, err := f.agent.Run(context.Background(), req); !errors.As(err, &re) || re.Code != protocol.CodeSessionLocked {
		t.Fatalf("run on the open fork: %v", err)
	}
	c.Close()
	f.runOn("child", "run-c", "c2") // the parent is still open
	p.Close()
	f.runOn("parent", "run-p", "p2")
	if diff := cmp.Diff([]string{"user:q1", "assistant:a1", "user:c2"}, f.requestTexts(1)); diff != "" {
		t.Errorf("the fork's run history (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:q1", "assistant:a1", "user:p2"}, f.requestTexts(2)); diff != "" {
		t.Errorf("the parent's run history (-want +got):\n%s", diff)
	}
	p = f.openT(f.agent, "parent")
	c = f.openT(f.agent, "child")
	if got := texts(c.Messages()); !cmp.Equal(got, []string{"user:q1", "assistant:a1", "user:c2", "assistant:c-answer"}) {
		t.Errorf("fork's history %v", got)
	}
	if got := texts(p.Messages()); !cmp.Equal(got, []string{"user:q1", "assistant:a1", "user:p2", "assistant:p-answer"}) {
		t.Errorf("parent's history %v", got)
	}
	if ps, cs := p.Statistics(), c.Statistics(); ps.ModelCalls != 2 || !ps.UsageUncertain || cs.ModelCalls != 1 || cs.UsageUncertain || cs.InputTokens != 100 {
		t.Errorf("ledgers: parent %+v, fork %+v", ps, cs)
	}
	if _, err := p.Fork("bad/id"); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Errorf("Fork(bad/id) = %v", err)
	}
}

// Entries' text is one line of at most 80 characters.
func TestShortText(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  hi\n\tthere  ", "hi there"},
		{strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{strings.Repeat("x", 81), strings.Repeat("x", 80) + "…"},
		{strings.Repeat("é", 79) + " b", strings.Repeat("é", 79) + "…"},
		{long, strings.TrimSpace(long[:79]) + "…"},
		{"\xff ok", "\uFFFD ok"},
	} {
		if got := shortText(tc.in); got != tc.want {
			t.Errorf("shortText(%.20q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A session whose file changed behind its lock fails: Entries returns
// nothing, and Err says why instead of the emptiness passing for an empty
// session.
func TestSessionErrAfterFailedReadBack(t *testing.T) {
	f := newFixture(t, text("a1"))
	f.runOn("rb", "run-1", "the question")
	s := f.openT(f.agent, "rb")
	if err := s.Err(); err != nil || len(s.Entries()) == 0 {
		t.Fatalf("a sound session: Err %v, %d entries", err, len(s.Entries()))
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"the question"`))
	if i < 0 {
		t.Fatal("the prompt is not in the file")
	}
	copy(data[i:], `"the qu"}   "`) // same length, another shape
	if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if es := s.Entries(); len(es) != 0 {
		t.Fatalf("entries of a changed file: %+v", es)
	}
	if err := s.Err(); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("Err = %v, want the session failed", err)
	}
}
