package store

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/provider"
)

// The compatibility sessions. testdata/compat holds session files written by
// an earlier build through this package's own Open, Append, Checkout, Fork
// and RecordUsageUncertainty, from the scenarios below (see
// testdata/compat/README.md for the commit that wrote them). They are
// regenerated only on purpose:
//
//	go test -run '^TestWriteCompat$' -write-compat ./runtime/internal/store/
//
// which must never be needed: a build that writes them differently changed
// the file format (TestCompatRewrite fails).

var writeCompat = flag.Bool("write-compat", false, "rewrite testdata/compat from the scenarios (a format change: see compat_gen_test.go)")

const compatDir = "testdata/compat"

// compatWriter drives one scenario: a session of the store, opened with a
// deterministic clock, in dir.
type compatWriter struct {
	t   testing.TB
	dir string
	id  string
	now func() time.Time
	s   *Session
}

func (w *compatWriter) open() {
	w.t.Helper()
	s, err := Open(w.dir, w.id, Options{Now: w.now})
	if err != nil {
		w.t.Fatalf("%s: Open: %v", w.id, err)
	}
	w.s = s
}

func (w *compatWriter) close() {
	w.t.Helper()
	if err := w.s.Close(); err != nil {
		w.t.Fatalf("%s: Close: %v", w.id, err)
	}
	w.s = nil
}

func (w *compatWriter) append(recs ...Record) {
	w.t.Helper()
	if err := w.s.Append(recs...); err != nil {
		w.t.Fatalf("%s: Append: %v", w.id, err)
	}
}

// raw writes line to the end of the closed session's file as it is: a
// record of a newer build, or a torn tail.
func (w *compatWriter) raw(line string) {
	w.t.Helper()
	name, err := FileName(w.id)
	if err != nil {
		w.t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		w.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		w.t.Fatal(err)
	}
}

// compatClock starts at a time with no fraction and advances by uneven
// steps, so that timestamps of every fraction length are written.
func compatClock() func() time.Time {
	t := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	steps := []time.Duration{time.Millisecond, 123456789, 1, 100 * time.Millisecond, 2*time.Second + 10}
	i := 0
	return func() time.Time {
		r := t
		t = t.Add(steps[i%len(steps)])
		i++
		return r
	}
}

