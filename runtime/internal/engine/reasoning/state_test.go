package reasoning

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// fakeEnv is a run as a State sees it: the session's records, the
// RunControl's pending selection, the agent's selection, and the log.
type fakeEnv struct {
	recs    []store.Record
	failAt  error // Append's error, when set
	pending *Config
	closed  bool
	agent   Config
	noted   []Config
	log     bytes.Buffer
}

func (e *fakeEnv) RunID() string { return "run-1" }

func (e *fakeEnv) Append(recs ...store.Record) error {
	if e.failAt != nil {
		return e.failAt
	}
	e.recs = append(e.recs, recs...)
	return nil
}

func (e *fakeEnv) TakeReasoning(admit func(Config) bool) (*Config, bool) {
	p := e.pending
	if p == nil {
		return nil, false
	}
	if !admit(*p) {
		return nil, true
	}
	e.pending = nil
	return p, false
}

func (e *fakeEnv) CloseReasoning() *Config {
	p := e.pending
	e.pending, e.closed = nil, true
	return p
}

func (e *fakeEnv) AgentReasoning() Config { return e.agent }
func (e *fakeEnv) NoteReasoning(c Config) { e.noted = append(e.noted, c) }
func (e *fakeEnv) ReasoningLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(&e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var qualified = Route{Model: "m", Endpoint: "lab", Supports: true, ModelUpdates: true, EndpointUpdates: true, Ultra: true}

func TestStartChoosesTheBaseline(t *testing.T) {
	high := "high"
	for _, tc := range []struct {
		name      string
		route     Route
		requested *string
		sess      Recorded
		agent     Config
		rec       *store.ReasoningChange // nil: no record
		effective Config
	}{
		{"the request's effort", qualified, &high, Recorded{}, Config{Effort: "low"}, &store.ReasoningChange{Effort: "high"}, Config{Effort: "high"}},
		{"the request's effort supersedes the session's updates", qualified, &high, Recorded{Baseline: "high", Update: "low"}, Config{}, &store.ReasoningChange{Effort: "high"}, Config{Effort: "high"}},
		{"the session's selection", qualified, nil, Recorded{Baseline: "medium", Update: "low"}, Config{Effort: "high"}, nil, Config{Effort: "low"}},
		{"the session's Ultra", qualified, nil, Recorded{Baseline: "high", Ultra: true}, Config{}, nil, Config{Effort: "high", Ultra: true}},
		{"the agent's", qualified, nil, Recorded{}, Config{Effort: "medium"}, &store.ReasoningChange{Effort: "medium"}, Config{Effort: "medium"}},
		{"the agent's Ultra where the route declares it", qualified, nil, Recorded{}, Config{Effort: "high", Ultra: true}, &store.ReasoningChange{Effort: "high", Ultra: true}, Config{Effort: "high", Ultra: true}},
		{"the agent's Ultra elsewhere is its effort", Route{Supports: true}, nil, Recorded{}, Config{Effort: "high", Ultra: true}, &store.ReasoningChange{Effort: "high"}, Config{Effort: "high"}},
		{"an update over the route's default", qualified, nil, Recorded{Update: "low"}, Config{Effort: "high"}, nil, Config{Effort: "low"}},
		{"no reasoning", Route{}, &high, Recorded{Baseline: "low"}, Config{Effort: "high"}, nil, Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &fakeEnv{agent: tc.agent}
			var s State
			s.Bind(env, tc.route)
			rec := s.Start(tc.requested, tc.sess)
			var got *store.ReasoningChange
			if rec != nil {
				c := rec.Body.(store.ReasoningChange)
				got = &c
			}
			if !cmp.Equal(got, tc.rec) {
				t.Errorf("record %+v, want %+v", got, tc.rec)
			}
			if e := s.Effective(); e != tc.effective {
				t.Errorf("effective %+v, want %+v", e, tc.effective)
			}
			if tc.route.Supports && (len(env.noted) != 1 || env.noted[0] != tc.effective) {
				t.Errorf("noted %+v", env.noted)
			}
			if !tc.route.Supports && (len(env.noted) != 0 || s.Baseline() != "") {
				t.Errorf("a route without reasoning noted %+v, baseline %q", env.noted, s.Baseline())
			}
		})
	}
}

