package store

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The crash tests are seeded. -crash.seed (or OCTET_CRASH_SEED) replays
// one seed, otherwise it comes from the clock; either way it is logged (at
// -v) and printed on failure. -crash.count (or OCTET_CRASH_COUNT) sets how
// many crash scenarios TestCrashPoints runs (each crashes crashRounds
// times) and how many kills TestCrash makes.
var (
	crashSeedFlag  = flag.Uint64("crash.seed", 0, "replay the crash tests' seed (0: from the clock; also OCTET_CRASH_SEED)")
	crashCountFlag = flag.Int("crash.count", 0, "crash scenarios of TestCrashPoints, kills of TestCrash (0: the default; also OCTET_CRASH_COUNT)")
)

// crashSeed returns the seed of a crash test and arranges for it to be
// printed: logged now, and repeated when the test fails.
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *crashSeedFlag
	if seed == 0 {
		if v := os.Getenv("OCTET_CRASH_SEED"); v != "" {
			var err error
			if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
				t.Fatalf("OCTET_CRASH_SEED: %v", err)
			}
		}
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash seed %d (replay: -crash.seed=%d or OCTET_CRASH_SEED=%d)", seed, seed, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with crash seed %d: replay with go test -run '^%s$' -crash.seed=%d", seed, t.Name(), seed)
		}
	})
	return seed
}

// crashCount returns the count flag (or its variable), def when unset.
func crashCount(t *testing.T, def int) int {
	t.Helper()
	if *crashCountFlag > 0 {
		return *crashCountFlag
	}
	if v := os.Getenv("OCTET_CRASH_COUNT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("OCTET_CRASH_COUNT=%q: want a positive count", v)
		}
		return n
	}
	return def
}

// crashRounds is the number of crashes of one scenario: each reopens the
// session the previous crash left and appends more.
const crashRounds = 3

// crashStats counts what the crash points saw.
type crashStats struct {
	points, torn, lostUnacked, keptUnacked, forks, media int
}

// TestCrashPoints runs the store on a crashable in-memory file system
// (crashFS), lets a random number of file operations succeed and crashes
// there (power loss: only what was synced survives, maybe with a torn
// unsynced tail), then reopens from what survived. It checks that Open
// succeeds, that every record whose Append returned (run_end before a
// final_result included) and every acknowledged header and fork file are
// there, that the records past them are a prefix of the batch in flight
// at the crash and nothing else, and that a torn tail is repaired by the
// next append. Each scenario crashes crashRounds times over one session.
func TestCrashPoints(t *testing.T) {
	seed := crashSeed(t)
	count := crashCount(t, 100)
	if testing.Short() && *crashCountFlag == 0 {
		count = 20
	}
	start := time.Now()
	var st crashStats
	seeds := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := range count {
		point := seed
		if i > 0 {
			point = seeds.Uint64()
		}
		if err := crashScenario(point, &st); err != nil {
			t.Fatalf("scenario %d, seed %d: %v\nreplay: go test -run '^TestCrashPoints$' -crash.seed=%d -crash.count=1 ./runtime/internal/store/", i, point, err, point)
		}
	}
	el := time.Since(start)
	t.Logf("crash points: %d in %d scenarios, %.2fs (%.0f points/s); torn tails %d, unacknowledged batch lost %d / kept (part) %d, forks %d, media objects checked %d",
		st.points, count, el.Seconds(), float64(st.points)/el.Seconds(), st.torn, st.lostUnacked, st.keptUnacked, st.forks, st.media)
	if os.Getenv("OCTET_CRASH_FIGURES") != "" {
		fmt.Printf("crash-figures points=%d scenarios=%d seconds=%.2f torn=%d\n", st.points, count, el.Seconds(), st.torn)
	}
}

// crashGen makes the records of runs as the engine appends them.
type crashGen struct {
	rng    *rand.Rand
	tick   time.Time
	runs   int
	prefix string
	media  map[string][]byte // the media objects stored, by digest
}

func (g *crashGen) ts() time.Time {
	g.tick = g.tick.Add(time.Duration(1+g.rng.IntN(1000)) * time.Microsecond)
	return g.tick
}

func (g *crashGen) text(tag string) string {
	return tag + ":" + strings.Repeat(string(rune('a'+g.rng.IntN(26))), g.rng.IntN(600))
}

