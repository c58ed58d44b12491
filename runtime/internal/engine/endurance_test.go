package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// enduranceResult is what driving a session through many runs found.
type enduranceResult struct {
	runs, steps int
	compactions int // successful compactions (compaction_finish ok)
	summarizer  int // summarizer requests the fake answered
	overflows   int // requests the fake refused for passing its window
	failures    int // runs that did not complete
	firstFail   string
}

// driveEndurance reuses one session for runs runs of steps model steps
// each (steps-1 tool-call steps reading files of 1 to 4 KiB, then a final
// answer) against a fake provider with a window of window tokens that
// refuses any larger request and reports usage by the request's size
// (AutoUsage). Each run gets a fresh fake server, so that the server's
// request log stays small; the session persists on disk.
func driveEndurance(tb testing.TB, runs, steps, window int) enduranceResult {
	tb.Helper()
	home, ws := tb.TempDir(), tb.TempDir()
	r := rand.New(rand.NewPCG(7, uint64(window)))
	for i := range 8 {
		body := strings.Repeat("func f() { return } // line of file "+strconv.Itoa(i)+"\n", 25+r.IntN(75))
		if err := os.WriteFile(filepath.Join(ws, "f"+strconv.Itoa(i)+".go"), []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" }, Jitter: func() float64 { return 0 },
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(home, "sessions")
	win, out := window, 500
	res := enduranceResult{runs: runs}
	for run := range runs {
		turns := make([]fakeprovider.Turn, 0, steps)
		for range steps - 1 {
			turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "read", Arguments: `{"path":"f` + strconv.Itoa(r.IntN(8)) + `.go"}`}}})
		}
		turns = append(turns, fakeprovider.Turn{Text: strings.Repeat("done ", 20+r.IntN(200))})
		fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns, AutoUsage: true, ContextWindow: window}})
		if err != nil {
			tb.Fatal(err)
		}
		rc, err := a.Run(context.Background(), RunRequest{RunID: "run-" + strconv.Itoa(run), Workspace: ws, Model: "m",
			Prompt: strings.Repeat("please read the files ", 5+r.IntN(40)), SessionDir: dir, SessionID: "endurance", Tools: []string{"read"},
			Route: &InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeChat), Mode: string(fakeprovider.ModeChat),
				ContextWindowTokens: &win, MaxOutputTokens: &out}})
		if err != nil {
			tb.Fatal(err)
		}
		for ev := range rc.Events() {
			if f, ok := ev.Data.(*protocol.CompactionFinish); ok && f.OK {
				res.compactions++
			}
		}
		if fr := rc.Wait(); fr.Status != "completed" {
			res.failures++
			if res.firstFail == "" {
				res.firstFail = "run " + strconv.Itoa(run) + ": " + fr.Status
				if fr.Error != nil {
					res.firstFail += " " + string(fr.Error.Code) + ": " + fr.Error.Message
				}
			}
		}
		for _, q := range fake.Requests() {
			switch {
			case q.Fault == "overflow":
				res.overflows++
			case q.Summary:
				res.summarizer++
			case q.Fault == "" && q.Method == "POST":
				res.steps++
			}
		}
		fake.Close()
	}
	return res
}

// TestEnduranceCompaction is the reduced endurance check: one session
// through 30 runs of 20 steps on a window of 8,000 tokens. Every run
// completes, every step was answered, the session compacted, and no
// request ever passed the window.
func TestEnduranceCompaction(t *testing.T) {
	runs := 30
	if testing.Short() {
		runs = 10
	}
	res := driveEndurance(t, runs, 20, 8000)
	if res.failures > 0 || res.overflows > 0 {
		t.Fatalf("%d failed runs (first: %s), %d requests over the window", res.failures, res.firstFail, res.overflows)
	}
	t.Logf("%+v", res)
	if res.steps != runs*20 {
		t.Fatalf("%d model steps answered, want %d", res.steps, runs*20)
	}
	if res.compactions == 0 || res.summarizer < res.compactions {
		t.Fatalf("%d compactions from %d summarizer requests", res.compactions, res.summarizer)
	}
}

// BenchmarkEndurance1000x20 is the compaction endurance figure: one session
// driven through 1,000 runs of 20 steps each on a small window never fails
// on context size. It reports the runs, compactions, failed runs,
// requests over the window and the time per run.
func BenchmarkEndurance1000x20(b *testing.B) {
	for range b.N {
		t0 := time.Now()
		res := driveEndurance(b, 1000, 20, 8000)
		elapsed := time.Since(t0)
		b.ReportMetric(float64(res.runs), "runs")
		b.ReportMetric(float64(res.compactions), "compactions")
		b.ReportMetric(float64(res.failures), "failures")
		b.ReportMetric(float64(res.overflows), "overflows")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(res.runs), "ms/run")
		if res.failures > 0 || res.overflows > 0 {
			b.Errorf("%d failed runs (first: %s), %d requests over the window", res.failures, res.firstFail, res.overflows)
		}
	}
}
