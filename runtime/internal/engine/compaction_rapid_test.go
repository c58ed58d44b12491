package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// A rapid model of long sessions under compaction. Each test case reuses
// one session for a few runs on a random small window that the fake
// provider enforces (a larger request is refused with its overflow error).
// The runs carry prompts of random sizes and random tool steps reading
// files of random sizes; each run's provider either reports usage
// truthfully (the request's size, AutoUsage), or per step reports zeros
// (the chat wire always sends a usage chunk; zeros are what a gateway
// that does not count sends) or an explicit random input usage up to the
// window, under or over the truth (more than the window would be a silent
// overflow, which discards the step); some runs get one or two overflow
// errors injected. After every run:
//
//   - no request the fake saw passed the window while a compaction could
//     have prevented it: whenever the host's view of the context before a
//     call was over the threshold, a compaction ran before the call. Every
//     prompt and tool output is small enough that there is always
//     something to summarize, so the only excuse for an oversize request
//     is that the newest usage the host could trust under-reported its
//     request's size (then overflow recovery compacts and retries);
//   - a run completes, unless an overflow was injected into it: then it
//     completes or ends with context_overflow (a second overflow in one
//     turn);
//
// and at the end the session's Statistics totals (input and output
// tokens) equal the sum of the usage the fake reported for every call it
// answered, summarizer calls included: the ledger.

// rapidStep is one scripted model answer of a run and the usage it
// reports.
type rapidStep struct {
	turn  fakeprovider.Turn
	usage fakeprovider.Usage // explicit usage, runs without AutoUsage only
}

func TestRapidCompactionModel(t *testing.T) {
	root := t.TempDir()
	files := []int{120, 600, 1500, 3000, 5000, 7000}
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, n := range files {
		if err := os.WriteFile(filepath.Join(ws, "f"+strconv.Itoa(i)+".txt"), []byte(strings.Repeat("tool output line\n", n/17+1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	maxRuns := 5
	if testing.Short() {
		maxRuns = 3
	}
	rapid.Check(t, func(rt *rapid.T) {
		home, err := os.MkdirTemp(root, "home")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(home)
		a, err := New(Options{Home: home, Getenv: func(string) string { return "" }, Jitter: func() float64 { return 0 },
			Sleep: func(context.Context, time.Duration) error { return nil }})
		if err != nil {
			rt.Fatal(err)
		}
		window := rapid.SampledFrom([]int{6000, 8000, 12000}).Draw(rt, "window")
		win, out := window, 400
		dir := filepath.Join(home, "sessions")
		var wantIn, wantOut int64
		// misled: the newest usage the host could trust under-reported its
		// request's size, so a request over the window may follow that no
		// threshold check could foresee (overflow recovery then handles it).
		misled := false
		runs := rapid.IntRange(2, maxRuns).Draw(rt, "runs")
		for run := range runs {
			auto := rapid.Bool().Draw(rt, "auto_usage")
			n := rapid.IntRange(1, 6).Draw(rt, "steps")
			steps := make([]rapidStep, n)
			for i := range steps {
				var tu fakeprovider.Turn
				if i < n-1 {
					tu.ToolCalls = []fakeprovider.ToolCall{{Name: "read", Arguments: `{"path":"f` + strconv.Itoa(rapid.IntRange(0, len(files)-1).Draw(rt, "file")) + `.txt"}`}}
				} else {
					tu.Text = strings.Repeat("answer ", rapid.IntRange(1, 600).Draw(rt, "answer"))
				}
				steps[i].turn = tu
				if !auto && rapid.Bool().Draw(rt, "explicit_usage") {
					steps[i].usage = fakeprovider.Usage{
						Input:  rapid.IntRange(1, window).Draw(rt, "usage_in"), // more would be a silent overflow
						Output: rapid.IntRange(1, 500).Draw(rt, "usage_out"),
					}
					steps[i].turn.Usage = steps[i].usage
				}
			}
			turns := make([]fakeprovider.Turn, n)
			for i := range steps {
				turns[i] = steps[i].turn
			}
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns, AutoUsage: auto, ContextWindow: window}})
			if err != nil {
				rt.Fatal(err)
			}
			injected := rapid.IntRange(0, 2).Draw(rt, "overflows")
			if rapid.IntRange(0, 3).Draw(rt, "inject") != 0 {
				injected = 0
			}
			for range injected {
				fake.InjectFault(fakeprovider.OverflowFault(fakeprovider.ModeChat, "", window+1, window))
			}
			prompt := strings.Repeat("p ", rapid.IntRange(50, 3000).Draw(rt, "prompt"))
			rc, err := a.Run(context.Background(), RunRequest{RunID: "run-" + strconv.Itoa(run), Workspace: ws, Model: "m", Prompt: prompt,
				SessionDir: dir, SessionID: "rapid", Tools: []string{"read"},
				Route: &InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeChat), Mode: string(fakeprovider.ModeChat),
					ContextWindowTokens: &win, MaxOutputTokens: &out}})
			if err != nil {
				fake.Close()
				rt.Fatal(err)
			}
			for ev := range rc.Events() {
				_ = ev
			}
			fr := rc.Wait()
			reqs := fake.Requests()
			fake.Close()
			switch {
			case fr.Status == protocol.StatusCompleted:
			case injected > 0 && fr.Status == protocol.StatusError && fr.Error != nil && fr.Error.Code == protocol.CodeContextOverflow:
			default:
				rt.Fatalf("run %d (%d overflows injected): %s %+v", run, injected, fr.Status, fr.Error)
			}
			for i, q := range reqs {
				if q.Method != "POST" {
					continue
				}
				if q.Fault == "overflow" && !misled {
					rt.Fatalf("run %d, request %d: %d tokens passed the window of %d (summary request: %v), and no usage report had misled the host", run, i, len(q.RawBody)/4, window, q.Summary)
				}
				if q.Fault != "" {
					if q.Summary {
						// An injected fault ended a compaction's summary
						// request: the context stays as large as it was, so
						// the next request may pass the window; overflow
						// recovery (or context_overflow) answers it.
						misled = true
					}
					continue
				}
				// The usage the fake reported for this answered call, and
				// whether it misleads the host about the context's size.
				size := len(q.RawBody) / 4
				switch {
				case q.Summary:
					misled = false // a checkpoint follows: the count restarts from estimates
					if auto {
						wantIn += int64(size)
						wantOut += int64(len(fakeprovider.DefaultSummary)/4 + 1)
					}
				case auto:
					tu := turns[q.Turn]
					wantIn += int64(size)
					o := len(tu.Text)/4 + 1
					for _, c := range tu.ToolCalls {
						o += (len(c.Name) + len(c.Arguments)) / 4
					}
					wantOut += int64(o)
					misled = false
				case steps[q.Turn].usage == (fakeprovider.Usage{}):
					// All zeros (the chat wire always sends a usage
					// chunk): the host must keep estimating.
				default:
					u := steps[q.Turn].usage
					wantIn += int64(u.Input)
					wantOut += int64(u.Output)
					misled = u.Input < size
				}
			}
		}
		s, err := a.OpenSession(dir, "rapid")
		if err != nil {
			rt.Fatal(err)
		}
		st := s.Statistics()
		s.Close()
		if st.InputTokens != wantIn || st.OutputTokens != wantOut {
			rt.Fatalf("the fake reported %d input and %d output tokens; statistics say %d and %d", wantIn, wantOut, st.InputTokens, st.OutputTokens)
		}
	})
}
