package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/provider"
)

func userMsg(text string) Record {
	return Record{Body: Message{Message: MessageV1{Role: RoleUser, Text: text}}}
}

// texts returns the messages' texts, a checkpoint's wrapped summary as the
// summary alone.
func texts(msgs []provider.Message) []string {
	out := []string{}
	for _, m := range msgs {
		t := m.Text
		if inner, ok := strings.CutPrefix(t, SummaryPrefix); ok {
			if inner, ok := strings.CutSuffix(inner, SummarySuffix); ok {
				t = inner
			}
		}
		out = append(out, t)
	}
	return out
}

func onHead(s *Session) (ids []int, on []bool) {
	for _, e := range s.Entries() {
		ids = append(ids, e.ID)
		on = append(on, e.OnHead)
	}
	return ids, on
}

// A checkout moves the head to an earlier entry, of the current branch or
// of an abandoned one; later records continue it; the head and the
// branches survive a reopen.
func TestCheckoutBranches(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "tree")
	if s.Head() != 0 {
		t.Fatalf("empty session head %d", s.Head())
	}
	// Entries 1..5, then a usage record (6), which is no entry.
	if err := s.Append(userMsg("m1"), userMsg("m2"), userMsg("m3"), userMsg("m4"), userMsg("m5"),
		Record{Body: Usage{Step: 1, Usage: UsageV1{InputTokens: 1}}}); err != nil {
		t.Fatal(err)
	}
	if s.Head() != 6 {
		t.Fatalf("head %d, want 6", s.Head())
	}
	if err := s.Checkout(3); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"m1", "m2", "m3"}) || s.Head() != 3 {
		t.Fatalf("after checkout 3: head %d, %v", s.Head(), got)
	}
	if err := s.Append(userMsg("m6")); err != nil { // record 8; 7 is the checkout
		t.Fatal(err)
	}
	want := []string{"m1", "m2", "m3", "m6"}
	if got := texts(s.Messages()); !cmp.Equal(got, want) || s.Head() != 8 {
		t.Fatalf("after appending: head %d, %v", s.Head(), got)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 5}, s.ConversationOrdinals("")); diff != "" {
		t.Errorf("ordinals (-want +got):\n%s", diff)
	}
	ids, on := onHead(s)
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 8}, ids); diff != "" {
		t.Errorf("entry IDs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false, true}, on); diff != "" {
		t.Errorf("OnHead (-want +got):\n%s", diff)
	}
	s.Close()
	s = openT(t, dir, "tree")
	if got := texts(s.Messages()); !cmp.Equal(got, want) || s.Head() != 8 {
		t.Fatalf("after reopen: head %d, %v", s.Head(), got)
	}
	// Back onto the abandoned branch, then to the start.
	if err := s.Checkout(5); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"m1", "m2", "m3", "m4", "m5"}) {
		t.Fatalf("after checkout 5: %v", got)
	}
	if err := s.Checkout(0); err != nil {
		t.Fatal(err)
	}
	if got := s.Messages(); len(got) != 0 || s.Head() != 0 {
		t.Fatalf("after checkout 0: head %d, %v", s.Head(), got)
	}
	n := len(s.Records())
	if err := s.Checkout(0); err != nil || len(s.Records()) != n {
		t.Fatalf("checking out the head: %v, %d records (had %d)", err, len(s.Records()), n)
	}
	// Not entries: out of range, a usage record, a checkout record.
	for _, e := range []int{-1, n + 1, 6, 7} {
		if err := s.Checkout(e); !errors.Is(err, ErrNoEntry) {
			t.Errorf("Checkout(%d) = %v, want ErrNoEntry", e, err)
		}
	}
	// Append checks the same, and the batch's own earlier records count.
	if err := s.Append(Record{Body: Checkout{Entry: 6}}); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("Append(checkout of a usage record) = %v", err)
	}
	if err := s.Append(userMsg("x"), Record{Body: Checkout{Entry: n + 1}}); err != nil {
		t.Errorf("Append(message, checkout of it) = %v", err)
	}
}