// run returns the batches of one run, given the records before it. The
// batches are appended one Append each, as a run does: its start and
// prompt, steps (assistant turn, tool results, usage, at times usage
// uncertainty or native steering), at times a checkpoint or a checkout,
// the final answer, and run_end last, the record a final_result waits
// for.
func (g *crashGen) run(before []Record) [][]Record {
	g.runs++
	id := fmt.Sprintf("%s-run-%d", g.prefix, g.runs)
	msgs := 0
	var entries []int // 1-based entries a checkout may target
	for i, r := range before {
		switch r.Body.(type) {
		case Message:
			msgs++
			entries = append(entries, i+1)
		case Compaction:
			entries = append(entries, i+1)
		}
	}
	n := len(before)
	var out [][]Record
	add := func(recs ...Record) {
		for _, r := range recs {
			switch r.Body.(type) {
			case Message:
				msgs++
				entries = append(entries, n+1)
			case Compaction:
				entries = append(entries, n+1)
			}
			n++
		}
		out = append(out, recs)
	}
	rec := func(b Body) Record { return Record{TS: g.ts(), Body: b} }
	if g.rng.IntN(4) == 0 {
		add(rec(ModelChange{Model: "openai/gpt-5.4", Provider: "openai", ProviderMode: "openai-responses"}),
			rec(ReasoningChange{Effort: []string{"low", "medium", "high"}[g.rng.IntN(3)], Ultra: g.rng.IntN(5) == 0}))
	}
	add(rec(RunStart{RunID: id, DisplayText: "prompt " + id}),
		rec(Message{RunID: id, Message: MessageV1{Role: RoleUser, Text: g.text("prompt " + id)}}))
	for step := range 1 + g.rng.IntN(3) {
		call := fmt.Sprintf("call-%s-%d", id, step)
		add(rec(Message{RunID: id, Message: MessageV1{Role: RoleAssistant, Reasoning: g.text("think"),
			ToolCalls: []ToolCallV1{{ID: call, Name: "read", Arguments: `{"path":"a.go"}`}}}}))
		add(rec(Message{RunID: id, Message: MessageV1{Role: RoleTool, ToolCallID: call, ToolName: "read", Text: g.text("tool")}}))
		if g.rng.IntN(4) == 0 {
			add(rec(UsageUncertainty{Endpoint: "codex", Model: "openai/gpt-5.4", Operation: "assistant_turn"}))
		}
		add(rec(Usage{RunID: id, Step: step + 1, Model: "openai/gpt-5.4", Usage: UsageV1{InputTokens: 1000, OutputTokens: 50, TotalTokens: 1050}, CostUSD: 0.001}))
		if g.rng.IntN(6) == 0 {
			intent := fmt.Sprintf("ns-%s-%d", id, step)
			add(rec(NativeSteering{IntentID: intent, Event: NativeIntent, RunID: id, PreviousResponseID: "resp_1"}))
			add(rec(NativeSteering{IntentID: intent, Event: NativeSettled, Outcome: NativeOutcomeDelivered}))
		}
		if g.rng.IntN(5) == 0 {
			add(rec(Compaction{Kind: "auto", Summary: g.text("summary"), FirstKept: g.rng.IntN(msgs + 1), TokensBefore: 9000}))
		}
	}
	if g.rng.IntN(8) == 0 && len(entries) > 0 {
		add(rec(Checkout{Entry: entries[g.rng.IntN(len(entries))]}))
	}
	final := rec(Message{RunID: id, Message: MessageV1{Role: RoleAssistant, Text: g.text("answer")}})
	end := rec(RunEnd{RunID: id, Status: "completed"})
	if g.rng.IntN(2) == 0 {
		add(final, end)
	} else {
		add(final)
		add(end)
	}
	return out
}

// crashDirs are the session directories of the scenarios: one that only
// lacks itself, one whose parents are missing too (as ~/.octet/sessions
// on a first run).
var crashDirs = []string{"/sessions", "/home/u/.octet/sessions"}

// crashScenario runs one seeded scenario: crashRounds rounds of appending
// until a random file operation, each followed by a crash and the checks.
func crashScenario(seed uint64, st *crashStats) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	fsys := newCrashFS()
	dir := crashDirs[rng.IntN(len(crashDirs))]
	g := &crashGen{rng: rng, tick: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), media: map[string][]byte{}}
	now := clock()
	var acked []Record // durable: their Append returned nil
	var header *Header // the header, once Open returned
	forks := map[string]bool{}
	for round := range crashRounds {
		g.prefix = fmt.Sprintf("r%d", round)
		fsys.SetBudget(rng.IntN(60))
		pending, err := crashRound(fsys, dir, g, now, &acked, &header, forks)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		var tear *rand.Rand
		if rng.IntN(4) != 0 {
			tear = rng
		}
		fsys = fsys.Crash(tear)
		st.points++
		if acked, err = crashCheck(fsys, dir, now, acked, pending, header, forks, g.media, st); err != nil {
			return fmt.Errorf("round %d, after the crash: %w", round, err)
		}
	}
	return nil
}

