package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/store"
)

// compactionEnv runs requests against a fake provider on a small window.
type compactionEnv struct {
	t     *testing.T
	fake  *fakeprovider.Server
	agent *Agent
	ws    string
	dir   string
	mode  fakeprovider.Mode
	win   int
	out   int
}

func newCompactionEnv(t *testing.T, mode fakeprovider.Mode, sc fakeprovider.Script) *compactionEnv {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: sc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	home := t.TempDir()
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" }, Jitter: func() float64 { return 0 },
		Sleep: func(context.Context, time.Duration) error { return nil }, RecoveredOutput: testRecoveredOutput})
	if err != nil {
		t.Fatal(err)
	}
	return &compactionEnv{t: t, fake: fake, agent: a, ws: t.TempDir(), dir: filepath.Join(home, "sessions"), mode: mode, win: 10000, out: 1000}
}

func (e *compactionEnv) req(runID, prompt string) RunRequest {
	win, out := e.win, e.out
	return RunRequest{RunID: runID, Workspace: e.ws, Model: "m", Prompt: prompt, SessionDir: e.dir, SessionID: "long", Tools: []string{"ls", "read"},
		Route: &InlineRoute{Provider: "fake", BaseURL: e.fake.BaseURL(e.mode), Mode: string(e.mode), ContextWindowTokens: &win, MaxOutputTokens: &out}}
}

func (e *compactionEnv) run(runID, prompt string) ([]Event, protocol.FinalResult) {
	e.t.Helper()
	rc, err := e.agent.Run(context.Background(), e.req(runID, prompt))
	if err != nil {
		e.t.Fatal(err)
	}
	var evs []Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait()
}

// sessionRecords reads the session file's records.
func (e *compactionEnv) sessionRecords() []store.Record {
	e.t.Helper()
	s, err := store.Open(e.dir, "long", store.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	defer s.Close()
	return s.Records()
}

func compactions(recs []store.Record) []store.Compaction {
	var out []store.Compaction
	for _, r := range recs {
		if c, ok := r.Body.(store.Compaction); ok {
			out = append(out, c)
		}
	}
	return out
}

// chatTexts returns the roles and contents of a Chat request's messages.
func chatTexts(r fakeprovider.Request) (roles, texts []string) {
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		content, _ := mm["content"].(string)
		roles, texts = append(roles, role), append(texts, content)
	}
	return roles, texts
}

// mainRequests are the requests that are not summarizer calls.
func mainRequests(f *fakeprovider.Server) []fakeprovider.Request {
	var out []fakeprovider.Request
	for _, r := range f.Requests() {
		if !r.Summary && r.Fault == "" {
			out = append(out, r)
		}
	}
	return out
}

// The threshold scenario (window 10000: threshold 7500, keep 2500): run 1
// leaves a 3000-token prompt; run 2's 3000-token prompt fits, its first
// step reports 7600 input tokens, so the check before step 2 compacts:
// run 1 is summarized, run 2's turn is kept.
var (
	prompt1 = strings.Repeat("first prompt words ", 632)  // 12008 bytes
	prompt2 = strings.Repeat("second prompt words ", 600) // 12000 bytes
)