func compatDigest(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// long is a text longer than skimMax, so that loading skims it.
var compatLong = strings.Repeat("A long tool output line with \"quotes\", a tab\t, <html> & unicode ✓ é 😀.\n", 4)

// compatScenarios are the sessions of testdata/compat by session ID: every
// record type, every member of every record, and the file shapes the store
// must keep reading (a checkout, a fork, records of a newer build, a torn
// tail).
var compatScenarios = []struct {
	id  string
	run func(w *compatWriter)
}{
	{"messages", func(w *compatWriter) {
		w.open()
		img, wav := compatDigest("image bytes"), compatDigest("audio bytes")
		w.append(
			Record{Body: RunStart{RunID: "run-1", DisplayText: "Look at this picture"}},
			Record{Body: ModelChange{Model: "openai/gpt-5.4", Provider: "openai", ProviderMode: "openai-responses"}},
			Record{Body: ReasoningChange{Effort: "medium"}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{
				Role: RoleUser, Text: "What is in the picture? Also \"quote\" \\ back\\slash, ctrl \x01\x1f, \u2028, <&>, é😀",
				Media: []MediaV1{
					{Type: provider.MediaImage, MIMEType: "image/png", Format: "png", SHA256: img, Bytes: 11},
					{Type: provider.MediaAudio, MIMEType: "audio/wav", Format: "wav", SHA256: wav, Bytes: 11},
				},
			}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{
				Role:      RoleAssistant,
				Text:      "Let me read the notes first.",
				Reasoning: "The user wants a description; reading notes.",
				ReasoningBlocks: []ReasoningBlockV1{
					{Text: "The user wants a description;", Signature: "EqQBCkgIARABGAIiQ==", Wire: provider.WireMessages, Model: "anthropic/claude"},
					{Redacted: "EmwKAhgBEgy3va3pzix", AfterToolCalls: 1, Wire: provider.WireMessages, Model: "anthropic/claude"},
					{Text: "reading notes.", Signature: "gAAAAABencrypted", ID: "rs_123", AfterToolCalls: 2},
				},
				ToolCalls: []ToolCallV1{
					{ID: "call_1", Name: "read", Arguments: `{"path":"NOTES.md"}`},
					{ID: "call_2", Name: "bash", Arguments: `{"command":"ls -l"}`},
					{ID: "call_3", Name: "broken", Arguments: `{"unterminated`},
				},
			}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{Role: RoleTool, ToolCallID: "call_1", ToolName: "read", Text: compatLong}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{Role: RoleTool, ToolCallID: "call_2", ToolName: "bash", Text: "permission denied", IsError: true}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{Role: RoleTool, ToolCallID: "call_3", ToolName: "broken", Text: "", IsError: true}}},
			Record{Body: Usage{RunID: "run-1", Step: 1, Model: "openai/gpt-5.4", Usage: UsageV1{
				InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1000, CacheWriteTokens: 7, ReasoningTokens: 20, TotalTokens: 1280,
			}, CostUSD: 0.00123}},
		)
		w.append(
			Record{Body: Message{RunID: "run-1", Origin: "steering", Message: MessageV1{Role: RoleUser, Text: "also check the audio"}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{
				Role: RoleDeveloper, Text: "Reasoning effort is now high.", ReasoningEffort: "high",
			}}},
			Record{Body: Message{RunID: "run-1", Message: MessageV1{
				Role: RoleAssistant, Text: "Here is a drawing and a spoken answer.",
				OutputMedia: []MediaV1{
					{Type: provider.MediaImage, MIMEType: "image/webp", Format: "webp", SHA256: compatDigest("out image"), Bytes: 9},
					{Type: provider.MediaAudio, MIMEType: "audio/mpeg", Format: "mp3", SHA256: compatDigest("out audio"), Bytes: 0},
				},
			}}},
			Record{Body: Usage{RunID: "run-1", Step: 2, Model: "openai/gpt-5.4", Usage: UsageV1{InputTokens: 1, TotalTokens: 1}, CostUSD: 1e-9}},
			Record{Body: Usage{RunID: "run-1", Step: 2, Operation: "terminal_gate", Model: "openai/gpt-5.4-mini", Usage: UsageV1{OutputTokens: 3}, CostUSD: 0.1 + 0.2}},
			Record{Body: Usage{RunID: "run-1", Step: 3, Model: "openai/gpt-5.4", Usage: UsageV1{InputTokens: 9_000_000_000}, CostUSD: 12345.678, Discarded: true}},
			Record{Body: Message{RunID: "run-1", Origin: "terminal_gate", Message: MessageV1{Role: RoleUser, Text: "The task is not done: the audio was not checked."}}},
			Record{Body: RunEnd{RunID: "run-1", Status: "completed"}},
		)
		if err := w.s.RecordUsageUncertainty("codex", "openai/gpt-5.4", "assistant_turn"); err != nil {
			w.t.Fatal(err)
		}
		w.append(
			Record{Body: RunStart{RunID: "run-2"}},
			Record{Body: ReasoningChange{Effort: "", Ultra: false}},
			Record{Body: ReasoningChange{Effort: "xhigh", Ultra: true}},
			Record{Body: Message{RunID: "run-2", Message: MessageV1{Role: RoleUser, Text: "second prompt"}}},
			Record{Body: Message{RunID: "run-2", Origin: "follow_up", Message: MessageV1{Role: RoleUser, Text: "and a follow-up"}}},
			Record{Body: Usage{Step: 0, Usage: UsageV1{}}},
			Record{Body: RunEnd{RunID: "run-2", Status: "blocked", Code: "approval_required"}},
			Record{Body: RunEnd{RunID: "run-2", Status: "error", Code: "output_too_large"}},
			Record{Body: ModelChange{Model: "local/qwen"}},
			Record{Body: Message{Message: MessageV1{Role: RoleAssistant}}},
			Record{TS: time.Date(2026, 3, 4, 5, 6, 7, 120000000, time.FixedZone("X", 3600)), Body: RunEnd{RunID: "run-3", Status: "error", Code: "provider_error"}},
		)
		w.close()
	}},
	{"tree", func(w *compatWriter) {
		w.open()
		w.append(
			Record{Body: RunStart{RunID: "r1"}},
			Record{Body: Message{RunID: "r1", Message: MessageV1{Role: RoleUser, Text: "first"}}},    // 2
			Record{Body: Message{RunID: "r1", Message: MessageV1{Role: RoleAssistant, Text: "one"}}}, // 3
			Record{Body: Usage{RunID: "r1", Step: 1, Model: "m", Usage: UsageV1{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}},
			Record{Body: RunEnd{RunID: "r1", Status: "completed"}},
			Record{Body: RunStart{RunID: "r2"}},
			Record{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleUser, Text: "second"}}},   // 7
			Record{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleAssistant, Text: "two"}}}, // 8
			Record{Body: Usage{RunID: "r2", Step: 1, Model: "m", Usage: UsageV1{InputTokens: 20, OutputTokens: 2, TotalTokens: 22}}},
			Record{Body: Compaction{
				Kind: "local", Reason: "threshold", Summary: "## Goal\nanswer twice\n\n<read-files>\na.go\n</read-files>", SummaryText: "## Goal\nanswer twice",
				ReadFiles: []string{"a.go", "dir/b c.go"}, ModifiedFiles: []string{"z.go"}, FirstKept: 2,
				TokensBefore: 24100, TokensAfterEstimate: 5200,
				Usage: &UsageV1{InputTokens: 300, OutputTokens: 40, CacheReadTokens: 1, CacheWriteTokens: 2, ReasoningTokens: 3, TotalTokens: 340},
			}}, // 10
			Record{Body: Usage{RunID: "r2", Step: 1, Operation: "local_compaction", Model: "m", Usage: UsageV1{InputTokens: 300, OutputTokens: 40, TotalTokens: 340}, CostUSD: 0.5}},
			Record{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleAssistant, Text: "after the checkpoint"}}}, // 12
			Record{Body: RunEnd{RunID: "r2", Status: "completed"}},
			Record{Body: Compaction{Reason: "overflow", Summary: "", FirstKept: 0}}, // 14: an older build's checkpoint, no kind
		)
		if err := w.s.Checkout(8); err != nil {
			w.t.Fatal(err)
		}
		w.append(
			Record{Body: RunStart{RunID: "r3", DisplayText: "retry"}},
			Record{Body: Message{RunID: "r3", Message: MessageV1{Role: RoleUser, Text: "second, again"}}},
			Record{Body: Message{RunID: "r3", Message: MessageV1{Role: RoleAssistant, Text: "two, again"}}},
			Record{Body: Usage{RunID: "r3", Step: 1, Model: "m", Usage: UsageV1{InputTokens: 30, OutputTokens: 3, TotalTokens: 33}}},
			Record{Body: RunEnd{RunID: "r3", Status: "completed"}},
		)
		if err := w.s.Checkout(0); err != nil {
			w.t.Fatal(err)
		}
		if err := w.s.Checkout(3); err != nil {
			w.t.Fatal(err)
		}
		f, err := w.s.Fork("tree-fork")
		if err != nil {
			w.t.Fatal(err)
		}
		if err := f.Append(Record{Body: Message{RunID: "r9", Message: MessageV1{Role: RoleUser, Text: "in the fork"}}}); err != nil {
			w.t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			w.t.Fatal(err)
		}
		w.close()
	}},
	{"native", func(w *compatWriter) {
		w.open()
		w.append(
			Record{Body: ModelChange{Model: "openai/gpt-5.4", Provider: "openai", ProviderMode: "openai-responses"}},
			Record{Body: RunStart{RunID: "n1"}},
			Record{Body: Message{RunID: "n1", Message: MessageV1{Role: RoleUser, Text: "hello"}}},
			Record{Body: Message{RunID: "n1", Message: MessageV1{Role: RoleAssistant, Text: "hi"}}},
			Record{Body: Compaction{
				Kind: "native", Reason: "threshold", FirstKept: 2, TokensBefore: 90000,
				Items: jsontext.Value(`[{"type":"compaction","encrypted_content":"gAAAA"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}]`),
				Route: "openai/gpt-5.4",
			}},
			Record{Body: Usage{RunID: "n1", Step: 1, Operation: "native_compaction", Model: "openai/gpt-5.4", Usage: UsageV1{InputTokens: 5}}},
			Record{Body: NativeSteering{IntentID: "ns-1", Event: NativeIntent, RunID: "n1", PreviousResponseID: "resp_1", InputSHA256: compatDigest("steer")}},
			Record{Body: NativeSteering{IntentID: "ns-1", Event: NativeAccepted, SteerID: "steer_1"}},
			Record{Body: Message{RunID: "n1", Origin: "steering", Message: MessageV1{Role: RoleUser, Text: "steer"}}},
			Record{Body: NativeSteering{IntentID: "ns-1", Event: NativeLinked, ResponseID: "resp_2", Step: 2}},
			Record{Body: NativeSteering{IntentID: "ns-1", Event: NativeSettled, Outcome: NativeOutcomeDelivered}},
			Record{Body: NativeSteering{IntentID: "ns-2", Event: NativeIntent, RunID: "n1", PreviousResponseID: "resp_2", InputSHA256: compatDigest("steer 2")}},
			Record{Body: NativeSteering{IntentID: "ns-2", Event: NativeSettled, Outcome: NativeOutcomeFailed}},
			Record{Body: NativeSteering{IntentID: "ns-3", Event: NativeIntent, RunID: "n1", PreviousResponseID: "resp_2", InputSHA256: compatDigest("steer 3")}},
			Record{Body: NativeSteering{IntentID: "ns-3", Event: NativeUnknown}},
			Record{Body: Compaction{Kind: "native", Reason: "overflow", FirstKept: 3, Items: jsontext.Value(`[]`), Route: "other/route"}},
			Record{Body: Message{RunID: "n1", Message: MessageV1{Role: RoleAssistant, Text: "done"}}},
			Record{Body: RunEnd{RunID: "n1", Status: "error", Code: "steering_unknown"}},
		)
		w.close()
	}},
	{"future", func(w *compatWriter) {
		w.open()
		w.append(
			Record{Body: RunStart{RunID: "f1"}},
			Record{Body: Message{RunID: "f1", Message: MessageV1{Role: RoleUser, Text: "hi"}}},
		)
		w.close()
		// Records of a newer build: an unknown type, and known types with
		// members this build does not know.
		w.raw(`{"type":"hologram","ts":"2027-01-01T00:00:00Z","payload":{"x":[1,2,3]}}` + "\n")
		w.raw(`{"type":"message","ts":"2027-01-01T00:00:01Z","run_id":"f1","message":{"role":"assistant","text":"from the future","sentiment":"glad"},"priority":3}` + "\n")
		w.raw(`{"type":"run_end","ts":"2027-01-01T00:00:02Z","run_id":"f1","status":"completed","duration_ms":12}` + "\n")
		w.open()
		w.append(
			Record{Body: RunStart{RunID: "f2"}},
			Record{Body: Message{RunID: "f2", Message: MessageV1{Role: RoleUser, Text: "today again"}}},
			Record{Body: RunEnd{RunID: "f2", Status: "completed"}},
		)
		w.close()
	}},
	{"torn", compatTorn},
	{"torn-repaired", func(w *compatWriter) {
		// torn, then opened and appended to by the same build: the torn
		// tail is truncated away.
		compatTorn(w)
		w.open()
		w.append(
			Record{Body: Message{RunID: "t1", Message: MessageV1{Role: RoleAssistant, Text: "after the crash"}}},
			Record{Body: RunEnd{RunID: "t1", Status: "error", Code: "interrupted"}},
		)
		w.close()
	}},
}

