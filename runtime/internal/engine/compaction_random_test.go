package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/store"
)

// TestRandomLongSessions drives sessions of random runs (prompts and
// answers of random sizes, some with a tool step) on random small windows
// that the fake provider enforces, reporting usage by the request's size.
// No request ever passes the window (the threshold check compacts in
// time), every run completes, and the session's usage ledger equals what
// the provider reported for every call it answered, summarizer calls
// included.
func TestRandomLongSessions(t *testing.T) {
	runs := 80
	if testing.Short() {
		runs = 25
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			words := func(n int) string { return strings.Repeat("word ", n/5+1) }
			window := []int{5000, 8000, 12000}[r.IntN(3)]
			var turns []fakeprovider.Turn
			prompts := make([]string, runs)
			for i := range runs {
				prompts[i] = words(100 + r.IntN(2900))
				if r.IntN(3) == 0 {
					turns = append(turns, fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "ls", Arguments: `{}`}}})
				}
				turns = append(turns, fakeprovider.Turn{Text: words(10 + r.IntN(2000))})
			}
			e := newCompactionEnv(t, fakeprovider.ModeChat, fakeprovider.Script{Turns: turns, AutoUsage: true, ContextWindow: window})
			e.win, e.out = window, 500
			for i := range runs {
				if _, res := e.run("run-"+strconv.Itoa(i), prompts[i]); res.Status != "completed" {
					t.Fatalf("window %d, run %d: %+v %+v", window, i, res, res.Error)
				}
			}
			var reported int64
			summarized := 0
			for _, q := range e.fake.Requests() {
				if q.Summary {
					summarized++
				}
				if q.Fault == "overflow" {
					t.Fatalf("window %d: a request of %d tokens passed the window", window, len(q.RawBody)/4)
				}
				if q.Fault == "" && q.Method == "POST" {
					reported += int64(len(q.RawBody) / 4)
				}
			}
			if summarized == 0 {
				t.Fatalf("window %d: the session never compacted", window)
			}
			var ledger int64
			for _, rec := range e.sessionRecords() {
				if u, ok := rec.Body.(store.Usage); ok {
					ledger += u.Usage.InputTokens
				}
			}
			s, err := e.agent.OpenSession(e.dir, "long")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if st := s.Statistics(); ledger != reported || st.InputTokens != reported {
				t.Fatalf("provider reported %d input tokens, the ledger holds %d, statistics say %d", reported, ledger, st.InputTokens)
			}
		})
	}
}
