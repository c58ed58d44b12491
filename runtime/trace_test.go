package runtime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestTransitionsLoggedAtTraceLevel: with a trace-level logger, every
// machine of a run logs its transitions with the run's ID; at debug level,
// or with no logger, no tracer is installed at all.
func TestTransitionsLoggedAtTraceLevel(t *testing.T) {
	f := newFixture(t, text("hello"))
	var logs strings.Builder
	log := zerolog.New(&logs).Level(zerolog.TraceLevel)
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" }, Logger: &log,
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	if _, res := f.run(f.req("q")); res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e struct {
			Level, Message, Machine, Trigger, From, To string
			RunID                                      string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e.Message != "state machine transition" {
			continue
		}
		if e.Level != "trace" || e.RunID != "run-1" {
			t.Errorf("transition logged as %s", line)
		}
		got = append(got, e.Machine+":"+e.From+"-"+e.Trigger+"->"+e.To)
	}
	for _, want := range []string{
		"run:received-accept->accepted", "run:accepted-start->started", "run:started-stream->streaming",
		"run:streaming-stream->streaming", "run:settled-finalize->final",
		"recovery:idle-start->attempting", "recovery:attempting-attempt_succeeded->succeeded",
		"steering:open-after_turn->closed",
	} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("no transition %s in the log; got %v", want, got)
		}
	}

	for _, l := range []zerolog.Logger{zerolog.New(&logs).Level(zerolog.DebugLevel), zerolog.Nop()} {
		if tr := transitionTracer(l, "r"); tr != nil {
			t.Errorf("a logger at %s has a tracer", l.GetLevel())
		}
	}
	if tr := transitionTracer(log, "r"); tr == nil {
		t.Error("a trace-level logger has no tracer")
	}
	prev := zerolog.GlobalLevel()
	zerolog.SetGlobalLevel(zerolog.DebugLevel)
	defer zerolog.SetGlobalLevel(prev)
	if tr := transitionTracer(log, "r"); tr != nil {
		t.Error("a tracer is installed while the global level drops trace events")
	}
}
