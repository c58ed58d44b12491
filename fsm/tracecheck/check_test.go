package tracecheck_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/compaction"
	"octet.dev/host/fsm/recovery"
	"octet.dev/host/fsm/run"
	"octet.dev/host/fsm/session"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/fsm/tracecheck"
)

func load(t *testing.T) *tracecheck.Checker {
	t.Helper()
	c, err := tracecheck.Load(func(f string) ([]byte, error) { return os.ReadFile(filepath.Join("../../tla", f)) })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tracer logs like the runtime's tracer (runtime/internal/engine/trace.go):
// slog JSON lines, the recovery machines numbered by their start.
func tracer(log *slog.Logger, runID string) fsm.Tracer {
	var n int64
	return func(t fsm.Transition) {
		attrs := []slog.Attr{slog.String("machine", t.Machine), slog.String("trigger", t.Trigger),
			slog.String("from", t.From), slog.String("to", t.To),
			slog.String("from_state", t.FromState), slog.String("to_state", t.ToState)}
		if runID != "" {
			attrs = append(attrs, slog.String("run_id", runID))
		}
		switch {
		case t.Instance > 0:
			attrs = append(attrs, slog.Int64("instance", t.Instance))
		case t.Machine == "recovery":
			if t.From == "idle" {
				n++
			}
			attrs = append(attrs, slog.Int64("instance", n))
		}
		log.LogAttrs(context.Background(), slog.Level(-8), tracecheck.Message, attrs...)
	}
}

func must[E any](t *testing.T) func([]E, error) {
	return func(_ []E, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// realLog drives the real machines through a session of three requests
// of five events each and a run with steering and two recovered
// operations: more request IDs, events and pending messages than the
// specs' models hold.
func realLog(t *testing.T) []byte {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.Level(-8)}))
	log.Info("not a transition")
	s := session.New()
	s.SetTracer(tracer(log, ""))
	fireS := must[session.Effect](t)
	for _, id := range []string{"r1", "r2", "r3"} {
		fireS(s.Fire(session.Input{Trigger: session.TrRequest, RequestID: id}))
		for range 5 {
			fireS(s.Fire(session.Input{Trigger: session.TrEvent}))
		}
		fireS(s.Fire(session.Input{Trigger: session.TrTerminal}))
	}
	fireS(s.Fire(session.Input{Trigger: session.TrEOF}))

	trace := tracer(log, "run-1")
	r, q := run.New(), steering.New()
	r.SetTracer(trace)
	q.SetTracer(trace)
	fireR, fireQ := must[run.Effect](t), must[steering.Effect](t)
	fireR(r.Fire(run.Input{Trigger: run.TrAccept}))
	fireR(r.Fire(run.Input{Trigger: run.TrStart}))
	for range 3 {
		fireQ(q.Fire(steering.Input{Trigger: steering.TrSteer}))
	}
	fireQ(q.Fire(steering.Input{Trigger: steering.TrFollowUp}))
	for op := range 2 {
		m, err := recovery.New(recovery.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		m.SetTracer(trace)
		fire := must[recovery.Effect](t)
		fire(m.Fire(recovery.Input{Trigger: recovery.TrStart}))
		if op == 0 {
			fire(m.Fire(recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true}, NowMS: 10}))
			fire(m.Fire(recovery.Input{Trigger: recovery.TrTimerFired, NowMS: 2000}))
		}
		fire(m.Fire(recovery.Input{Trigger: recovery.TrAttemptSucceeded}))
		for range 4 {
			fireR(r.Fire(run.Input{Trigger: run.TrStream}))
		}
		fireQ(q.Fire(steering.Input{Trigger: steering.TrAfterTool}))
	}
	// Two native steering intents, their steps interleaved, each machine
	// numbered by its driver.
	var intents [2]*steering.NativeMachine
	for i := range intents {
		intents[i] = steering.NewNative()
		n := int64(i + 1)
		intents[i].SetTracer(func(tr fsm.Transition) { tr.Instance = n; trace(tr) })
	}
	fireN := must[steering.NativeEffect](t)
	for _, step := range []struct {
		i  int
		tr steering.NativeTrigger
	}{{0, steering.NTrRecord}, {0, steering.NTrDispatch}, {1, steering.NTrRecord}, {0, steering.NTrAccepted},
		{1, steering.NTrDispatch}, {0, steering.NTrSuccessor}, {1, steering.NTrFailed}, {0, steering.NTrUsage}} {
		fireN(intents[step.i].Fire(steering.NativeInput{Trigger: step.tr}))
	}
	fireQ(q.Fire(steering.Input{Trigger: steering.TrAfterTurn, Answered: true}))
	fireQ(q.Fire(steering.Input{Trigger: steering.TrClose}))
	fireR(r.Fire(run.Input{Trigger: run.TrSettle, Status: run.StatusCompleted}))
	fireR(r.Fire(run.Input{Trigger: run.TrFinalize}))
	return out.Bytes()
}

func TestRealLogPasses(t *testing.T) {
	c := load(t)
	log := realLog(t)
	if err := c.Log(log); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Log(st)
	lines := strings.Count(string(log), tracecheck.Message)
	if st.Steps != lines || st.Runs != 1 || st.Instances != 7 || st.ByMachine["recovery"] != 6 || st.ByMachine["session"] != 22 || st.ByMachine["native_steering"] != 8 {
		t.Errorf("stats %+v, %d transition lines", st, lines)
	}
}

