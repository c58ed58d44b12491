package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// cached returns the positions whose bodies the session holds.
func cached(s *Session) []int {
	var out []int
	for i, b := range s.cache {
		if b != nil {
			out = append(out, s.cacheLo+i)
		}
	}
	return out
}

// A resumed session with checkpoints answers every query as the full
// decode does, holding in memory only the conversation it built: the
// newest checkpoint and the messages from its first kept one on.
func TestLazyCheckpoints(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "cp")
	if err := s.Append(checkpointedRecords(3000)...); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openT(t, dir, "cp")
	if got := cached(s); len(got) != 0 {
		t.Fatalf("Open holds %d bodies", len(got))
	}
	ref, _ := refOfFile(t, s.Path(), "cp")
	msgs := s.Messages()
	cp, ok := s.LatestCompaction("")
	if !ok || !strings.HasPrefix(msgs[0].Text, SummaryPrefix) {
		t.Fatal("the conversation does not start at a checkpoint")
	}
	newest := int(s.cps[len(s.cps)-1])
	want := []int{newest}
	for _, p := range s.msgPos[cp.FirstKept:] {
		want = append(want, int(p))
	}
	if diff := cmp.Diff(sortedInts(want), cached(s)); diff != "" {
		t.Errorf("held bodies (-want +got):\n%s", diff)
	}
	if len(want) != len(msgs) || s.cacheLo != min(newest, int(s.msgPos[cp.FirstKept])) {
		t.Errorf("%d messages, %d bodies held from %d", len(msgs), len(want), s.cacheLo)
	}
	compareSession(t, s, ref)

	// Checkout to an entry before the newest checkpoint: the branch then
	// holds the checkpoint before it.
	es := s.Entries()
	target := 0
	for _, e := range es {
		if e.ID < newest-600 && e.Record.Type() == TypeMessage {
			target = e.ID
		}
	}
	if err := s.Checkout(target); err != nil {
		t.Fatal(err)
	}
	ref, _ = refOfFile(t, s.Path(), "cp")
	compareSession(t, s, ref)
	if err := s.Append(userMsg("after the checkout"), Record{Body: Usage{Step: 1, Usage: UsageV1{InputTokens: 5}}}); err != nil {
		t.Fatal(err)
	}
	ref, _ = refOfFile(t, s.Path(), "cp")
	compareSession(t, s, ref)

	// A fork of that branch.
	f, err := s.Fork("cp-fork")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkFork(t, f, ref.forkRecords())
}

// checkFork checks a fork's records against the reference's: the same
// bodies, and the same timestamps where the reference has one.
func checkFork(t tb, f *Session, want []Record) {
	t.Helper()
	got, err := f.ReadRecords()
	if err != nil {
		t.Fatalf("fork records: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("fork has %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if d := cmp.Diff(want[i].Body, got[i].Body); d != "" {
			t.Fatalf("fork record %d (-want +got):\n%s", i, d)
		}
		if !want[i].TS.IsZero() && !want[i].TS.Equal(got[i].TS) {
			t.Fatalf("fork record %d: ts %v, want %v", i, got[i].TS, want[i].TS)
		}
	}
}

func sortedInts(v []int) []int {
	out := append([]int(nil), v...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Records appended after Open are queried like loaded ones, and a checkpoint
// appended in this process moves the conversation and lets the older
// bodies go.
func TestLazyAppendAfterOpen(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "app")
	if err := s.Append(checkpointedRecords(1200)...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir, "app")
	before := len(s.Messages())
	if err := s.Append(Record{Body: RunStart{RunID: "late"}}, Record{Body: Message{RunID: "late", Message: MessageV1{Role: RoleUser, Text: "late prompt"}}}); err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages()
	if len(msgs) != before+1 || !msgs[len(msgs)-1].NewTurn || msgs[len(msgs)-1].Text != "late prompt" {
		t.Fatalf("after the append: %d messages (was %d), last %+v", len(msgs), before, msgs[len(msgs)-1])
	}
	ref, _ := refOfFile(t, s.Path(), "app")
	compareSession(t, s, ref)
	if err := s.Append(Record{Body: Compaction{Summary: "newest", FirstKept: s.MessageCount() - 1}}, userMsg("next")); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"newest", "late prompt", "next"}) {
		t.Fatalf("after an appended checkpoint: %q", got)
	}
	if n := len(cached(s)); n != 3 {
		t.Errorf("%d bodies held, want the checkpoint and 2 messages", n)
	}
	ref, _ = refOfFile(t, s.Path(), "app")
	compareSession(t, s, ref)
}