// TestBoundaryUpdateAndBaseline: between two efforts a qualified route
// gets an update (recorded, appended to the conversation, the baseline
// pinned); a change to the route's default and Ultra set a new baseline.
func TestBoundaryUpdateAndBaseline(t *testing.T) {
	env := &fakeEnv{}
	var s State
	high := "high"
	s.Bind(env, qualified)
	s.Start(&high, Recorded{})
	msgs := []provider.Message{{Role: provider.RoleUser, Text: "q"}}

	env.pending = &Config{Effort: "low"}
	if err := s.Boundary(context.Background(), 2, &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Role != provider.RoleDeveloper || msgs[1].Text != "Reasoning effort is now low." || msgs[1].ReasoningEffort != "low" {
		t.Fatalf("conversation %+v", msgs)
	}
	if s.Baseline() != "high" || s.Effective() != (Config{Effort: "low"}) {
		t.Errorf("baseline %q, effective %+v", s.Baseline(), s.Effective())
	}
	if m, ok := env.recs[0].Body.(store.Message); !ok || m.RunID != "run-1" {
		t.Errorf("record %+v", env.recs[0].Body)
	}

	env.pending = &Config{Effort: "high", Ultra: true}
	if err := s.Boundary(context.Background(), 3, &msgs); err != nil {
		t.Fatal(err)
	}
	if got := env.recs[1].Body; got != (store.ReasoningChange{Effort: "high", Ultra: true}) || len(msgs) != 2 {
		t.Errorf("Ultra: record %+v, %d messages", got, len(msgs))
	}
	env.pending = &Config{}
	if err := s.Boundary(context.Background(), 4, &msgs); err != nil {
		t.Fatal(err)
	}
	if got := env.recs[2].Body; got != (store.ReasoningChange{}) || s.Baseline() != "" {
		t.Errorf("off: record %+v, baseline %q", got, s.Baseline())
	}
	// The same selection again changes nothing.
	env.pending = &Config{}
	if err := s.Boundary(context.Background(), 5, &msgs); err != nil || len(env.recs) != 3 {
		t.Errorf("no change: %v, %d records", err, len(env.recs))
	}
	if env.pending != nil {
		t.Error("a selection that changes nothing stays pending")
	}
}

// TestBoundaryFailedAppend: a change the session could not record is not
// applied.
func TestBoundaryFailedAppend(t *testing.T) {
	env := &fakeEnv{}
	var s State
	high := "high"
	s.Bind(env, qualified)
	s.Start(&high, Recorded{})
	env.failAt, env.pending = errors.New("disk full"), &Config{Effort: "low"}
	msgs := []provider.Message{{Role: provider.RoleUser, Text: "q"}}
	if err := s.Boundary(context.Background(), 2, &msgs); err == nil || len(msgs) != 1 {
		t.Fatalf("%v, %d messages", err, len(msgs))
	}
	if s.Effective() != (Config{Effort: "high"}) {
		t.Errorf("effective %+v", s.Effective())
	}
}

// TestBoundaryHoldsAnthropicToggle: on Anthropic Messages a change that
// turns thinking on waits inside a tool-use loop, and is admitted where a
// new assistant turn begins; a change between efforts is not held.
func TestBoundaryHoldsAnthropicToggle(t *testing.T) {
	env := &fakeEnv{}
	var s State
	s.Bind(env, Route{Model: "c", Supports: true, ModelUpdates: true, EndpointUpdates: true, Anthropic: true})
	s.Start(nil, Recorded{})
	loop := []provider.Message{{Role: provider.RoleUser, Text: "q"}, {Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a", Name: "ls"}}},
		{Role: provider.RoleTool, ToolCallID: "a", Text: "x"}}
	env.pending = &Config{Effort: "high"}
	if err := s.Boundary(context.Background(), 2, &loop); err != nil {
		t.Fatal(err)
	}
	if env.pending == nil || len(env.recs) != 0 || !bytes.Contains(env.log.Bytes(), []byte("waits for the assistant turn to end")) {
		t.Fatalf("held: pending %+v, %d records, log %q", env.pending, len(env.recs), env.log.String())
	}
	turn := append(loop, provider.Message{Role: provider.RoleAssistant, Text: "a"}, provider.Message{Role: provider.RoleUser, Text: "next"})
	if err := s.Boundary(context.Background(), 3, &turn); err != nil {
		t.Fatal(err)
	}
	if env.pending != nil || s.Baseline() != "high" {
		t.Fatalf("admitted: pending %+v, baseline %q", env.pending, s.Baseline())
	}
	if !s.Admits("low", loop) || s.Admits("", loop) {
		t.Error("a change between efforts is admitted mid-turn, turning thinking off is not")
	}
}

// TestEndRecordsPending: a selection still pending at the run's end is
// returned as a record, applied only by commit; none: nil.
func TestEndRecordsPending(t *testing.T) {
	env := &fakeEnv{}
	var s State
	high := "high"
	s.Bind(env, qualified)
	s.Start(&high, Recorded{})
	if rec, commit := s.End(); rec != nil || commit != nil || !env.closed {
		t.Fatalf("nothing pending: %+v", rec)
	}
	env.pending = &Config{Effort: "medium"}
	rec, commit := s.End()
	if m, ok := rec.Body.(store.Message); !ok || m.RunID != "run-1" {
		t.Fatalf("record %+v", rec)
	}
	if s.Effective().Effort != "high" {
		t.Error("applied before the record was written")
	}
	commit()
	if s.Effective().Effort != "medium" || env.noted[len(env.noted)-1] != (Config{Effort: "medium"}) {
		t.Errorf("effective %+v, noted %+v", s.Effective(), env.noted)
	}
}

func TestWorkerEffort(t *testing.T) {
	var s State
	env := &fakeEnv{}
	s.Bind(env, qualified)
	if s.Start(nil, Recorded{}); s.WorkerEffort() != nil {
		t.Error("no effort in effect: a worker names none")
	}
	s.Start(nil, Recorded{Baseline: "high", Update: "low"})
	if e := s.WorkerEffort(); e == nil || *e != "low" {
		t.Errorf("worker effort %v, want the update's", e)
	}
}

func TestAdmit(t *testing.T) {
	observed := func() bool { return true }
	unobserved := func() bool { return false }
	for _, tc := range []struct {
		name     string
		route    Route
		cfg      Config
		observed func() bool
		want     error
	}{
		{"qualified", qualified, Config{Effort: "low"}, unobserved, nil},
		{"invalid", qualified, Config{Effort: "max"}, observed, ErrInvalid},
		{"no reasoning", Route{Model: "m"}, Config{Effort: "low"}, observed, ErrUnsupported},
		{"no updates", Route{Model: "m", Supports: true}, Config{Effort: "low"}, observed, ErrNotQualified},
		{"no model updates", Route{Model: "m", Supports: true, EndpointUpdates: true}, Config{Effort: "low"}, observed, ErrNotQualified},
		{"no endpoint updates", Route{Model: "m", Supports: true, ModelUpdates: true}, Config{Ultra: true}, observed, ErrNotQualified},
		{"no Ultra", Route{Model: "m", Supports: true, ModelUpdates: true, EndpointUpdates: true}, Config{Ultra: true}, observed, ErrUltraUnsupported},
		{"Ultra without an observer", qualified, Config{Ultra: true}, unobserved, ErrObserverRequired},
		{"Ultra", qualified, Config{Ultra: true}, observed, nil},
	} {
		err := tc.route.Admit(tc.cfg, tc.observed)
		if (tc.want == nil) != (err == nil) || !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestConfigNormalized(t *testing.T) {
	if got := (Config{Ultra: true}).Normalized(); got != (Config{Effort: "high", Ultra: true}) {
		t.Errorf("Ultra's default effort: %+v", got)
	}
	if got := (Config{Effort: "low", Ultra: true}).Normalized(); got.Effort != "low" {
		t.Errorf("a named effort stays: %+v", got)
	}
}

// TestBeginsAssistantTurn: which conversations a call begins a new
// assistant turn on (where Anthropic's thinking mode may change).
func TestBeginsAssistantTurn(t *testing.T) {
	user := provider.Message{Role: "user", Text: "q"}
	answer := provider.Message{Role: "assistant", Text: "a"}
	toolUse := provider.Message{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "a", Name: "ls"}}}
	result := provider.Message{Role: "tool", ToolCallID: "a", Text: "x"}
	for _, tc := range []struct {
		name string
		msgs []provider.Message
		want bool
	}{
		{"empty", nil, true},
		{"prompt", []provider.Message{user}, true},
		{"after an answer", []provider.Message{user, answer, user}, true},
		{"history then prompt", []provider.Message{user, answer, user, user}, true},
		{"tool result", []provider.Message{user, toolUse, result}, false},
		{"steering after a tool result", []provider.Message{user, toolUse, result, user}, false},
		{"new prompt after a dangling loop", []provider.Message{user, toolUse, result, user, user}, false},
		{"after a finished loop", []provider.Message{user, toolUse, result, answer, user}, true},
		{"assistant last", []provider.Message{user, answer}, false},
	} {
		if got := BeginsAssistantTurn(tc.msgs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestQualifiedNamesWhatIsMissing: a change during a run needs the
// model's and the endpoint's declaration, and the error names the one (or
// both) missing.
func TestQualifiedNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name          string
		model, endpnt bool
		want          string // "" qualified
	}{
		{"both", true, true, ""},
		{"the model's missing", false, true, `the model "lab-model" does not declare reasoning_updates`},
		{"the endpoint's missing", true, false, `the endpoint "lab" does not declare reasoning_updates`},
		{"both missing", false, false, `neither the model "lab-model" nor the endpoint "lab" declares reasoning_updates`},
	} {
		r := Route{Model: "lab-model", Endpoint: "lab", Supports: true, ModelUpdates: tc.model, EndpointUpdates: tc.endpnt}
		err := r.Qualified()
		if r.Updates() != (tc.want == "") {
			t.Errorf("%s: Updates %v", tc.name, r.Updates())
		}
		if tc.want == "" {
			if err != nil || r.Admit(Config{Effort: "low"}, func() bool { return false }) != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrNotQualified) || !strings.HasSuffix(err.Error(), ": "+tc.want) {
			t.Errorf("%s: %v, want it to end with %q", tc.name, err, tc.want)
		}
		if aerr := r.Admit(Config{Effort: "low"}, func() bool { return true }); aerr == nil || aerr.Error() != err.Error() {
			t.Errorf("%s: Admit %v", tc.name, aerr)
		}
	}
}

// TestRouteOf: what a catalog route declares; an inline route never
// declares reasoning updates.
func TestRouteOf(t *testing.T) {
	m := catalog.Model{ID: "lab-model", Provider: "lab", SupportsReasoning: true, ReasoningUpdates: true,
		EndpointReasoningUpdates: true, ReasoningUltra: true, Mode: catalog.ModeAnthropicMessages}
	want := Route{Model: "lab-model", Endpoint: "lab", Supports: true, ModelUpdates: true, EndpointUpdates: true, Ultra: true, Anthropic: true}
	if got := RouteOf(m); got != want {
		t.Errorf("RouteOf %+v, want %+v", got, want)
	}
	m.Inline = true
	if got := RouteOf(m); got.ModelUpdates || got.EndpointUpdates {
		t.Errorf("an inline route declares %+v", got)
	}
	for _, b := range catalog.Builtin() {
		if r := RouteOf(b); !r.EndpointUpdates || r.ModelUpdates || r.Updates() {
			t.Errorf("built-in %s: %+v: its endpoint declares reasoning updates, its model does not", b.ID, r)
		}
	}
}