// compatTorn leaves a torn last line, as a crash mid-append does.
func compatTorn(w *compatWriter) {
	w.open()
	w.append(
		Record{Body: RunStart{RunID: "t1"}},
		Record{Body: Message{RunID: "t1", Message: MessageV1{Role: RoleUser, Text: "before the crash"}}},
	)
	w.close()
	w.raw(`{"type":"message","ts":"2026-03-04T05:06:08Z","run_id":"t1","message":{"role":"assis`)
}

// writeCompatSessions runs every scenario in dir (each in a folder of its
// own, so a scenario that builds on another starts afresh) and moves the
// session files into dir.
func writeCompatSessions(t testing.TB, dir string) {
	for _, sc := range compatScenarios {
		sub := filepath.Join(t.TempDir(), sc.id)
		sc.run(&compatWriter{t: t, dir: sub, id: strings.TrimSuffix(sc.id, "-repaired"), now: compatClock()})
		files, err := filepath.Glob(filepath.Join(sub, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := filepath.Base(f)
			if strings.HasSuffix(sc.id, "-repaired") {
				name = sc.id + ".jsonl"
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWriteCompat rewrites testdata/compat with -write-compat; otherwise it
// is skipped.
func TestWriteCompat(t *testing.T) {
	if !*writeCompat {
		t.Skip("run with -write-compat to rewrite testdata/compat")
	}
	if err := os.MkdirAll(compatDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeCompatSessions(t, compatDir)
	// What this build reads back from them (TestCompatRead).
	files, err := filepath.Glob(filepath.Join(compatDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		s, _ := openCompatCopy(t, f, nil)
		if err := os.WriteFile(strings.TrimSuffix(f, ".jsonl")+".read.txt", []byte(describeSession(s)), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}