// A torn line after a checkpoint is dropped; the conversation continues
// from the checkpoint, and an append after it replaces the torn line.
func TestLazyTornTailAfterCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "torn")
	if err := s.Append(userMsg("m0"), userMsg("m1"), userMsg("m2"), Record{Body: Compaction{Summary: "cp", FirstKept: 1}}, userMsg("m3")); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the last line short, then add a torn checkpoint line instead.
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	torn := `{"type":"compaction","ts":"2026-01-02T03:04:09Z","summary":"` + longText
	if err := os.WriteFile(path, append(data[:last:last], torn...), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, "torn")
	if !s.TornTail() || s.TornBytes() != int64(len(torn)) {
		t.Fatalf("torn %v %d", s.TornTail(), s.TornBytes())
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"cp", "m1", "m2"}) {
		t.Fatalf("messages %q", got)
	}
	ref, _ := refOfFile(t, path, "torn")
	compareSession(t, s, ref)
	if err := s.Append(userMsg("m4")); err != nil {
		t.Fatal(err)
	}
	ref, _ = refOfFile(t, path, "torn")
	compareSession(t, s, ref)
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"cp", "m1", "m2", "m4"}) {
		t.Fatalf("after the append: %q", got)
	}
}

// A branch whose path misses the newest checkpoint: the conversation comes
// from the checkpoint on the branch (or the raw history), read back from
// the file, and a checkout back onto the newest checkpoint's branch lets
// the older records go again.
func TestLazyBranchWithoutNewestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "br")
	if err := s.Append(userMsg("m1"), userMsg("m2"), userMsg("m3"), // 1-3
		Record{Body: Compaction{Summary: "old", FirstKept: 1}}, // 4
		userMsg("m4"), userMsg("m5"), // 5-6
		Record{Body: Compaction{Summary: "new", FirstKept: 4}}, // 7
		userMsg("m6")); err != nil { // 8
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir, "br")
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"new", "m5", "m6"}) {
		t.Fatalf("head: %q", got)
	}
	for _, tc := range []struct {
		entry int
		want  []string
	}{
		{5, []string{"old", "m2", "m3", "m4"}},
		{2, []string{"m1", "m2"}},
		{8, []string{"new", "m5", "m6"}},
		{0, []string{}},
		{6, []string{"old", "m2", "m3", "m4", "m5"}},
	} {
		if err := s.Checkout(tc.entry); err != nil {
			t.Fatal(err)
		}
		if got := texts(s.Messages()); !cmp.Equal(got, tc.want) {
			t.Fatalf("at %d: %q, want %q", tc.entry, got, tc.want)
		}
		if err := s.Append(userMsg(fmt.Sprintf("after %d", tc.entry))); err != nil {
			t.Fatal(err)
		}
		ref, _ := refOfFile(t, s.Path(), "br")
		compareSession(t, s, ref)
	}
	s.Close()
	s = openT(t, dir, "br")
	ref, _ := refOfFile(t, s.Path(), "br")
	compareSession(t, s, ref)
}