// The compaction checkpoint that applies is the latest on the head's
// branch: checking out before it restores the full history, and
// FirstKept counts message records file-wide.
func TestCheckoutAcrossCompaction(t *testing.T) {
	s := openT(t, t.TempDir(), "cp-tree")
	// m0..m4 = entries 1..5, the checkpoint 6, m5 = 7.
	if err := s.Append(userMsg("m0"), userMsg("m1"), userMsg("m2"), userMsg("m3"), userMsg("m4"),
		Record{Body: Compaction{Summary: "first", FirstKept: 2}}, userMsg("m5")); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkout(4); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"m0", "m1", "m2", "m3"}) {
		t.Fatalf("before the checkpoint: %v", got)
	}
	if err := s.Append(userMsg("m6")); err != nil {
		t.Fatal(err)
	}
	ords := s.ConversationOrdinals("")
	if diff := cmp.Diff([]int{0, 1, 2, 3, 6}, ords); diff != "" {
		t.Fatalf("ordinals (-want +got):\n%s", diff)
	}
	// Compact this branch keeping m3 and m6.
	if err := s.Append(Record{Body: Compaction{Summary: "second", FirstKept: ords[3]}}, userMsg("m7")); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"second", "m3", "m6", "m7"}) {
		t.Fatalf("after the branch's checkpoint: %v", got)
	}
	if diff := cmp.Diff([]int{3, 6, 7}, s.ConversationOrdinals("")); diff != "" {
		t.Errorf("ordinals after the checkpoint (-want +got):\n%s", diff)
	}
	// The first checkpoint itself is an entry.
	if err := s.Checkout(6); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"first", "m2", "m3", "m4"}) {
		t.Fatalf("at the first checkpoint: %v", got)
	}
}