func thresholdScript(summaries ...fakeprovider.Turn) fakeprovider.Script {
	return fakeprovider.Script{Summaries: summaries, Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{}`}}, Usage: fakeprovider.Usage{Input: 7600, Output: 10}},
		{Text: "all done", Usage: fakeprovider.Usage{Input: 3500, Output: 5}},
		{Text: "third", Usage: fakeprovider.Usage{Input: 3600, Output: 5}},
	}}
}

func TestThresholdCompactionMidRun(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, thresholdScript(fakeprovider.Turn{Text: "## Goal\nthe first task\n\n", Usage: fakeprovider.Usage{Input: 900, Output: 40}}))
	if _, res := e.run("run-1", prompt1); res.Status != "completed" {
		t.Fatalf("run 1: %+v", res)
	}
	evs, res := e.run("run-2", prompt2)
	if res.Status != "completed" || res.Output != "all done" {
		t.Fatalf("run 2: %+v", res)
	}
	starts, fins := find[protocol.CompactionStart](evs), find[protocol.CompactionFinish](evs)
	if len(starts) != 1 || len(fins) != 1 {
		t.Fatalf("%d compaction_start and %d compaction_finish, want one each", len(starts), len(fins))
	}
	if s := starts[0]; s.Reason != "threshold" || s.Kind != "local" || s.TokensBefore <= 7500 {
		t.Errorf("compaction_start %+v", s)
	}
	f := fins[0]
	if !f.OK || f.Error != nil || f.WillRetry || f.SummaryBytes != int64(len("## Goal\nthe first task")) || f.HandoffBytes != f.SummaryBytes || f.TokensAfterEstimate >= f.TokensBefore {
		t.Errorf("compaction_finish %+v", f)
	}
	// The compaction comes between step 1's tool result and step 2.
	order := types(evs)
	if i, j := slices.Index(order, protocol.TypeCompactionStart), slices.Index(order, protocol.TypeToolFinish); i < j {
		t.Errorf("compaction before the tool result: %v", order)
	}
	// The next request: the wrapped summary, then the kept messages.
	reqs := mainRequests(e.fake)
	if len(reqs) != 3 {
		t.Fatalf("%d main requests, want 3", len(reqs))
	}
	roles, texts := chatTexts(reqs[2])
	if want := []string{"system", "user", "user", "assistant", "tool"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	if texts[1] != store.WrapSummary("## Goal\nthe first task") || texts[2] != prompt2 {
		t.Errorf("request after compaction starts %q, %.40q", texts[1], texts[2])
	}
	sum := 0
	for _, r := range e.fake.Requests() {
		if r.Summary {
			sum++
			if !strings.Contains(string(r.RawBody), "first prompt words") || strings.Contains(string(r.RawBody), "second prompt words") {
				t.Error("the summarizer did not get exactly the summarized history")
			}
			if _, ok := r.Body["tools"]; ok {
				t.Error("the summarizer request offers tools")
			}
		}
	}
	if sum != 1 {
		t.Fatalf("%d summarizer requests, want 1", sum)
	}
	recs := e.sessionRecords()
	cps := compactions(recs)
	if len(cps) != 1 || cps[0].Kind != "local" || cps[0].Reason != "threshold" || cps[0].FirstKept != 2 || cps[0].Usage == nil || cps[0].Usage.InputTokens != 900 {
		t.Fatalf("checkpoints %+v", cps)
	}
	var aux []store.Usage
	for _, r := range recs {
		if u, ok := r.Body.(store.Usage); ok && u.Operation != "" {
			aux = append(aux, u)
		}
	}
	if len(aux) != 1 || aux[0].Operation != "local_compaction" || aux[0].Usage.InputTokens != 900 || aux[0].RunID != "run-2" {
		t.Fatalf("summarizer usage records %+v", aux)
	}
	// Stale usage does not re-trigger: run 3 starts from step 2's usage
	// (3500), not from the pre-checkpoint 7600.
	evs, res = e.run("run-3", "short")
	if res.Status != "completed" || len(find[protocol.CompactionStart](evs)) != 0 {
		t.Fatalf("run 3 compacted again or failed: %+v", res)
	}
	// Statistics count the summarizer's call.
	s, err := e.agent.OpenSession(e.dir, "long")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Statistics(); st.ModelCalls != 5 {
		t.Errorf("statistics count %d calls, want 5 (4 steps and the summarizer)", st.ModelCalls)
	}
}

func TestThresholdRefusalWritesNoCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name, summary string
		code          protocol.Code
	}{
		{"empty", "", protocol.CodeCompactionHandoffEmpty},
		{"whitespace", " \n\t", protocol.CodeCompactionHandoffEmpty},
		{"too large", strings.Repeat("y", 131073), protocol.CodeCompactionHandoffTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCompactionEnv(t, fakeprovider.ModeChat, thresholdScript(fakeprovider.Turn{Text: tc.summary, Chunk: -1}))
			e.run("run-1", prompt1)
			before := e.sessionRecords()
			evs, res := e.run("run-2", prompt2)
			// The next request still fits: the run goes on uncompacted.
			if res.Status != "completed" {
				t.Fatalf("run 2: %+v", res)
			}
			fins := find[protocol.CompactionFinish](evs)
			if len(fins) != 1 || fins[0].OK || fins[0].Error == nil || fins[0].Error.Code != tc.code {
				t.Fatalf("compaction_finish %+v", fins)
			}
			if cps := compactions(e.sessionRecords()); len(cps) != 0 {
				t.Fatalf("a refused compaction wrote a checkpoint: %+v", cps)
			}
			if len(compactions(before)) != 0 {
				t.Fatal("setup")
			}
			// The next request holds the whole history.
			reqs := mainRequests(e.fake)
			if _, texts := chatTexts(reqs[len(reqs)-1]); texts[1] != prompt1 {
				t.Error("the refused compaction changed the context")
			}
		})
	}
}

// After a refused threshold compaction the run goes on uncompacted only
// while the next request still fits (window 10000, max output 1000: fit
// 9000): run 2's first check is refused (an empty summary) at 7600
// tokens, the second step reports 9000 input tokens, and with its tool
// result the next request would pass the fit, so the check compacts
// again instead of sending a request that leaves no room for the answer.
func TestThresholdRefusalHoldsOnlyWhileTheRequestFits(t *testing.T) {
	sc := thresholdScript(fakeprovider.Turn{Text: "", Chunk: -1}, fakeprovider.Turn{Text: "## Goal\nthe first task\n\n", Usage: fakeprovider.Usage{Input: 900, Output: 40}})
	sc.Turns[2] = fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "call_2", Name: "ls", Arguments: `{}`}}, Usage: fakeprovider.Usage{Input: 9000, Output: 10}}
	sc.Turns = append(sc.Turns, fakeprovider.Turn{Text: "fourth", Usage: fakeprovider.Usage{Input: 3000, Output: 5}})
	e := newCompactionEnv(t, fakeprovider.ModeChat, sc)
	if _, res := e.run("run-1", prompt1); res.Status != "completed" {
		t.Fatalf("run 1: %+v", res)
	}
	evs, res := e.run("run-2", prompt2)
	if res.Status != "completed" {
		t.Fatalf("run 2: %+v", res)
	}
	fins := find[protocol.CompactionFinish](evs)
	if len(fins) != 2 || fins[0].OK || fins[1].OK != true || fins[1].Reason != "threshold" {
		t.Fatalf("compaction_finish %+v, want a refusal then a compaction", fins)
	}
	if cps := compactions(e.sessionRecords()); len(cps) != 1 {
		t.Fatalf("checkpoints %+v", cps)
	}
}

func TestOverflowSignalsCompactAndRetry(t *testing.T) {
	for _, style := range fakeprovider.OverflowStyles() {
		mode := fakeprovider.ModeChat
		switch style {
		case fakeprovider.OverflowResponses:
			mode = fakeprovider.ModeResponses
		case fakeprovider.OverflowAnthropic:
			mode = fakeprovider.ModeAnthropic
		}
		t.Run(style, func(t *testing.T) {
			e := newCompactionEnv(t, mode, fakeprovider.Script{Turns: []fakeprovider.Turn{
				{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
				{Text: "answer after compaction", Usage: fakeprovider.Usage{Input: 3500, Output: 5}},
			}})
			e.run("run-1", prompt1)
			e.fake.InjectFault(fakeprovider.OverflowFault(mode, style, 12000, 10000))
			evs, res := e.run("run-2", prompt2)
			if res.Status != "completed" || res.Output != "answer after compaction" {
				t.Fatalf("run 2: %+v", res)
			}
			fins := find[protocol.CompactionFinish](evs)
			if len(fins) != 1 || !fins[0].OK || fins[0].Reason != "overflow" || !fins[0].WillRetry {
				t.Fatalf("compaction_finish %+v", fins)
			}
			if n := len(find[protocol.ProviderRetry](evs)); n != 0 {
				t.Errorf("an overflow used the retry budget: %d provider_retry", n)
			}
		})
	}
}

func TestSecondOverflowEndsTheRun(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{Text: "cut short", Usage: fakeprovider.Usage{Input: 12000, Output: 5}}, // a silent overflow
	}})
	e.run("run-1", prompt1)
	// The main call overflows, the summarizer answers after a retry, the
	// re-issued call overflows again (silently).
	e.fake.InjectFault(fakeprovider.OverflowFault(e.mode, "", 12000, 10000))
	e.fake.InjectFault(fakeprovider.FaultStatus{Code: 503}) // the summarizer's first attempt
	evs, res := e.run("run-2", prompt2)
	if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeContextOverflow || !strings.Contains(res.Error.Message, "larger context window") {
		t.Fatalf("run 2: %+v %+v", res, res.Error)
	}
	if n := len(find[protocol.CompactionStart](evs)); n != 1 {
		t.Fatalf("%d compactions, want exactly one per turn", n)
	}
	ops := find[protocol.ProviderOperationRetry](evs)
	if len(ops) != 1 || ops[0].Operation != "local_compaction" || ops[0].Attempt != 1 || ops[0].MaxAttempts == nil || *ops[0].MaxAttempts != 4 {
		t.Fatalf("provider_operation_retry %+v", ops)
	}
	if n := len(find[protocol.ProviderRetry](evs)); n != 0 {
		t.Errorf("the summarizer's retry was reported as the main turn's: %d provider_retry", n)
	}
}

func TestSilentOverflowIsCompacted(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{Text: "garbled", Usage: fakeprovider.Usage{Input: 12000, Output: 5}}, // the server cut the context
		{Text: "good", Usage: fakeprovider.Usage{Input: 3000, Output: 5}},
	}})
	e.run("run-1", prompt1)
	evs, res := e.run("run-2", prompt2)
	if res.Status != "completed" || res.Output != "good" {
		t.Fatalf("run 2: %+v", res)
	}
	rec := find[recoveredOutput](evs)
	if len(rec) != 1 || rec[0].Text != "garbled" {
		t.Fatalf("recovered_output %+v", rec)
	}
	var discarded int
	for _, r := range e.sessionRecords() {
		if u, ok := r.Body.(store.Usage); ok && u.Discarded {
			discarded++
		}
	}
	if discarded != 1 {
		t.Fatalf("%d discarded usage records, want 1", discarded)
	}
}

func TestSummarizerOverflowDropsOldestItems(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{Text: "ok", Usage: fakeprovider.Usage{Input: 3500, Output: 5}},
	}})
	e.run("run-1", prompt1)
	e.fake.InjectFault(fakeprovider.OverflowFault(e.mode, "", 12000, 10000))
	e.fake.InjectFault(fakeprovider.OverflowFault(e.mode, "", 12000, 10000)) // the summarizer's request
	evs, res := e.run("run-2", prompt2)
	if res.Status != "completed" {
		t.Fatalf("run 2: %+v", res)
	}
	var sums []fakeprovider.Request
	for _, r := range e.fake.Requests() {
		if r.Summary {
			sums = append(sums, r)
		}
	}
	if len(sums) != 2 || !strings.Contains(string(sums[0].RawBody), "first prompt words") || strings.Contains(string(sums[1].RawBody), "first prompt words") {
		t.Fatalf("the overflowing summarizer request did not drop its oldest item (%d requests)", len(sums))
	}
	if fins := find[protocol.CompactionFinish](evs); len(fins) != 1 || !fins[0].OK {
		t.Fatalf("compaction_finish %+v", fins)
	}
}

func TestTornCheckpointIgnoredOnResume(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, thresholdScript())
	e.run("run-1", prompt1)
	e.run("run-2", prompt2)
	path := filepath.Join(e.dir, "long.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file inside the checkpoint line, as a crash mid-append
	// would.
	i := strings.Index(string(data), `"type":"compaction"`)
	if i < 0 {
		t.Fatal("no checkpoint")
	}
	if err := os.WriteFile(path, data[:i+40], 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(e.dir, "long", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.TornTail() {
		t.Fatal("the torn checkpoint was not seen as a torn tail")
	}
	if _, ok := s.LatestCompaction(""); ok {
		t.Fatal("a torn checkpoint applies")
	}
	if msgs := s.Messages(); msgs[0].Text != prompt1 {
		t.Fatal("the conversation does not continue from before the torn checkpoint")
	}
}

// TestLongSessionKeepsAnswering reuses one session for hundreds of runs
// on a small window that the fake provider enforces: every run completes,
// and no request ever overflows.
func TestLongSessionKeepsAnswering(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 60
	}
	turns := make([]fakeprovider.Turn, runs)
	for i := range turns {
		turns[i] = fakeprovider.Turn{Text: strings.Repeat("answer text ", 40)}
	}
	e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: turns, AutoUsage: true, ContextWindow: 6000})
	e.win, e.out = 6000, 500
	compacted := 0
	for i := range runs {
		evs, res := e.run("run-"+strconv.Itoa(i), strings.Repeat("a question about the code ", 30))
		if res.Status != "completed" {
			t.Fatalf("run %d: %+v", i, res)
		}
		compacted += len(find[protocol.CompactionStart](evs))
	}
	for _, r := range e.fake.Requests() {
		if r.Fault == "overflow" {
			t.Fatal("a request passed the window")
		}
	}
	if compacted < 2 {
		t.Fatalf("the session compacted %d times, want several", compacted)
	}
	// From the second compaction on, the summarizer updates the previous
	// summary.
	updates := 0
	for _, r := range e.fake.Requests() {
		if r.Summary && strings.Contains(string(r.RawBody), "<previous-summary>") {
			updates++
		}
	}
	if updates == 0 {
		t.Fatal("no summarizer request carried the previous summary")
	}
	s, err := e.agent.OpenSession(e.dir, "long")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Statistics(); st.ModelCalls < runs+compacted {
		t.Errorf("statistics count %d calls for %d runs and %d compactions", st.ModelCalls, runs, compacted)
	}
}

// TestSummarizerUnknownUsageIsUncertain: a summarizer answer without
// usage writes a usage_uncertainty record for local_compaction, and the
// run's usage is uncertain from then on.
func TestSummarizerUnknownUsageIsUncertain(t *testing.T) {
	withUsage := func(evs []StreamEvent, in int64) []StreamEvent {
		for i := range evs {
			if evs[i].Kind == StreamUsage {
				evs[i].Usage = ProviderUsage{InputTokens: in, OutputTokens: 5}
			}
		}
		return evs
	}
	f := newFixture(t,
		withUsage(text("noted"), 3100),
		withUsage(calls(ToolCall{ID: "c1", Name: "ls", Arguments: `{}`}), 7600),
		[]StreamEvent{{Kind: StreamText, Text: "## Goal\nx"}, {Kind: StreamFinish, FinishReason: FinishStop}}, // the summary, no usage
		withUsage(text("done"), 3000),
	)
	win, out := 10000, 1000
	req := func(id, prompt string) RunRequest {
		r := f.req(prompt)
		r.RunID, r.SessionID, r.Tools = id, "u", []string{"ls"}
		r.Route.ContextWindowTokens, r.Route.MaxOutputTokens = &win, &out
		return r
	}
	f.run(req("run-1", prompt1))
	evs, res := f.run(req("run-2", prompt2))
	if res.Status != "completed" || len(find[protocol.CompactionFinish](evs)) != 1 {
		t.Fatalf("run 2: %+v %v", res, types(evs))
	}
	s, err := store.Open(f.sessions, "u", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ops []string
	for _, u := range s.UsageUncertaintyRecords() {
		ops = append(ops, u.Operation)
	}
	if !slices.Equal(ops, []string{"local_compaction"}) {
		t.Fatalf("usage_uncertainty records %v", ops)
	}
	if len(find[protocol.ProviderUsageUncertain](evs)) != 1 {
		t.Fatal("no provider_usage_uncertain event")
	}
	steps := find[protocol.ModelStep](evs)
	if !steps[len(steps)-1].UsageUncertain {
		t.Fatal("the steps after the summarizer do not say their usage is uncertain")
	}
}

// TestEvidenceCumulativeAcrossCheckpoints: the second checkpoint keeps
// the first one's file evidence and adds its own.
func TestEvidenceCumulativeAcrossCheckpoints(t *testing.T) {
	e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_r", Name: "read", Arguments: `{"path":"a.txt"}`}}, Usage: fakeprovider.Usage{Input: 3000, Output: 5}},
		{Text: "read it", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_m", Name: "read", Arguments: `{"path":"missing.txt"}`}}, Usage: fakeprovider.Usage{Input: 7600, Output: 5}},
		{Text: "third", Usage: fakeprovider.Usage{Input: 3300, Output: 5}},
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_b", Name: "read", Arguments: `{"path":"b.txt"}`}}, Usage: fakeprovider.Usage{Input: 7600, Output: 5}},
		{Text: "fourth", Usage: fakeprovider.Usage{Input: 3300, Output: 5}},
	}})
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(e.ws, f), []byte("content of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.run("run-1", prompt1)                                                // reads a.txt
	e.run("run-2", prompt2)                                                // reads missing.txt (fails), compacts run 1
	evs, res := e.run("run-3", strings.Repeat("third prompt words ", 632)) // reads b.txt, compacts run 2
	if res.Status != "completed" {
		t.Fatalf("run 3: %+v %v", res, types(evs))
	}
	cps := compactions(e.sessionRecords())
	if len(cps) != 2 {
		t.Fatalf("%d checkpoints, want 2", len(cps))
	}
	if !slices.Equal(cps[0].ReadFiles, []string{"a.txt"}) || !slices.Equal(cps[1].ReadFiles, []string{"a.txt"}) {
		t.Fatalf("read files %q then %q", cps[0].ReadFiles, cps[1].ReadFiles)
	}
	if !strings.Contains(cps[1].Summary, "<read-files>\na.txt\n</read-files>") || strings.Contains(cps[1].Summary, "missing.txt") {
		t.Fatalf("handoff %q", cps[1].Summary)
	}
}

// TestSummarizerNetworkWait: an outage before the summarizer's request
// is sent is a network wait of the operation: provider_operation_retry
// with max_attempts null, never a provider_waiting_for_network of the
// main turn; the compaction then succeeds.
func TestSummarizerNetworkWait(t *testing.T) {
	withUsage := func(evs []StreamEvent, in int64) []StreamEvent {
		for i := range evs {
			if evs[i].Kind == StreamUsage {
				evs[i].Usage = ProviderUsage{InputTokens: in, OutputTokens: 5}
			}
		}
		return evs
	}
	f := newFixture(t,
		withUsage(text("noted"), 3100),
		withUsage(calls(ToolCall{ID: "c1", Name: "ls", Arguments: `{}`}), 7600),
		withUsage(text("## Goal\nx"), 800), // the summary
		withUsage(text("done"), 3000),
	)
	// Call 2 is the summarizer's first attempt: the network is down.
	f.prov.errs = []error{nil, nil, &ProviderError{Kind: "connect", Message: "connection refused", Err: syscall.ECONNREFUSED}}
	win, out := 10000, 1000
	req := func(id, prompt string) RunRequest {
		r := f.req(prompt)
		r.RunID, r.SessionID, r.Tools = id, "w", []string{"ls"}
		r.Route.ContextWindowTokens, r.Route.MaxOutputTokens = &win, &out
		return r
	}
	f.run(req("run-1", prompt1))
	evs, res := f.run(req("run-2", prompt2))
	if res.Status != "completed" {
		t.Fatalf("run 2: %+v", res)
	}
	ops := find[protocol.ProviderOperationRetry](evs)
	if len(ops) != 1 || ops[0].Operation != "local_compaction" || ops[0].MaxAttempts != nil {
		t.Fatalf("provider_operation_retry %+v", ops)
	}
	if n := len(find[protocol.ProviderWaitingForNetwork](evs)); n != 0 {
		t.Fatalf("the summarizer's wait was reported as the main turn's (%d events)", n)
	}
	if fins := find[protocol.CompactionFinish](evs); len(fins) != 1 || !fins[0].OK {
		t.Fatalf("compaction_finish %+v", fins)
	}
}
