package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/store"
)

// nativeEnv is a compactionEnv whose route is a ~/.octet/models.json
// Responses model that declares native compaction.
func nativeEnv(t *testing.T, sc fakeprovider.Script) *compactionEnv {
	t.Helper()
	e := newCompactionEnv(t, fakeprovider.ModeResponses, sc)
	home := t.TempDir()
	cfg := `{"providers":{"fakeresp":{"base_url":"` + e.fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses","api_key_env":"FAKE_KEY","native_compaction":true,
		"models":[{"id":"resp-model","context_window_tokens":10000,"max_output_tokens":1000}]}}}`
	if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Home: home, Getenv: func(k string) string {
		if k == "FAKE_KEY" {
			return "sk-fake"
		}
		return ""
	}, Jitter: func() float64 { return 0 }, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	e.agent = a
	return e
}

func (e *compactionEnv) runCatalog(runID, model, prompt string) ([]Event, protocol.FinalResult) {
	e.t.Helper()
	rc, err := e.agent.Run(context.Background(), RunRequest{RunID: runID, Workspace: e.ws, Model: model, Prompt: prompt,
		SessionDir: e.dir, SessionID: "long", Tools: []string{"ls", "read"}})
	if err != nil {
		e.t.Fatal(err)
	}
	var evs []Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait()
}

// TestNativeCompactionStoredVerbatim: on a route declaring native
// compaction, the threshold compaction calls the compaction endpoint (no
// summarizer), the checkpoint holds its output items byte for byte, and
// the next request sends them unaltered; a run of the same session on
// another route never sends them and goes on from the raw history.
func TestNativeCompactionStoredVerbatim(t *testing.T) {
	e := nativeEnv(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{}`}}, Usage: fakeprovider.Usage{Input: 7600, Output: 10}},
		{Text: "all done", Usage: fakeprovider.Usage{Input: 500, Output: 5}},
		{Text: "on chat", Usage: fakeprovider.Usage{Input: 500, Output: 5}},
	}})
	if _, res := e.runCatalog("run-1", "resp-model", prompt1); res.Status != "completed" {
		t.Fatalf("run 1: %+v %+v", res, res.Error)
	}
	evs, res := e.runCatalog("run-2", "resp-model", prompt2)
	if res.Status != "completed" || res.Output != "all done" {
		t.Fatalf("run 2: %+v %+v", res, res.Error)
	}
	fins := find[protocol.CompactionFinish](evs)
	if len(fins) != 1 || !fins[0].OK || fins[0].Kind != "native" || fins[0].SummaryBytes != 0 {
		t.Fatalf("compaction_finish %+v", fins)
	}
	if e.fake.Compactions() != 1 {
		t.Fatalf("%d compaction endpoint calls, want 1", e.fake.Compactions())
	}
	var compactBody []byte
	for _, r := range e.fake.Requests() {
		if r.Summary {
			t.Fatal("a native route called the summarizer")
		}
		if r.Path == "/v1/responses/compact" {
			compactBody = r.RawBody
		}
	}
	cps := compactions(e.sessionRecords())
	if len(cps) != 1 || cps[0].Kind != "native" || cps[0].Summary != "" || cps[0].Route == "" {
		t.Fatalf("checkpoints %+v", cps)
	}
	content := fakeprovider.CompactionContent(compactBody)
	if !bytes.Contains(cps[0].Items, []byte(content)) {
		t.Fatal("the checkpoint does not hold the endpoint's items")
	}
	// The next request: the items, verbatim, then nothing of the
	// compacted history.
	reqs := mainRequests(e.fake)
	last := reqs[len(reqs)-1]
	var items []jsontext.Value
	if err := json.Unmarshal(cps[0].Items, &items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if !bytes.Contains(last.RawBody, it) {
			t.Fatalf("the item %s was not sent verbatim", it)
		}
	}
	if strings.Contains(string(last.RawBody), "first prompt words") {
		t.Fatal("the request after native compaction holds compacted history")
	}

	// The same session on a Chat route: the items never go there.
	evs, res = e.run("run-3", "and on chat?")
	if res.Status != "completed" {
		t.Fatalf("run 3: %+v %+v", res, res.Error)
	}
	chat := mainRequests(e.fake)
	body := string(chat[len(chat)-1].RawBody)
	if strings.Contains(body, content) || strings.Contains(body, `"compaction"`) {
		t.Fatal("native items crossed to another route")
	}
	if !strings.Contains(body, "first prompt words") {
		t.Fatal("another route does not continue from the raw history")
	}
	if len(find[protocol.CompactionStart](evs)) != 0 {
		t.Fatal("run 3 compacted")
	}
	s, err := store.Open(e.dir, "long", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.LatestCompaction(""); ok {
		t.Fatal("a native checkpoint applies without its route")
	}
}

// TestNativeCompactionOverflowAndRetry: an overflow on a native route
// compacts natively (reason overflow) and re-issues the step; the
// endpoint's transient failure is retried as provider_operation_retry
// with operation native_compaction, and its usage is in the ledger.
func TestNativeCompactionOverflowAndRetry(t *testing.T) {
	e := nativeEnv(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
		{Text: "after overflow", Usage: fakeprovider.Usage{Input: 900, Output: 5}},
	}})
	e.runCatalog("run-1", "resp-model", prompt1)
	e.fake.InjectFault(fakeprovider.OverflowFault(fakeprovider.ModeResponses, "", 12000, 10000))
	e.fake.InjectFault(fakeprovider.FaultStatus{Code: 503})
	evs, res := e.runCatalog("run-2", "resp-model", prompt2)
	if res.Status != "completed" || res.Output != "after overflow" {
		t.Fatalf("run 2: %+v %+v", res, res.Error)
	}
	fins := find[protocol.CompactionFinish](evs)
	if len(fins) != 1 || !fins[0].OK || fins[0].Kind != "native" || fins[0].Reason != "overflow" || !fins[0].WillRetry {
		t.Fatalf("compaction_finish %+v", fins)
	}
	ops := find[protocol.ProviderOperationRetry](evs)
	if len(ops) != 1 || ops[0].Operation != "native_compaction" {
		t.Fatalf("provider_operation_retry %+v", ops)
	}
	if e.fake.Compactions() != 2 {
		t.Fatalf("%d compaction endpoint calls, want 2 (one failed)", e.fake.Compactions())
	}
	var aux int
	for _, r := range e.sessionRecords() {
		if u, ok := r.Body.(store.Usage); ok && u.Operation == "native_compaction" {
			aux++
		}
	}
	if aux != 1 {
		t.Fatalf("%d native_compaction usage records, want 1", aux)
	}
}