// crashRound opens the session and appends runs until the file system
// crashes (or 40 batches are in). It returns the batch whose Append
// failed with the crash, if any; any other error is a failure.
func crashRound(fsys *crashFS, dir string, g *crashGen, now func() time.Time, acked *[]Record, header **Header, forks map[string]bool) ([]Record, error) {
	s, err := Open(dir, "crash", Options{Now: now, fs: fsys})
	if errors.Is(err, errCrashed) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if *header == nil {
		h := s.Header()
		*header = &h
	}
	batches := 0
	for batches < 40 {
		for _, batch := range g.run(*acked) {
			// At times a prompt carries media, stored before the message
			// that refers to them, as a run stores them.
			for i, r := range batch {
				if m, ok := r.Body.(Message); ok && m.Message.Role == RoleUser && g.rng.IntN(3) == 0 {
					data := make([]byte, 1+g.rng.IntN(3000))
					for j := range data {
						data[j] = byte(g.rng.Uint32())
					}
					digest, err := s.PutMedia(data)
					if errors.Is(err, errCrashed) {
						return nil, nil
					}
					if err != nil {
						return nil, fmt.Errorf("put media: %w", err)
					}
					g.media[digest] = data
					m.Message.Media = []MediaV1{{Type: "image", MIMEType: "image/png", Format: "png", SHA256: digest, Bytes: int64(len(data))}}
					batch[i].Body = m
				}
			}
			err := s.Append(batch...)
			if errors.Is(err, errCrashed) {
				return batch, nil
			}
			if err != nil {
				return nil, fmt.Errorf("append: %w", err)
			}
			*acked = append(*acked, batch...)
			batches++
		}
		if g.rng.IntN(10) == 0 {
			id := fmt.Sprintf("fork-%s-%d", g.prefix, g.runs)
			f, err := s.Fork(id)
			if errors.Is(err, errCrashed) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("fork: %w", err)
			}
			forks[id] = true
			if err := f.Close(); err != nil {
				return nil, fmt.Errorf("close fork: %w", err)
			}
		}
	}
	return nil, nil // the power fails after the round, the session still open
}

// crashCheck reopens the session on the crashed file system and checks it
// against what was acknowledged; it returns the records now in the file.
// A torn tail must be gone after one more append.
func crashCheck(fsys *crashFS, dir string, now func() time.Time, acked, pending []Record, header *Header, forks map[string]bool, media map[string][]byte, st *crashStats) ([]Record, error) {
	s, err := Open(dir, "crash", Options{Now: now, fs: fsys})
	if err != nil {
		return nil, fmt.Errorf("reopen: %w", err)
	}
	defer func() { s.Close() }()
	if header != nil && s.Header() != *header {
		return nil, fmt.Errorf("header %+v, want the acknowledged %+v (the file was lost and made anew)", s.Header(), *header)
	}
	got, err := s.ReadRecords()
	if err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	if len(got) < len(acked) {
		return nil, fmt.Errorf("%d records after the crash, %d acknowledged: lost %s", len(got), len(acked), describe(acked[len(got):]))
	}
	for i := range got {
		var want Record
		switch {
		case i < len(acked):
			want = acked[i]
		case i-len(acked) < len(pending):
			want = pending[i-len(acked)]
		default:
			return nil, fmt.Errorf("record %d (%s) was never appended", i+1, got[i].Type())
		}
		if !sameRecord(want, got[i]) {
			return nil, fmt.Errorf("record %d is %s, want %s", i+1, describe(got[i:i+1]), describe([]Record{want}))
		}
	}
	// Every media object a message in the file refers to is there, whole:
	// it was durable before the message was appended.
	for i, r := range got {
		m, ok := r.Body.(Message)
		if !ok {
			continue
		}
		for _, ref := range m.Message.Media {
			b, err := s.Media(ref.SHA256)
			if err != nil || !bytes.Equal(b, media[ref.SHA256]) {
				return nil, fmt.Errorf("record %d refers to media %s: %d bytes, %v", i+1, ref.SHA256[:12], len(b), err)
			}
			st.media++
		}
	}
	if len(pending) > 0 {
		if len(got) > len(acked) {
			st.keptUnacked++
		} else {
			st.lostUnacked++
		}
	}
	if s.TornTail() {
		st.torn++
		extra := Record{TS: now(), Body: ReasoningChange{Effort: "low"}}
		if err := s.Append(extra); err != nil {
			return nil, fmt.Errorf("append after a torn tail: %w", err)
		}
		s.Close()
		if s, err = Open(dir, "crash", Options{Now: now, fs: fsys}); err != nil {
			return nil, fmt.Errorf("reopen after repairing a torn tail: %w", err)
		}
		again, err := s.ReadRecords()
		if err != nil || s.TornTail() || len(again) != len(got)+1 || !sameRecord(extra, again[len(got)]) {
			return nil, fmt.Errorf("after the append that repairs a torn tail: %d records (want %d), torn %v, %v", len(again), len(got)+1, s.TornTail(), err)
		}
		got = again
	}
	for id := range forks {
		f, err := Open(dir, id, Options{Now: now, fs: fsys})
		if err != nil {
			return nil, fmt.Errorf("open the acknowledged fork %s: %w", id, err)
		}
		recs, err := f.ReadRecords()
		f.Close()
		if err != nil || len(recs) == 0 || recs[0].Type() != TypeFork {
			return nil, fmt.Errorf("the acknowledged fork %s holds %d records (%v), want its fork record first", id, len(recs), err)
		}
		st.forks++
	}
	return got, nil
}

