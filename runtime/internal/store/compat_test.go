package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/provider"
)

// compatFiles lists the session files of testdata/compat.
func compatFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(compatDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("testdata/compat holds %d session files, want 7", len(files))
	}
	return files
}

// openCompatCopy copies the session file src into a new folder under the
// name of its header's ID and opens it there.
func openCompatCopy(t *testing.T, src string, now func() time.Time) (*Session, []byte) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var h struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(first, &h); err != nil {
		t.Fatalf("%s: header: %v", src, err)
	}
	name, err := FileName(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, h.ID, Options{Now: now})
	if err != nil {
		t.Fatalf("%s: Open: %v", src, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, data
}

// TestCompatRewrite runs the scenarios that wrote testdata/compat with this
// build: every file must come out byte for byte as the earlier build wrote
// it (the appends, the checkouts, the fork, the repair of a torn tail).
func TestCompatRewrite(t *testing.T) {
	dir := t.TempDir()
	writeCompatSessions(t, dir)
	for _, f := range compatFiles(t) {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s: not written: %v", filepath.Base(f), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: this build writes the scenario differently:\n%s", filepath.Base(f), lineDiff(want, got))
		}
	}
}

// lineDiff shows the first line where got and want differ.
func lineDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return "(same lines)"
}

// TestCompatRead opens every compatibility session with this build and
// compares what it reads back (the conversation on every route, the
// entries, the checkpoint, the ledger, the derived state) with what the
// earlier build read back (the .read.txt file beside it).
func TestCompatRead(t *testing.T) {
	for _, f := range compatFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, _ := openCompatCopy(t, f, nil)
			got := describeSession(s)
			want, err := os.ReadFile(strings.TrimSuffix(f, ".jsonl") + ".read.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("read back differently:\n%s", lineDiff(want, []byte(got)))
			}
		})
	}
}

// TestCompatReplay reads every record of every compatibility session with
// this build and appends it again to a new session: each line the earlier
// build wrote comes out byte-identical (the lines of a newer build, whose
// unknown members this build drops or whose type it does not know, and a
// torn tail excepted).
func TestCompatReplay(t *testing.T) {
	for _, f := range compatFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, data := openCompatCopy(t, f, nil)
			recs, err := s.ReadRecords()
			if err != nil {
				t.Fatal(err)
			}
			created := s.Header().CreatedAt
			dir := t.TempDir()
			r, err := Open(dir, s.ID(), Options{Now: func() time.Time { return created }})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if s.TornTail() {
				lines = lines[:len(lines)-1]
			}
			var want []string
			for i, rec := range recs {
				if _, ok := rec.Body.(Unknown); ok || strings.HasPrefix(rec.TS.Format(time.RFC3339), "2027") {
					continue // written by a "newer build" (compat_gen_test.go)
				}
				if err := r.Append(rec); err != nil {
					t.Fatalf("record %d: %v", i+1, err)
				}
				want = append(want, lines[i+1])
			}
			got, err := os.ReadFile(r.Path())
			if err != nil {
				t.Fatal(err)
			}
			wantFile := lines[0] + "\n" + strings.Join(want, "\n") + "\n"
			if string(got) != wantFile {
				t.Errorf("replayed records differ:\n%s", lineDiff([]byte(wantFile), got))
			}
		})
	}
}