// A checkout pointing anywhere but at an earlier entry is corruption when
// loaded before the last line, and a torn tail as the last line.
func TestCheckoutLoadChecks(t *testing.T) {
	dir := t.TempDir()
	run := `{"type":"run_start","ts":"2026-01-02T03:04:06Z","run_id":"r"}` + "\n"
	forward := `{"type":"checkout","ts":"2026-01-02T03:04:08Z","entry":9}` + "\n"
	atRun := `{"type":"checkout","ts":"2026-01-02T03:04:08Z","entry":1}` + "\n"
	for _, bad := range []string{forward, atRun} {
		writeFile(t, dir, "bad", run, goodMsg, bad, goodMsg2)
		if _, err := Open(dir, "bad", Options{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "line 4") {
			t.Errorf("%s: Open = %v, want ErrCorrupt at line 4", bad, err)
		}
		writeFile(t, dir, "bad", run, goodMsg, bad)
		s, err := Open(dir, "bad", Options{})
		if err != nil {
			t.Fatalf("%s as the last line: %v", bad, err)
		}
		if !s.TornTail() || s.Head() != 2 {
			t.Errorf("%s as the last line: torn %v, head %d", bad, s.TornTail(), s.Head())
		}
		s.Close()
	}
	writeFile(t, dir, "fork2", goodMsg, `{"type":"fork","ts":"2026-01-02T03:04:08Z","parent_id":"p","parent_entry":1}`+"\n", goodMsg2)
	if _, err := Open(dir, "fork2", Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a fork record after the first: %v", err)
	}
}

// A torn line after a durable checkout is dropped; the checkout holds.
func TestCheckoutThenTornTail(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "torn")
	if err := s.Append(userMsg("m1"), userMsg("m2"), userMsg("m3")); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkout(1); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"message","ts":"2026-01-02T03:04:09Z","message":{"role":"us`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s = openT(t, dir, "torn")
	if !s.TornTail() || s.Head() != 1 || !cmp.Equal(texts(s.Messages()), []string{"m1"}) {
		t.Fatalf("torn %v head %d messages %v", s.TornTail(), s.Head(), texts(s.Messages()))
	}
	if err := s.Append(userMsg("m4")); err != nil {
		t.Fatal(err)
	}
	if got := texts(s.Messages()); !cmp.Equal(got, []string{"m1", "m4"}) {
		t.Fatalf("after appending: %v", got)
	}
}

// A fork copies the conversation at the head (compaction, prompts, media,
// reasoning selection), not the ledger; it has its own file and lock and
// names its parent.
func TestFork(t *testing.T) {
	dir := t.TempDir()
	p := openT(t, dir, "parent")
	digest, err := p.PutMedia([]byte("png bytes"))
	if err != nil {
		t.Fatal(err)
	}
	media := []MediaV1{{Type: "image", MIMEType: "image/png", SHA256: digest, Bytes: 9}}
	recs := []Record{
		{Body: RunStart{RunID: "r1"}},           // 1
		{Body: ModelChange{Model: "m-1"}},       // 2
		{Body: ReasoningChange{Effort: "high"}}, // 3
		{Body: Message{RunID: "r1", Message: MessageV1{Role: RoleUser, Text: "q1", Media: media}}}, // 4
		{Body: Message{RunID: "r1", Message: MessageV1{Role: RoleAssistant, Text: "a1"}}},          // 5
		{Body: Usage{RunID: "r1", Step: 1, Usage: UsageV1{InputTokens: 10}}},                       // 6
		{Body: UsageUncertainty{Endpoint: "e", Model: "m-1", Operation: "assistant_turn"}},         // 7
		{Body: RunEnd{RunID: "r1", Status: "completed"}},                                           // 8
		{Body: RunStart{RunID: "r2"}},                                                              // 9
		{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleUser, Text: "q2"}}},               // 10
		{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleAssistant, Text: "a2"}}},          // 11
		{Body: Compaction{Summary: "sum", FirstKept: 2}},                                           // 12
		{Body: Message{RunID: "r2", Message: MessageV1{Role: RoleAssistant, Text: "a3"}}},          // 13
	}
	if err := p.Append(recs...); err != nil {
		t.Fatal(err)
	}
	f, err := p.Fork("child")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if diff := cmp.Diff(p.Messages(), f.Messages()); diff != "" {
		t.Errorf("fork's conversation (-parent +fork):\n%s", diff)
	}
	if got := texts(f.Messages()); !cmp.Equal(got, []string{"sum", "q2", "a2", "a3"}) || !f.Messages()[1].NewTurn {
		t.Errorf("fork's conversation %v (NewTurn on the prompt lost?)", got)
	}
	if o, ok := f.ForkOrigin(); !ok || o != (Fork{ParentID: "parent", ParentEntry: 13}) {
		t.Errorf("ForkOrigin = %+v, %v", o, ok)
	}
	if _, ok := p.ForkOrigin(); ok {
		t.Error("the parent claims to be a fork")
	}
	for _, r := range f.Records() {
		switch r.Body.(type) {
		case Usage, UsageUncertainty, RunEnd:
			t.Errorf("the fork copied a %s record", r.Type())
		}
	}
	if f.HasUncertainUsage() || !p.HasUncertainUsage() {
		t.Errorf("uncertainty: fork %v parent %v; want false, true", f.HasUncertainUsage(), p.HasUncertainUsage())
	}
	if f.LatestReasoning() != "high" {
		t.Errorf("fork's reasoning %q", f.LatestReasoning())
	}
	// Its own lock: the fork is held, the parent still appends.
	if _, err := Open(dir, "child", Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open(child) while the fork is open: %v", err)
	}
	if err := p.Append(userMsg("parent only")); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(userMsg("fork only")); err != nil {
		t.Fatal(err)
	}
	if got := texts(f.Messages()); got[len(got)-1] != "fork only" || len(got) != 5 {
		t.Errorf("fork after appending: %v", got)
	}
	if got := texts(p.Messages()); got[len(got)-1] != "parent only" || len(got) != 5 {
		t.Errorf("parent after appending: %v", got)
	}
	f.Close()
	f2 := openT(t, dir, "child") // the copy is durable
	if diff := cmp.Diff(p.Messages()[:4], f2.Messages()[:4]); diff != "" {
		t.Errorf("fork's conversation after a reopen (-parent +fork):\n%s", diff)
	}
	// Forking at a checkout: the history up to the checked-out entry, with
	// its media.
	if err := p.Checkout(5); err != nil {
		t.Fatal(err)
	}
	g, err := p.Fork("child-2")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := texts(g.Messages()); !cmp.Equal(got, []string{"q1", "a1"}) || !g.Messages()[0].NewTurn {
		t.Errorf("fork at a checkout: %v", got)
	}
	if o, _ := g.ForkOrigin(); o.ParentEntry != 5 {
		t.Errorf("fork at a checkout: parent entry %d", o.ParentEntry)
	}
	// The copy is self-contained: the parent's media may go.
	if err := os.RemoveAll(p.MediaDir()); err != nil {
		t.Fatal(err)
	}
	if data, err := g.Media(digest); err != nil || string(data) != "png bytes" {
		t.Errorf("fork's media: %q, %v", data, err)
	}
	if _, err := p.Fork("child-3"); !errors.Is(err, ErrMediaMissing) {
		t.Errorf("Fork with the media gone = %v, want ErrMediaMissing", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "child-3.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed fork left its file: %v", err)
	}
	// Taken IDs and invalid IDs.
	for _, id := range []string{"child", "child-2", "parent"} {
		if _, err := p.Fork(id); !errors.Is(err, ErrExists) && !errors.Is(err, ErrLocked) {
			t.Errorf("Fork(%q) = %v, want ErrExists or ErrLocked", id, err)
		}
	}
	f2.Close()
	if _, err := p.Fork("child"); !errors.Is(err, ErrExists) {
		t.Errorf("Fork onto a closed existing session = %v, want ErrExists", err)
	}
	if _, err := p.Fork("bad/id"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Fork(bad/id) = %v", err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// checkoutChild checks the session out to entry 2, reports "checkout",
// then appends until it is killed, reporting "appended" after its first
// append.
func checkoutChild(dir, id string) int {
	s, err := Open(dir, id, Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if err := s.Checkout(2); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("checkout")
	for i := 0; ; i += 2 {
		if err := s.Append(Record{Body: crashBody(i)}, Record{Body: crashBody(i + 1)}); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		if i == 0 {
			fmt.Println("appended")
		}
	}
}

// TestCheckoutSurvivesKill: a process killed with SIGKILL after its
// checkout leaves a session whose head stays on the checked-out branch,
// whatever was torn after it.
func TestCheckoutSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	s := openT(t, dir, "killed")
	if err := s.Append(userMsg("m1"), userMsg("m2"), userMsg("m3")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cmd := childCmd(t, "checkout", dir, "killed")
	out := new(bytes.Buffer)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The checkout and one append are durable: tearing the last line
	// below never reaches the checkout.
	sc := bufio.NewScanner(stdout)
	for _, want := range []string{"checkout", "appended"} {
		if !sc.Scan() || sc.Text() != want {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child said %q, want %q: %s", sc.Text(), want, cmd.Stderr)
		}
	}
	time.Sleep(time.Duration(5+rand.IntN(30)) * time.Millisecond)
	_ = cmd.Process.Kill()
	_, _ = out.ReadFrom(stdout)
	werr := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v %s %s", werr, out, cmd.Stderr)
	}
	tearTail(t, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2)), filepath.Join(dir, "killed.jsonl"))
	s = openT(t, dir, "killed")
	if !s.TornTail() {
		t.Fatal("no torn tail after tearing")
	}
	msgs := texts(s.Messages())
	if len(msgs) < 2 || msgs[0] != "m1" || msgs[1] != "m2" {
		t.Fatalf("after the kill: %v", msgs[:min(3, len(msgs))])
	}
	for i, m := range msgs[2:] {
		if want := crashBody(i).Message.Text; m != want {
			t.Fatalf("message %d after the checkout: %.20q, want %.20q", i+2, m, want)
		}
	}
	if _, ok := s.Records()[3].Body.(Checkout); !ok {
		t.Fatalf("record 4 is %s, want the checkout", s.Records()[3].Type())
	}
	t.Logf("%d messages after the checkout survived the kill", len(msgs)-2)
}