// sameRecord reports whether two records encode to the same line.
func sameRecord(a, b Record) bool {
	x, err1 := appendRecord(nil, a)
	y, err2 := appendRecord(nil, b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func describe(recs []Record) string {
	var b strings.Builder
	for i, r := range recs {
		if i == 5 {
			fmt.Fprintf(&b, " … (%d in all)", len(recs))
			break
		}
		line, _ := appendRecord(nil, r)
		if len(line) > 120 {
			line = append(line[:117], "..."...)
		}
		fmt.Fprintf(&b, "\n\t%s", bytes.TrimSpace(line))
	}
	return b.String()
}

// TestCrashNewParents: a session created in a directory whose parents
// were missing too (~/.octet/sessions on a first run) survives a power
// loss once Open and its Append returned. makeDir used to sync only the
// session directory's parent, leaving the new parents' entries unsynced.
func TestCrashNewParents(t *testing.T) {
	fsys := newCrashFS()
	if err := fsys.MkdirAll("/home/u", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir("/home"); err != nil {
		t.Fatal(err)
	}
	const dir = "/home/u/.octet/sessions"
	s, err := Open(dir, "first", Options{fs: fsys})
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Body: RunEnd{RunID: "r1", Status: "completed"}}
	if err := s.Append(rec); err != nil {
		t.Fatal(err)
	}
	fsys = fsys.Crash(nil)
	if _, err := fsys.Stat(dir + "/first.jsonl"); err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	s, err = Open(dir, "first", Options{fs: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Records(); len(got) != 1 || !sameRecord(rec, got[0]) {
		t.Fatalf("after the crash: %d records, want the acknowledged run_end", len(got))
	}
}

// TestCrashFS checks the model itself: unsynced bytes and entries are
// lost, synced ones kept, a torn crash keeps a prefix of an unsynced tail.
func TestCrashFS(t *testing.T) {
	fsys := newCrashFS()
	f, err := fsys.OpenFile("/a", os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("synced\n"))
	if err := f.SyncData(); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("unsynced tail\n"))
	g, _ := fsys.OpenFile("/b", os.O_RDWR|os.O_CREATE, 0o600)
	g.Write([]byte("b"))
	g.SyncData()
	if err := fsys.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	d, _ := fsys.OpenFile("/d", os.O_RDWR|os.O_CREATE, 0o600)
	d.Write([]byte("d"))
	d.SyncData() // data synced, entry not
	c := fsys.Crash(nil)
	if _, err := c.Stat("/d"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an entry never dir-synced survives a crash: %v", err)
	}
	read := func(c *crashFS, name string) string {
		info, err := c.Stat(name)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		f, _ := c.OpenFile(name, os.O_RDONLY, 0)
		b := make([]byte, info.Size())
		f.ReadAt(b, 0)
		return string(b)
	}
	if got := read(c, "/a"); got != "synced\n" {
		t.Errorf("/a after a crash: %q", got)
	}
	if got := read(c, "/b"); got != "b" {
		t.Errorf("/b after a crash: %q", got)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, errCrashed) {
		t.Errorf("write after the crash: %v, want errCrashed", err)
	}
	seen := map[string]bool{}
	for i := range 200 {
		seen[read(fsys.Crash(rand.New(rand.NewPCG(uint64(i), 1))), "/a")] = true
	}
	if !seen["synced\n"] || !seen["synced\nunsynced tail\n"] || len(seen) < 5 {
		t.Errorf("torn crashes kept %d distinct contents of /a, want the synced part, the whole, and prefixes between", len(seen))
	}
	for s := range seen {
		if !strings.HasPrefix("synced\nunsynced tail\n", s) || !strings.HasPrefix(s, "synced\n") {
			t.Errorf("torn crash left %q", s)
		}
	}
	// The budget: the n+1-th mutating operation fails, and every later one.
	fsys = newCrashFS()
	fsys.SetBudget(1)
	h, err := fsys.OpenFile("/c", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("x")); !errors.Is(err, errCrashed) {
		t.Fatalf("write past the budget: %v", err)
	}
	if err := fsys.SyncDir("/"); !errors.Is(err, errCrashed) {
		t.Fatalf("dir sync past the budget: %v", err)
	}
}
