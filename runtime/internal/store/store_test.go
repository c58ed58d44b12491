package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"octet.dev/host/runtime/provider"
)

// childEnv switches the test binary into a child role (see child_test.go).
const childEnv = "OCTET_STORE_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

// clock returns a deterministic clock that advances 1ms per call.
func clock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func openT(t *testing.T, dir, id string) *Session {
	t.Helper()
	s, err := Open(dir, id, Options{Now: clock()})
	if err != nil {
		t.Fatalf("Open(%q): %v", id, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sampleRecords() []Record {
	return []Record{
		{Body: RunStart{RunID: "run-1", DisplayText: "Summarize MEMORY.md"}},
		{Body: ModelChange{Model: "gpt-5.6", Provider: "openai", ProviderMode: "responses"}},
		{Body: ReasoningChange{Effort: "high"}},
		{Body: Message{RunID: "run-1", Message: MessageV1{Role: RoleUser, Text: "Summarize MEMORY.md"}}},
		{Body: Message{RunID: "run-1", Message: MessageV1{
			Role:            RoleAssistant,
			Reasoning:       "look first",
			ReasoningBlocks: []ReasoningBlockV1{{Text: "look first", Signature: "sig=="}, {Redacted: "EmwKAhgBEgy3va3pzix"}},
			ToolCalls:       []ToolCallV1{{ID: "call_1", Name: "read", Arguments: `{"path":"MEMORY.md"}`}},
		}}},
		{Body: Message{RunID: "run-1", Message: MessageV1{
			Role: RoleTool, ToolCallID: "call_1", ToolName: "read", Text: "line\n\"quoted\"\t<&>", IsError: true,
		}}},
		{Body: Usage{RunID: "run-1", Step: 1, Model: "gpt-5.6", Usage: UsageV1{
			InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1000, ReasoningTokens: 20, TotalTokens: 1280,
		}, CostUSD: 0.00123}},
		{Body: Message{RunID: "run-1", Message: MessageV1{Role: RoleAssistant, Text: "Done. ✓"}}},
		{Body: RunEnd{RunID: "run-1", Status: "completed"}},
	}
}

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	s := openT(t, dir, "customer-42")
	if s.TornTail() || len(s.Records()) != 0 {
		t.Fatalf("new session: torn=%v records=%d", s.TornTail(), len(s.Records()))
	}
	wantHeader := Header{SchemaVersion: 1, ID: "customer-42", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, int(time.Millisecond), time.UTC)}
	if diff := cmp.Diff(wantHeader, s.Header()); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	recs := sampleRecords()
	if err := s.Append(recs[:3]...); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[3:] {
		if err := s.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	appended := s.Records()
	for i, r := range appended {
		if r.TS.IsZero() || r.TS.Location() != time.UTC {
			t.Errorf("record %d: TS %v not filled in UTC", i, r.TS)
		}
		if diff := cmp.Diff(recs[i].Body, r.Body); diff != "" {
			t.Errorf("record %d body (-want +got):\n%s", i, diff)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
	}
	if got, want := filepath.Base(s.Path()), "customer-42.jsonl"; got != want {
		t.Errorf("file name %q, want %q", got, want)
	}
	if _, err := os.Stat(s.Path() + tmpSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}

	r := openT(t, dir, "customer-42")
	if diff := cmp.Diff(appended, r.Records()); diff != "" {
		t.Errorf("reloaded records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHeader, r.Header()); diff != "" {
		t.Errorf("reloaded header (-want +got):\n%s", diff)
	}
	if r.TornTail() || r.UnknownRecords() != 0 || r.HasUncertainUsage() {
		t.Errorf("reloaded: torn=%v unknown=%d uncertain=%v", r.TornTail(), r.UnknownRecords(), r.HasUncertainUsage())
	}
	if got := r.LatestReasoning(); got != "high" {
		t.Errorf("LatestReasoning = %q, want high", got)
	}
	var wantMsgs []provider.Message
	for _, rec := range recs {
		if m, ok := rec.Body.(Message); ok {
			wantMsgs = append(wantMsgs, m.Message.Provider())
		}
	}
	wantMsgs[0].NewTurn = true // the run's prompt
	if diff := cmp.Diff(wantMsgs, r.Messages()); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}

	data, err := os.ReadFile(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 1+len(recs) {
		t.Fatalf("%d lines, want %d", len(lines), 1+len(recs))
	}
	if want := `{"type":"session","schema_version":1,"id":"customer-42","created_at":"2026-01-02T03:04:05.001Z"}`; lines[0] != want {
		t.Errorf("header line\n got %s\nwant %s", lines[0], want)
	}
	for i, l := range lines[1:] {
		if want := `{"type":"` + recs[i].Type() + `","ts":"`; !strings.HasPrefix(l, want) {
			t.Errorf("line %d = %s, want prefix %s", i+2, l, want)
		}
	}
}

func TestUsageUncertaintyLine(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "u")
	if err := s.RecordUsageUncertainty("codex", "openai/gpt-5.4", "assistant_turn"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	got := lines[1]
	want := `{"type":"usage_uncertainty","ts":"2026-01-02T03:04:05.002Z","record":{"endpoint":"codex","model":"openai/gpt-5.4","operation":"assistant_turn"}}` + "\n"
	if got != want {
		t.Errorf("line\n got %s\nwant %s", got, want)
	}
	if len(s.Messages()) != 0 {
		t.Errorf("uncertainty changed the conversation: %v", s.Messages())
	}
}

func TestUsageUncertaintySticky(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "sticky")
	if s.HasUncertainUsage() {
		t.Fatal("new session is uncertain")
	}
	msg := Record{Body: Message{Message: MessageV1{Role: RoleUser, Text: "hi"}}}
	if err := s.Append(msg, msg); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsageUncertainty("codex", "openai/gpt-5.4", "assistant_turn"); err != nil {
		t.Fatal(err)
	}
	// Later success and a compaction do not clear it.
	if err := s.Append(
		Record{Body: Usage{Step: 2, Usage: UsageV1{InputTokens: 1}}},
		Record{Body: Compaction{Summary: "earlier", FirstKept: 2}},
		msg,
	); err != nil {
		t.Fatal(err)
	}
	want := []UsageUncertainty{{Endpoint: "codex", Model: "openai/gpt-5.4", Operation: "assistant_turn"}}
	if diff := cmp.Diff(want, s.UsageUncertaintyRecords()); diff != "" {
		t.Errorf("before reopen (-want +got):\n%s", diff)
	}
	s.Close()
	for i := range 2 {
		r := openT(t, dir, "sticky")
		if !r.HasUncertainUsage() {
			t.Fatalf("reopen %d: uncertainty lost", i)
		}
		if diff := cmp.Diff(want, r.UsageUncertaintyRecords()); diff != "" {
			t.Errorf("reopen %d (-want +got):\n%s", i, diff)
		}
		r.Close()
	}
}

// writeFile writes a session file by hand: a valid header for id, then lines.
func writeFile(t *testing.T, dir, id string, tail ...string) string {
	t.Helper()
	name, err := FileName(id)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	content := fmt.Sprintf(`{"type":"session","schema_version":1,"id":%q,"created_at":"2026-01-02T03:04:05Z"}`+"\n", id)
	content += strings.Join(tail, "")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	goodMsg  = `{"type":"message","ts":"2026-01-02T03:04:06Z","message":{"role":"user","text":"one"}}` + "\n"
	goodMsg2 = `{"type":"message","ts":"2026-01-02T03:04:07Z","run_id":"r","message":{"role":"assistant","text":"two"}}` + "\n"
)

func TestTornTail(t *testing.T) {
	tests := []struct {
		name string
		tail string
	}{
		{"complete record without newline", strings.TrimSuffix(goodMsg2, "\n")},
		{"half a JSON object", goodMsg2[:len(goodMsg2)/2]},
		{"garbage last line", "\x00\x00garbage}{\n"},
		{"truncated object with newline", `{"type":"message","ts":"2026-01-02T03:04:07Z","mess` + "\n"},
		{"known type, bad field", `{"type":"usage","ts":"2026-01-02T03:04:07Z","step":"x"}` + "\n"},
		{"blank last line", "\n"},
		{"single byte", "{"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "torn", goodMsg, tt.tail)
			before, _ := os.ReadFile(path)
			good := len(before) - len(tt.tail)

			s := openT(t, dir, "torn")
			if !s.TornTail() || s.TornBytes() != int64(len(tt.tail)) {
				t.Fatalf("TornTail=%v TornBytes=%d, want true %d", s.TornTail(), s.TornBytes(), len(tt.tail))
			}
			if n := len(s.Records()); n != 1 {
				t.Fatalf("%d records, want 1", n)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Fatal("load modified the file")
			}
			if err := s.Append(Record{Body: Message{Message: MessageV1{Role: RoleUser, Text: "three"}}}); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after[:good], before[:good]) {
				t.Fatal("good prefix changed")
			}
			newLine := string(after[good:])
			if !strings.HasPrefix(newLine, `{"type":"message"`) || strings.Count(newLine, "\n") != 1 || !strings.HasSuffix(newLine, "\n") {
				t.Fatalf("appended tail is not one clean line: %q", newLine)
			}
			s.Close()

			r := openT(t, dir, "torn")
			if r.TornTail() {
				t.Error("torn tail after append")
			}
			var texts []string
			for _, m := range r.Messages() {
				texts = append(texts, m.Text)
			}
			if diff := cmp.Diff([]string{"one", "three"}, texts); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTornTailKeptWithoutAppend(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "keep", goodMsg, "{")
	s := openT(t, dir, "keep")
	if !s.TornTail() {
		t.Fatal("no torn tail")
	}
	s.Close()
	data, _ := os.ReadFile(path)
	if !bytes.HasSuffix(data, []byte("\n{")) {
		t.Errorf("open and close without append changed the file: %q", data)
	}
}

func TestCorruptMiddle(t *testing.T) {
	tests := []struct {
		name string
		bad  string
	}{
		{"garbage", "garbage\n"},
		{"half object", goodMsg[:20] + "\n"},
		{"blank line", "\n"},
		{"not an object", "[1,2]\n"},
		{"no type", `{"ts":"2026-01-02T03:04:06Z"}` + "\n"},
		{"empty type", `{"type":"","ts":"2026-01-02T03:04:06Z"}` + "\n"},
		{"wrong field type", `{"type":"usage","ts":"2026-01-02T03:04:06Z","step":"one"}` + "\n"},
		{"missing ts", `{"type":"message","message":{"role":"user"}}` + "\n"},
		{"message without role", `{"type":"message","ts":"2026-01-02T03:04:06Z","message":{"text":"x"}}` + "\n"},
		{"duplicate member", `{"type":"message","ts":"2026-01-02T03:04:06Z","ts":"2026-01-02T03:04:06Z","message":{"role":"user"}}` + "\n"},
		{"invalid UTF-8", `{"type":"message","ts":"2026-01-02T03:04:06Z","message":{"role":"user","text":"` + "\xff" + `"}}` + "\n"},
		{"second header", `{"type":"session","schema_version":1,"id":"c","created_at":"2026-01-02T03:04:05Z"}` + "\n"},
		{"compaction past the end", `{"type":"compaction","ts":"2026-01-02T03:04:06Z","summary":"s","first_kept":2}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "c", goodMsg, tt.bad, goodMsg2)
			s, err := Open(dir, "c", Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded on a corrupt file")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Line != 3 {
				t.Fatalf("error %v: want a CorruptError at line 3", err)
			}
			if !strings.Contains(err.Error(), "line 3") {
				t.Errorf("message %q does not name the line", err)
			}
			// The failed Open released the lock.
			if _, err := Open(dir, "c", Options{}); errors.Is(err, ErrLocked) {
				t.Fatal("lock kept after a failed Open")
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	const rec = `{"type":"message","ts":"2026-01-02T03:04:06Z","message":{"role":"user"}}` + "\n"
	tests := []struct {
		name    string
		content string
		want    error
	}{
		{"empty file", "", ErrCorrupt},
		{"missing header", rec + rec, ErrCorrupt},
		{"header without newline", `{"type":"session","schema_version":1,"id":"h","created_at":"2026-01-02T03:04:05Z"}`, ErrCorrupt},
		{"garbage header", "hello\n" + rec, ErrCorrupt},
		{"wrong type", `{"type":"sessions","schema_version":1,"id":"h"}` + "\n", ErrCorrupt},
		{"no schema version", `{"type":"session","id":"h"}` + "\n", ErrCorrupt},
		{"schema version as string", `{"type":"session","schema_version":"1","id":"h"}` + "\n", ErrCorrupt},
		{"other id", `{"type":"session","schema_version":1,"id":"other"}` + "\n", ErrCorrupt},
		{"schema version 2", `{"type":"session","schema_version":2,"id":"h"}` + "\n" + rec, ErrUnsupportedSchema},
		{"schema version 0", `{"type":"session","schema_version":0,"id":"h"}` + "\n", ErrUnsupportedSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "h.jsonl"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, "h", Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if tt.want == ErrUnsupportedSchema && errors.Is(err, ErrCorrupt) {
				t.Errorf("unsupported schema also reported as corrupt: %v", err)
			}
			var ce *CorruptError
			if tt.want == ErrCorrupt && (!errors.As(err, &ce) || ce.Line != 1) {
				t.Errorf("error %v: want CorruptError at line 1", err)
			}
		})
	}
}

func TestLockInProcess(t *testing.T) {
	dir := t.TempDir()
	a := openT(t, dir, "busy")
	if _, err := Open(dir, "busy", Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	// Another session in the same directory is independent.
	openT(t, dir, "other")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := openT(t, dir, "busy")
	if err := b.Append(Record{Body: ReasoningChange{Effort: "low"}}); err != nil {
		t.Fatal(err)
	}
}

func TestClosed(t *testing.T) {
	s := openT(t, t.TempDir(), "closed")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Append(Record{Body: ReasoningChange{}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if err := s.RecordUsageUncertainty("e", "m", "o"); !errors.Is(err, ErrClosed) {
		t.Errorf("RecordUsageUncertainty after Close: %v, want ErrClosed", err)
	}
}

func TestAppendInvalid(t *testing.T) {
	s := openT(t, t.TempDir(), "inv")
	good := Record{Body: Message{Message: MessageV1{Role: RoleUser}}}
	tests := []struct {
		name string
		recs []Record
	}{
		{"nil body", []Record{{}}},
		{"unknown", []Record{{Body: Unknown{Type: "x", Raw: jsontext.Value(`{"type":"x"}`)}}}},
		{"message without role", []Record{good, {Body: Message{}}}},
		{"compaction past the end", []Record{good, {Body: Compaction{Summary: "s", FirstKept: 2}}}},
		{"negative first_kept", []Record{{Body: Compaction{Summary: "s", FirstKept: -1}}}},
		{"run_end without status", []Record{{Body: RunEnd{RunID: "r"}}}},
		{"time out of range", []Record{{TS: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Body: RunEnd{RunID: "r", Status: "completed"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(s.Path())
			if err := s.Append(tt.recs...); !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("Append: %v, want ErrInvalidRecord", err)
			}
			if after, _ := os.ReadFile(s.Path()); !bytes.Equal(before, after) {
				t.Error("a refused batch wrote to the file")
			}
			if len(s.Records()) != 0 {
				t.Error("a refused batch reached Records")
			}
		})
	}
	// A compaction may keep everything before it, or nothing.
	if err := s.Append(good, Record{Body: Compaction{Summary: "s", FirstKept: 1}}, Record{Body: Compaction{Summary: "t", FirstKept: 0}}); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownRecords(t *testing.T) {
	dir := t.TempDir()
	future := `{"type":"steering_intent","ts":"2026-01-02T03:04:06Z","op":{"id":7}}`
	noTS := `{"type":"future_thing","x":[1,2,3]}`
	withExtra := `{"type":"message","ts":"2026-01-02T03:04:08Z","message":{"role":"user","text":"x","annotations":[{"type":"image"}]},"new_member":true}`
	writeFile(t, dir, "fwd", goodMsg, future+"\n", noTS+"\n", withExtra+"\n")
	s := openT(t, dir, "fwd")
	if s.UnknownRecords() != 2 {
		t.Fatalf("UnknownRecords = %d, want 2", s.UnknownRecords())
	}
	recs := s.Records()
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	wantUnknown := Record{
		TS:   time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Body: Unknown{Type: "steering_intent", Raw: jsontext.Value(future)},
	}
	if diff := cmp.Diff(wantUnknown, recs[1]); diff != "" {
		t.Errorf("unknown record (-want +got):\n%s", diff)
	}
	if recs[2].Type() != "future_thing" || !recs[2].TS.IsZero() {
		t.Errorf("record 2 = %+v", recs[2])
	}
	var texts []string
	for _, m := range s.Messages() {
		texts = append(texts, m.Text)
	}
	if diff := cmp.Diff([]string{"one", "x"}, texts); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// Appending after unknown records keeps them.
	if err := s.Append(Record{Body: ReasoningChange{Effort: "low"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r := openT(t, dir, "fwd")
	if r.UnknownRecords() != 2 || len(r.Records()) != 5 {
		t.Errorf("after append: unknown=%d records=%d", r.UnknownRecords(), len(r.Records()))
	}
}

func TestMessagesCompaction(t *testing.T) {
	s := openT(t, t.TempDir(), "cp")
	msg := func(text string) Record {
		return Record{Body: Message{Message: MessageV1{Role: RoleUser, Text: text}}}
	}
	if err := s.Append(msg("m0"), msg("m1"), msg("m2"), msg("m3"), msg("m4"),
		Record{Body: Compaction{Summary: "first", FirstKept: 2}}, msg("m5")); err != nil {
		t.Fatal(err)
	}
	texts := func() []string {
		var out []string
		for _, m := range s.Messages() {
			out = append(out, string(m.Role)+":"+m.Text)
		}
		return out
	}
	if diff := cmp.Diff([]string{"user:" + WrapSummary("first"), "user:m2", "user:m3", "user:m4", "user:m5"}, texts()); diff != "" {
		t.Errorf("after first compaction (-want +got):\n%s", diff)
	}
	if err := s.Append(Record{Body: Compaction{Summary: "second", FirstKept: 5}}, msg("m6")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"user:" + WrapSummary("second"), "user:m5", "user:m6"}, texts()); diff != "" {
		t.Errorf("after second compaction (-want +got):\n%s", diff)
	}
	if err := s.Append(Record{Body: Compaction{Summary: "all", FirstKept: 7}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"user:" + WrapSummary("all")}, texts()); diff != "" {
		t.Errorf("after full compaction (-want +got):\n%s", diff)
	}
}

func TestInvalidUTF8Mangled(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "utf8")
	if err := s.Append(Record{Body: Message{Message: MessageV1{Role: RoleTool, Text: "a\xffb"}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r := openT(t, dir, "utf8")
	if got := r.Messages()[0].Text; got != "a\uFFFDb" {
		t.Errorf("text = %q, want a\\uFFFDb", got)
	}
}

func TestOpenInvalidID(t *testing.T) {
	for _, id := range []string{"", "a/b", "../x", strings.Repeat("a", 129), "a b", "é"} {
		if _, err := Open(t.TempDir(), id, Options{}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Open(%q): %v, want ErrInvalidID", id, err)
		}
	}
}

func TestOpenRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.Symlink(target, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, "link", Options{}); err == nil {
		s.Close()
		t.Fatal("Open followed a symlink")
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("symlink target was created: %v", err)
	}
}

func TestDotIDsStayInside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "sessions")
	for _, id := range []string{".", "..", "...", ".:"} {
		s := openT(t, dir, id)
		if filepath.Dir(s.Path()) != dir {
			t.Errorf("%q: path %s outside %s", id, s.Path(), dir)
		}
		s.Close()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files outside the session dir: %v", entries)
	}
}

func TestFailedStaysFailed(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "fail")
	if err := s.Append(Record{Body: ReasoningChange{Effort: "low"}}); err != nil {
		t.Fatal(err)
	}
	// Make the next write fail: the session's descriptor becomes a
	// read-only one of the same file.
	ro, err := os.Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	s.f, s.src = osFile{ro}, ro
	rec := Record{Body: ReasoningChange{Effort: "high"}}
	if err := s.Append(rec); !errors.Is(err, ErrFailed) {
		t.Fatalf("Append on a broken file: %v, want ErrFailed", err)
	}
	if err := s.Append(rec); !errors.Is(err, ErrFailed) {
		t.Fatalf("Append after a failure: %v, want ErrFailed", err)
	}
	if len(s.Records()) != 1 || s.LatestReasoning() != "low" {
		t.Errorf("a failed append reached memory: %d records, reasoning %q", len(s.Records()), s.LatestReasoning())
	}
	_ = s.Close()
	r := openT(t, dir, "fail")
	if len(r.Records()) != 1 {
		t.Errorf("%d records after reopen, want 1", len(r.Records()))
	}
}

func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	openT(t, dir, "m")
	_, err := Open(dir, "m", Options{})
	if want := "store: session locked: " + filepath.Join(dir, "m.jsonl"); err == nil || err.Error() != want {
		t.Errorf("locked: %v, want %s", err, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "v.jsonl"), []byte(`{"type":"session","schema_version":9,"id":"v"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, "v", Options{})
	if want := "store: unsupported session schema version: 9 (this build reads 1): " + filepath.Join(dir, "v.jsonl"); err == nil || err.Error() != want {
		t.Errorf("schema: %v, want %s", err, want)
	}
}

// TestRunEnds: each run's end in the order runs first ended, a later
// run_end of the same run superseding the earlier, codes kept across a
// reload.
func TestRunEnds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	s := openT(t, dir, "ends")
	if err := s.Append(
		Record{Body: RunStart{RunID: "a"}},
		Record{Body: RunEnd{RunID: "a", Status: "blocked", Code: "max_steps_reached"}},
		Record{Body: RunStart{RunID: "b"}},
		Record{Body: RunEnd{RunID: "b", Status: "completed"}},
		Record{Body: RunEnd{RunID: "b", Status: "error", Code: "output_too_large"}},
	); err != nil {
		t.Fatal(err)
	}
	want := []RunEnd{{RunID: "a", Status: "blocked", Code: "max_steps_reached"}, {RunID: "b", Status: "error", Code: "output_too_large"}}
	if diff := cmp.Diff(want, s.RunEnds()); diff != "" {
		t.Errorf("RunEnds (-want +got):\n%s", diff)
	}
	s.Close()
	if diff := cmp.Diff(want, openT(t, dir, "ends").RunEnds()); diff != "" {
		t.Errorf("reloaded RunEnds (-want +got):\n%s", diff)
	}
}
