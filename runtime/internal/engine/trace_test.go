package engine

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// jsonLogger is a slog JSON logger writing to w at level lvl and above.
func jsonLogger(w io.Writer, lvl slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl}))
}

// logLine is one line of a jsonLogger's output.
type logLine struct {
	Level, Msg, Machine, Trigger, From, To, Panic, Stack string
	RunID                                                string `json:"run_id"`
}

// logLines decodes a jsonLogger's output, one record a line.
func logLines(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var e logLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, e)
	}
	return lines
}

// traceLevelName is how slog's built-in handlers print LevelTrace.
var traceLevelName = LevelTrace.String()

// TestTransitionsLoggedAtTraceLevel: with a logger enabled at LevelTrace,
// every machine of a run logs its transitions at LevelTrace with the run's
// ID; at debug level no transition is logged and no tracer is installed.
func TestTransitionsLoggedAtTraceLevel(t *testing.T) {
	for _, lvl := range []slog.Level{LevelTrace, slog.LevelDebug} {
		f := newFixture(t, text("hello"))
		var logs strings.Builder
		a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" }, Logger: jsonLogger(&logs, lvl),
			ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
		if err != nil {
			t.Fatal(err)
		}
		f.agent = a
		if _, res := f.run(f.req("q")); res.Status != "completed" {
			t.Fatalf("result %+v", res)
		}
		var got []string
		for _, e := range logLines(t, logs.String()) {
			if e.Msg != "state machine transition" {
				continue
			}
			if e.Level != traceLevelName || e.RunID != "run-1" {
				t.Errorf("transition logged as %+v", e)
			}
			got = append(got, e.Machine+":"+e.From+"-"+e.Trigger+"->"+e.To)
		}
		if lvl != LevelTrace {
			if len(got) != 0 {
				t.Errorf("at %s: transitions logged: %v", lvl, got)
			}
			continue
		}
		for _, want := range []string{
			"run:received-accept->accepted", "run:accepted-start->started", "run:started-stream->streaming",
			"run:streaming-stream->streaming", "run:settled-finalize->final",
			"recovery:idle-start->attempting", "recovery:attempting-attempt_succeeded->succeeded",
			"steering:open-after_turn->closed",
			"compaction:check-check->calling", "compaction:calling-answer->done",
		} {
			found := false
			for _, g := range got {
				found = found || g == want
			}
			if !found {
				t.Errorf("no transition %s in the log; got %v", want, got)
			}
		}
	}

	ctx := context.Background()
	var discard strings.Builder
	for _, l := range []*slog.Logger{jsonLogger(&discard, slog.LevelDebug), slog.New(slog.DiscardHandler)} {
		if tr := transitionTracer(ctx, l, "r"); tr != nil {
			t.Errorf("a logger disabled at LevelTrace has a tracer")
		}
	}
	if tr := transitionTracer(ctx, jsonLogger(&discard, LevelTrace), "r"); tr == nil {
		t.Error("a trace-level logger has no tracer")
	}
}

// countingHandler records the levels it is asked about and the records it
// handles; it is enabled from min up.
type countingHandler struct {
	min     slog.Level
	mu      sync.Mutex
	asked   map[slog.Level]int
	handled map[slog.Level]int
}

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked[l]++
	return l >= h.min
}

func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled[r.Level]++
	return nil
}

func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestTraceDisabledAskedOnce: a run whose logger drops LevelTrace asks the
// handler about that level once (when the run starts, to decide on the
// tracers) and never again, however many transitions its machines make,
// and hands it no trace record. A trace-enabled one gets every transition.
func TestTraceDisabledAskedOnce(t *testing.T) {
	for _, min := range []slog.Level{slog.LevelDebug, LevelTrace} {
		f := newFixture(t, text("one two three"))
		h := &countingHandler{min: min, asked: map[slog.Level]int{}, handled: map[slog.Level]int{}}
		a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" }, Logger: slog.New(h),
			ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
		if err != nil {
			t.Fatal(err)
		}
		f.agent = a
		if _, res := f.run(f.req("q")); res.Status != "completed" {
			t.Fatalf("result %+v", res)
		}
		h.mu.Lock()
		asked, handled := h.asked[LevelTrace], h.handled[LevelTrace]
		h.mu.Unlock()
		if min == slog.LevelDebug && (asked != 1 || handled != 0) {
			t.Errorf("trace off: asked about LevelTrace %d times, handled %d trace records; want 1 and 0", asked, handled)
		}
		// Enabled: once for the decision, then once per record by slog.Logger.
		if min == LevelTrace && (handled < 8 || asked != handled+1) {
			t.Errorf("trace on: asked %d times, handled %d trace records", asked, handled)
		}
	}
}