// describeSession is a plain-text account of what a Session reads back,
// through its API alone: the same text for the same reading, whatever the
// build.
func describeSession(s *Session) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	h := s.Header()
	p("header: version=%d id=%q created=%s", h.SchemaVersion, h.ID, h.CreatedAt.Format(time.RFC3339Nano))
	p("torn=%v torn_bytes=%d unknown=%d messages=%d head=%d", s.TornTail(), s.TornBytes(), s.UnknownRecords(), s.MessageCount(), s.Head())
	if f, ok := s.ForkOrigin(); ok {
		p("fork: parent=%q entry=%d", f.ParentID, f.ParentEntry)
	}
	p("reasoning=%q update=%q ultra=%v", s.LatestReasoning(), s.ReasoningUpdate(), s.ReasoningUltra())
	p("uncertain=%v unsettled_native=%v unknown_native=%q", s.HasUncertainUsage(), s.HasUnsettledNativeSteering(), s.UnknownNativeSteering())
	for _, u := range s.UsageUncertaintyRecords() {
		p("usage_uncertainty: %q %q %q", u.Endpoint, u.Model, u.Operation)
	}
	for _, u := range s.UsageRecords() {
		p("usage: run=%q step=%d op=%q model=%q cost=%v discarded=%v %s", u.RunID, u.Step, u.Operation, u.Model, u.CostUSD, u.Discarded, describeUsage(u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.CacheReadTokens, u.Usage.CacheWriteTokens, u.Usage.ReasoningTokens, u.Usage.TotalTokens))
	}
	for _, e := range s.RunEnds() {
		p("run_end: run=%q status=%q code=%q", e.RunID, e.Status, e.Code)
	}
	if u, after, ok := s.ContextUsage(); ok {
		p("context_usage: after=%d %s", after, describeUsage(u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens))
	}
	for _, route := range []string{"", "openai/gpt-5.4", "other/route"} {
		msgs, err := s.Conversation(route)
		p("conversation route=%q err=%v ordinals=%v has=%v", route, err, s.ConversationOrdinals(route), s.HasConversation())
		for _, m := range msgs {
			p("  %s", describeMessage(m))
		}
		if c, ok := s.LatestCompaction(route); ok {
			p("  latest_compaction: %s", describeCompaction(c))
		}
	}
	entries, err := s.ReadEntries()
	p("entries: err=%v", err)
	for _, e := range entries {
		switch body := e.Record.Body.(type) {
		case Message:
			p("  %d on_head=%v ts=%s message run=%q origin=%q %s", e.ID, e.OnHead, e.Record.TS.Format(time.RFC3339Nano), body.RunID, body.Origin, describeMessage(compatProviderMessage(body)))
		case Compaction:
			p("  %d on_head=%v ts=%s compaction %s", e.ID, e.OnHead, e.Record.TS.Format(time.RFC3339Nano), describeCompaction(body))
		default:
			p("  %d unexpected %T", e.ID, body)
		}
	}
	recs, err := s.ReadRecords()
	p("records: %d err=%v", len(recs), err)
	for i, r := range recs {
		p("  %d %s %s", i+1, r.Type(), r.TS.Format(time.RFC3339Nano))
	}
	return b.String()
}

func describeUsage(in, out, cacheRead, cacheWrite, reasoning, total int64) string {
	return fmt.Sprintf("tokens=%d/%d/%d/%d/%d/%d", in, out, cacheRead, cacheWrite, reasoning, total)
}

func describeMessage(m provider.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "role=%q text=%q", m.Role, m.Text)
	if m.Reasoning != "" {
		fmt.Fprintf(&b, " reasoning=%q", m.Reasoning)
	}
	for _, r := range m.ReasoningBlocks {
		fmt.Fprintf(&b, " block{text=%q sig=%q id=%q redacted=%q after=%d wire=%q model=%q origin=%q}", r.Text, r.Signature, r.ID, r.Redacted, r.AfterToolCalls, r.Wire, r.Model, r.Origin())
	}
	for _, x := range m.Media {
		fmt.Fprintf(&b, " media{%q %q %q %s %d data=%d}", x.Type, x.MIMEType, x.Format, x.SHA256, x.Bytes, len(x.Data))
	}
	for _, x := range m.OutputMedia {
		fmt.Fprintf(&b, " output_media{%q %q %q %s %d data=%d}", x.Type, x.MIMEType, x.Format, x.SHA256, x.Bytes, len(x.Data))
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, " call{%q %q %q dropped=%d}", c.ID, c.Name, c.Arguments, c.ArgumentsDropped)
	}
	if m.ToolCallID != "" || m.ToolName != "" {
		fmt.Fprintf(&b, " result_of=%q/%q", m.ToolCallID, m.ToolName)
	}
	if m.IsError {
		b.WriteString(" is_error")
	}
	if m.NewTurn {
		b.WriteString(" new_turn")
	}
	if m.ReasoningEffort != "" {
		fmt.Fprintf(&b, " effort=%q", m.ReasoningEffort)
	}
	if m.NativeItems != nil {
		fmt.Fprintf(&b, " native_items=%s", m.NativeItems)
	}
	return b.String()
}

func describeCompaction(c Compaction) string {
	s := fmt.Sprintf("kind=%q reason=%q summary=%q summary_text=%q read=%q modified=%q first_kept=%d before=%d after=%d route=%q items=%s(nil=%v)",
		c.Kind, c.Reason, c.Summary, c.SummaryText, c.ReadFiles, c.ModifiedFiles, c.FirstKept, c.TokensBefore, c.TokensAfterEstimate, c.Route, c.Items, c.Items == nil)
	if u := c.Usage; u != nil {
		s += " usage " + describeUsage(u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens)
	}
	return s
}

// compatProviderMessage is the conversation message of a message record.
func compatProviderMessage(m Message) provider.Message { return m.Message.Provider() }