// A record that changed behind the lock is not returned: the reads fail,
// the Session fails, and nothing panics; after Close the reads fail too.
func TestLazyReadBackFails(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "rb")
	if err := s.Append(userMsg("first"), userMsg("second")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir, "rb")
	if err := s.Err(); err != nil {
		t.Fatalf("Err of a sound session: %v", err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	// Same length, another shape: "first" becomes a broken line.
	i := bytes.Index(data, []byte(`"first"`))
	copy(data[i:], `"fir"}"`)
	if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadRecords(); !errors.Is(err, errReadBack) {
		t.Fatalf("ReadRecords: %v", err)
	}
	if s.Records() != nil || s.Entries() != nil || s.Messages() != nil {
		t.Fatal("a changed file read back")
	}
	if err := s.Err(); !errors.Is(err, ErrFailed) || !errors.Is(err, errReadBack) {
		t.Fatalf("Err after a failed read: %v", err)
	}
	if _, err := s.Conversation(""); !errors.Is(err, errReadBack) {
		t.Fatalf("Conversation: %v", err)
	}
	if err := s.Append(userMsg("third")); !errors.Is(err, ErrFailed) || !errors.Is(err, errReadBack) {
		t.Fatalf("Append after a failed read: %v", err)
	}
	if _, err := s.Fork("rb2"); err == nil {
		t.Fatal("fork of a changed file")
	}
	s.Close()
	if _, err := s.ReadRecords(); err == nil || s.Records() != nil {
		t.Fatalf("ReadRecords after Close: %v", err)
	}
}

// Skimmed strings never leave the loader: long run IDs, reasoning
// updates, media references and routes are decoded in full, and a string
// that happens to equal the placeholder is no placeholder.
func TestSkimLongStrings(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "skim")
	long := strings.Repeat("r", 200)
	digest, err := s.PutMedia([]byte("png"))
	if err != nil {
		t.Fatal(err)
	}
	items := jsontext.Value(`[{"type":"compaction","encrypted_content":"` + strings.Repeat("x", 300) + `"}]`)
	recs := []Record{
		{Body: RunStart{RunID: long, DisplayText: strings.Repeat("display ", 40)}},
		{Body: Message{RunID: long, Message: MessageV1{Role: RoleUser, Text: strings.Repeat("t", 500)}}},
		{Body: Message{RunID: skimmed, Origin: strings.Repeat("o", 200), Message: MessageV1{Role: RoleDeveloper, Text: "u", ReasoningEffort: strings.Repeat("e", 150)}}},
		{Body: Message{Message: MessageV1{Role: RoleUser, Text: skimmed, Media: []MediaV1{{Type: "image", MIMEType: "image/png" + strings.Repeat(" ", 130), SHA256: digest, Bytes: 3}}}}},
		{Body: RunStart{RunID: skimmed}},
		{Body: Message{RunID: skimmed, Message: MessageV1{Role: RoleUser, Text: "prompt"}}},
		{Body: Compaction{Summary: skimmed, FirstKept: 3, Route: skimmed}},
		{Body: Compaction{Kind: "native", FirstKept: 4, Items: items, Route: strings.Repeat("route ", 30)}},
		{Body: Message{RunID: strings.Repeat("r", 63), Message: MessageV1{Role: RoleAssistant, Text: "a"}}},
	}
	if err := s.Append(recs...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir, "skim")
	if got := s.ReasoningUpdate(); got != strings.Repeat("e", 150) {
		t.Errorf("ReasoningUpdate %q", got)
	}
	ref, _ := refOfFile(t, s.Path(), "skim")
	compareSession(t, s, ref)
	msgs := s.MessagesFor(strings.Repeat("route ", 30))
	if len(msgs) != 2 || !bytes.Equal(msgs[0].NativeItems, items) {
		t.Fatalf("native checkpoint on its route: %+v", msgs)
	}
	msgs = s.Messages()
	if got := texts(msgs); !cmp.Equal(got, []string{skimmed, "prompt", "a"}) || !msgs[1].NewTurn {
		t.Errorf("messages %q; the prompt of run %q marked: %v", got, skimmed, msgs[1].NewTurn)
	}
}

// A native checkpoint whose items are an empty array (an endpoint's
// output, whitespace and all) is stored as one: read back in the same
// process or after a reopen, it is still the native checkpoint of its
// route, never a local checkpoint with an empty summary that would hide
// the history on every route.
func TestNativeCheckpointEmptyItems(t *testing.T) {
	for _, items := range []string{"[]", "[ ]", "[\n]"} {
		dir := t.TempDir()
		s := openT(t, dir, "empty")
		cp := Compaction{Kind: "native", FirstKept: 2, Items: jsontext.Value(items), Route: "ra"}
		if err := s.Append(userMsg("m0"), userMsg("m1"), Record{Body: cp}, userMsg("m2")); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			// Another route first: the checkpoint's body is let go, and the
			// route's conversation reads it back.
			if got := texts(s.MessagesFor("")); !cmp.Equal(got, []string{"m0", "m1", "m2"}) {
				t.Fatalf("%q %s: another route's conversation %q", items, when, got)
			}
			msgs := s.MessagesFor("ra")
			if len(msgs) != 2 || msgs[0].NativeItems == nil || jsontext.Value(msgs[0].NativeItems).Kind() != '[' || msgs[1].Text != "m2" {
				t.Fatalf("%q %s: the route's conversation %+v", items, when, msgs)
			}
			if _, ok := s.LatestCompaction(""); ok {
				t.Fatalf("%q %s: the native checkpoint applies without its route", items, when)
			}
		}
		check("after the append")
		s.Close()
		s = openT(t, dir, "empty")
		check("after a reopen")
	}
}