// mutate returns log with its transition lines passed through f (index
// among transition lines, the line; "" drops it).
func mutate(log []byte, f func(i int, line string) string) []byte {
	var out []string
	i := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		if strings.Contains(l, tracecheck.Message) {
			l = f(i, l)
			i++
			if l == "" {
				continue
			}
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// TestCorruptedLogRejected: a step dropped, a step the spec does not
// have, a state changed, a run resumed after its end, an operation's
// instance lost: each is the violation reported, at its line.
func TestCorruptedLogRejected(t *testing.T) {
	log := realLog(t)
	nth := func(sub string, n int) func(int, string) bool {
		seen := 0
		return func(_ int, l string) bool {
			if strings.Contains(l, sub) {
				seen++
				return seen == n
			}
			return false
		}
	}
	for _, tc := range []struct {
		name   string
		at     func(int, string) bool
		change func(string) string
		reason string
	}{
		{"a step dropped", nth(`"trigger":"event"`, 3), func(string) string { return "" }, "another state than step"},
		{"accept skipped", nth(`"trigger":"accept"`, 1), func(string) string { return "" }, "not an initial state"},
		// The run starts straight from received: a step RunLifecycle
		// does not have.
		{"started from received", nth(`"trigger":"accept"`, 1), func(l string) string {
			return strings.NewReplacer(`"trigger":"accept"`, `"trigger":"start"`, `"to":"accepted"`, `"to":"started"`,
				`\"Phase\":\"accepted\"`, `\"Phase\":\"started\"`).Replace(l)
		}, "does not allow Start"},
		{"a terminal that leaves the session busy", nth(`"trigger":"terminal"`, 1), func(l string) string {
			return strings.NewReplacer(`"to":"idle"`, `"to":"busy"`, `\"Phase\":\"idle\"`, `\"Phase\":\"busy\"`).Replace(l)
		}, "does not allow Terminal"},
		{"phases that are not the states'", nth(`"trigger":"terminal"`, 2), func(l string) string {
			return strings.Replace(l, `"to":"idle"`, `"to":"busy"`, 1)
		}, "the states' phases"},
		{"a status lost", nth(`"trigger":"finalize"`, 1), func(l string) string {
			return strings.Replace(l, `\"Phase\":\"final\",\"Status\":\"completed\"`, `\"Phase\":\"final\",\"Status\":\"\"`, 1)
		}, "does not allow Finalize"},
		{"a retry not counted", nth(`"trigger":"attempt_failed"`, 1), func(l string) string {
			return strings.Replace(l, `\"Phase\":\"backing_off\",\"Retries\":1`, `\"Phase\":\"backing_off\",\"Retries\":0`, 1)
		}, "does not allow AttemptFailed"},
		{"no instance", nth(`"machine":"recovery"`, 1), func(l string) string {
			return strings.Replace(l, `"instance":1`, `"instance":0`, 1)
		}, "instance 0"},
		// The second intent's record logged as the first's: the first
		// intent is past idle.
		{"native intents mixed up", nth(`"trigger":"record"`, 2), func(l string) string {
			return strings.Replace(l, `"instance":2`, `"instance":1`, 1)
		}, "another state than step"},
		{"a native intent not numbered", nth(`"machine":"native_steering"`, 1), func(l string) string {
			return strings.Replace(l, `"instance":1`, `"instance":0`, 1)
		}, "instance 0"},
		{"an unknown machine", nth(`"machine":"run"`, 1), func(l string) string {
			return strings.Replace(l, `"machine":"run"`, `"machine":"walk"`, 1)
		}, "unknown machine"},
		{"no states", nth(`"machine":"steering"`, 2), func(l string) string {
			l, _, _ = strings.Cut(l, `,"from_state"`)
			return l + "}"
		}, "no from_state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := -1
			bad := mutate(log, func(i int, l string) string {
				if at < 0 && tc.at(i, l) {
					at = i
					if m := tc.change(l); m != l {
						return m
					}
					t.Fatalf("the mutation changed nothing in %s", l)
				}
				return l
			})
			err := load(t).Log(bad)
			var v *tracecheck.Violation
			if !errors.As(err, &v) || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("got %v, want a violation %q", err, tc.reason)
			}
			t.Log(err)
		})
	}
	// A run that streams after its end: the run machine's last line
	// again, from final.
	var last string
	mutate(log, func(_ int, l string) string {
		if strings.Contains(l, `"machine":"run"`) {
			last = l
		}
		return l
	})
	again := strings.NewReplacer(`"from":"settled"`, `"from":"final"`, `\"Phase\":\"settled\"`, `\"Phase\":\"final\"`).Replace(last)
	err := load(t).Log(append(log, again+"\n"...))
	var v *tracecheck.Violation
	if !errors.As(err, &v) || !strings.Contains(v.Reason, "does not allow Finalize") || v.Index != 12 {
		t.Errorf("a step after final: %v", err)
	}
}

// TestEveryTriggerHasAnAction: every trigger of every machine names an
// action its spec's graph has, so no logged step is refused for a name.
func TestEveryTriggerHasAnAction(t *testing.T) {
	c := load(t)
	for _, tc := range []struct {
		machine  string
		triggers []string
	}{
		{"session", strs(session.Triggers)},
		{"run", strs(run.Triggers)},
		{"steering", strs(steering.Triggers)},
		{"native_steering", strs(steering.NativeTriggers)},
		{"recovery", strs(recovery.Triggers)},
		{"compaction", strs(compaction.Triggers)},
	} {
		for _, tr := range tc.triggers {
			if !c.HasAction(tc.machine, tr) {
				t.Errorf("%s: trigger %q has no action of its spec", tc.machine, tr)
			}
		}
	}
}

func strs[S ~string](s []S) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}