// TestForkReasoningUpdates: a fork has the parent's reasoning in effect:
// the baseline with the latest update after it, and no update that a later
// baseline superseded, though the update messages stay in its history.
func TestForkReasoningUpdates(t *testing.T) {
	update := func(e string) Record {
		return Record{Body: Message{RunID: "r1", Message: MessageV1{Role: RoleDeveloper, ReasoningEffort: e, Text: "Reasoning effort is now " + e + "."}}}
	}
	for _, tc := range []struct {
		name       string
		recs       []Record
		base, upd  string
		ultra      bool
		historyLen int
	}{
		{"current update", []Record{{Body: ReasoningChange{Effort: "high"}}, update("low")}, "high", "low", false, 2},
		{"superseded update", []Record{{Body: ReasoningChange{Effort: "high"}}, update("low"), {Body: ReasoningChange{Effort: "medium", Ultra: true}}}, "medium", "", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := openT(t, t.TempDir(), "parent")
			recs := append([]Record{{Body: RunStart{RunID: "r1"}}, {Body: Message{RunID: "r1", Message: MessageV1{Role: RoleUser, Text: "q"}}}}, tc.recs...)
			if err := p.Append(recs...); err != nil {
				t.Fatal(err)
			}
			f, err := p.Fork("child")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if f.LatestReasoning() != tc.base || f.ReasoningUpdate() != tc.upd || f.ReasoningUltra() != tc.ultra {
				t.Errorf("fork reasoning %q %q %v, want %q %q %v", f.LatestReasoning(), f.ReasoningUpdate(), f.ReasoningUltra(), tc.base, tc.upd, tc.ultra)
			}
			if p.ReasoningUpdate() != tc.upd {
				t.Errorf("parent update %q", p.ReasoningUpdate())
			}
			if n := len(f.Messages()); n != tc.historyLen {
				t.Errorf("fork history %d messages, want %d", n, tc.historyLen)
			}
		})
	}
}