// The lazy Session answers like the full decode (the reference model)
// over random sequences of appends, checkpoints (local and native),
// checkouts, reopens, torn tails and forks.
func TestLazyMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "store-rapid-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		open := func() *Session {
			s, err := Open(dir, "r", Options{Now: clock()})
			if err != nil {
				rt.Fatalf("open: %v", err)
			}
			return s
		}
		s := open()
		defer func() { s.Close() }()
		digest, err := s.PutMedia([]byte("media bytes"))
		if err != nil {
			rt.Fatal(err)
		}
		// ref mirrors s: loaded from the file at open, then the appended
		// records as the file holds them.
		reload := func() *refSession {
			data, err := os.ReadFile(s.Path())
			if err != nil {
				rt.Fatal(err)
			}
			l, err := refParse(data, s.Path(), "r")
			if err != nil {
				rt.Fatalf("reference parse: %v", err)
			}
			return newRef("r", l.recs)
		}
		ref := reload()
		appended := func() {
			data, err := os.ReadFile(s.Path())
			if err != nil {
				rt.Fatal(err)
			}
			l, err := refParse(data, s.Path(), "r")
			if err != nil {
				rt.Fatalf("reference parse: %v", err)
			}
			for _, r := range l.recs[len(ref.recs):] {
				ref.add(r)
			}
		}
		text := rapid.Custom(func(t *rapid.T) string {
			switch rapid.IntRange(0, 4).Draw(t, "text_kind") {
			case 0:
				return strings.Repeat("long \"quoted\" line\n\té ✓ ", rapid.IntRange(5, 40).Draw(t, "reps"))
			case 1:
				return skimmed
			case 2:
				return rapid.StringN(0, 20, -1).Draw(t, "str")
			}
			return rapid.SampledFrom([]string{"hi", "a", "", "ok \\ \u2028 \x01"}).Draw(t, "word")
		})
		runID := rapid.SampledFrom([]string{"", "r1", "r2", skimmed, strings.Repeat("x", 130)})
		routes := []string{"ra", "rb", strings.Repeat("route", 30)}
		ops := rapid.IntRange(1, 40).Draw(rt, "ops")
		for range ops {
			switch op := rapid.IntRange(0, 11).Draw(rt, "op"); op {
			case 0, 1, 2, 3: // a batch of ordinary records
				var recs []Record
				for range rapid.IntRange(1, 6).Draw(rt, "batch") {
					var b Body
					switch rapid.IntRange(0, 10).Draw(rt, "kind") {
					case 0:
						b = RunStart{RunID: rapid.SampledFrom([]string{"r1", "r2", skimmed}).Draw(rt, "run"), DisplayText: text.Draw(rt, "display")}
					case 1, 2, 3:
						m := MessageV1{Role: rapid.SampledFrom([]string{RoleUser, RoleAssistant, RoleTool}).Draw(rt, "role"), Text: text.Draw(rt, "text")}
						if m.Role == RoleAssistant && rapid.Bool().Draw(rt, "calls") {
							m.ToolCalls = []ToolCallV1{{ID: "c1", Name: "read", Arguments: text.Draw(rt, "args")}}
							m.Reasoning = text.Draw(rt, "reasoning")
						}
						if m.Role == RoleUser && rapid.IntRange(0, 5).Draw(rt, "media") == 0 {
							m.Media = []MediaV1{{Type: "image", MIMEType: "image/png", SHA256: digest, Bytes: 11}}
						}
						b = Message{RunID: runID.Draw(rt, "msg_run"), Origin: rapid.SampledFrom([]string{"", "", "steering"}).Draw(rt, "origin"), Message: m}
					case 4:
						b = Message{Message: MessageV1{Role: RoleDeveloper, Text: "effort", ReasoningEffort: rapid.SampledFrom([]string{"low", "high", strings.Repeat("e", 140)}).Draw(rt, "effort")}}
					case 5:
						b = Usage{RunID: "r1", Step: rapid.IntRange(0, 9).Draw(rt, "step"), Operation: rapid.SampledFrom([]string{"", "", "local_compaction"}).Draw(rt, "operation"),
							Usage: UsageV1{InputTokens: int64(rapid.IntRange(0, 1e6).Draw(rt, "in")), OutputTokens: 7}, CostUSD: 0.25, Discarded: rapid.Bool().Draw(rt, "discarded")}
					case 6:
						b = RunEnd{RunID: rapid.SampledFrom([]string{"r1", "r2"}).Draw(rt, "end_run"), Status: rapid.SampledFrom([]string{"completed", "error"}).Draw(rt, "status")}
					case 7:
						b = ReasoningChange{Effort: rapid.SampledFrom([]string{"", "low", "high"}).Draw(rt, "baseline"), Ultra: rapid.Bool().Draw(rt, "ultra")}
					case 8:
						b = ModelChange{Model: rapid.SampledFrom([]string{"m1", "m2"}).Draw(rt, "model")}
					case 9:
						b = UsageUncertainty{Endpoint: "e", Model: "m", Operation: "assistant_turn"}
					default:
						id := rapid.SampledFrom([]string{"i1", "i2"}).Draw(rt, "intent")
						b = NativeSteering{IntentID: id, Event: rapid.SampledFrom([]string{NativeIntent, NativeSettled, NativeUnknown}).Draw(rt, "event")}
					}
					recs = append(recs, Record{Body: b})
				}
				if err := s.Append(recs...); err != nil {
					rt.Fatalf("append: %v", err)
				}
				appended()
			case 4, 5: // a checkpoint
				c := Compaction{Summary: text.Draw(rt, "summary"), FirstKept: rapid.IntRange(0, ref.msgs).Draw(rt, "first_kept")}
				if rapid.Bool().Draw(rt, "native") {
					c = Compaction{Kind: "native", FirstKept: ref.msgs, Route: rapid.SampledFrom(routes).Draw(rt, "route"),
						Items: jsontext.Value(`[{"type":"message","content":"` + strings.Repeat("i", rapid.IntRange(1, 300).Draw(rt, "items")) + `"}]`)}
				}
				if err := s.Append(Record{Body: c}); err != nil {
					rt.Fatalf("append checkpoint: %v", err)
				}
				appended()
			case 6, 7: // a checkout
				targets := []int{0}
				for _, e := range ref.Entries() {
					targets = append(targets, e.ID)
				}
				e := rapid.SampledFrom(targets).Draw(rt, "entry")
				if err := s.Checkout(e); err != nil {
					rt.Fatalf("checkout %d: %v", e, err)
				}
				appended()
			case 8: // a reopen, sometimes with a torn tail
				s.Close()
				if rapid.Bool().Draw(rt, "tear") {
					f, err := os.OpenFile(s.Path(), os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						rt.Fatal(err)
					}
					_, err = f.WriteString(`{"type":"message","ts":"2026-01-02T03:04:09Z","message":{"role":"user","text":"` + strings.Repeat("t", rapid.IntRange(0, 200).Draw(rt, "torn")))
					f.Close()
					if err != nil {
						rt.Fatal(err)
					}
				}
				s = open()
				ref = reload()
			case 9: // a fork
				f, err := s.Fork("fork")
				if err != nil {
					rt.Fatalf("fork: %v", err)
				}
				checkFork(rt, f, ref.forkRecords())
				path := f.Path()
				f.Close()
				if err := os.Remove(path); err != nil {
					rt.Fatal(err)
				}
			case 10: // an unknown entry
				if err := s.Checkout(len(ref.recs) + 1); !errors.Is(err, ErrNoEntry) {
					rt.Fatalf("checkout past the end: %v", err)
				}
			default: // move the held conversation
				s.MessagesFor(rapid.SampledFrom(append(routes, "")).Draw(rt, "route"))
			}
			compareSession(rt, s, ref)
		}
	})
}
