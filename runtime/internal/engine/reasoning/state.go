package reasoning

import (
	"context"
	"log/slog"

	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Env is what a run's State needs of the run: its narrow environment,
// which the engine's driver satisfies.
type Env interface {
	// RunID is the run's id.
	RunID() string
	// Append appends records to the run's session, durably.
	Append(recs ...store.Record) error
	// TakeReasoning returns and clears the run's pending selection when
	// admit accepts it; a selection admit refuses stays pending, and held
	// says so.
	TakeReasoning(admit func(Config) bool) (c *Config, held bool)
	// CloseReasoning returns and clears the pending selection as the run
	// ends, and refuses later changes.
	CloseReasoning() *Config
	// AgentReasoning is the agent's selection (Agent.Reasoning).
	AgentReasoning() Config
	// NoteReasoning makes c the agent's effective selection.
	NoteReasoning(c Config)
	// ReasoningLog is the agent's log.
	ReasoningLog() *slog.Logger
}

// Recorded is a session's recorded selection: its latest baseline, whether
// the Ultra mode made it, and the latest reasoning update after it ("" for
// each when none).
type Recorded struct {
	Baseline string
	Ultra    bool
	Update   string
}

// State is what a run's model calls use: the pinned baseline the requests
// carry, and the latest reasoning update after it. Bind gives it its run
// before any other method, then Start chooses the baseline (a run that
// ends before its loop began never starts). It is the driver's, used on
// the run's goroutine only.
type State struct {
	env    Env
	route  Route
	effort string // the reasoning effort the model calls use (the pinned baseline)
	update string // latest update's effort; "" none since the baseline
	ultra  bool   // the baseline is the Ultra mode's
}

// Baseline is the effort the requests carry (the pinned baseline).
func (s *State) Baseline() string { return s.effort }

// Effective returns the selection in effect.
func (s *State) Effective() Config {
	if s.update != "" {
		return Config{Effort: s.update}
	}
	return Config{Effort: s.effort, Ultra: s.ultra}
}

// WorkerEffort is the effort a worker started now runs with, pinned for
// its whole run: the one in effect, nil when none (or on a route without
// reasoning).
func (s *State) WorkerEffort() *string {
	if e := s.Effective().Effort; e != "" && s.route.Supports {
		return &e
	}
	return nil
}

// Bind makes env and route the State's run and its route.
func (s *State) Bind(env Env, route Route) { s.env, s.route = env, route }

// Start chooses the run's reasoning: the request's effort (requested),
// else the session's recorded selection (baseline and updates), else the
// agent's. It returns the record of a new baseline, nil when the session's
// stays. A route without reasoning support sends no effort and leaves the
// session's selection as it was.
func (s *State) Start(requested *string, sess Recorded) *store.Record {
	if !s.route.Supports {
		return nil
	}
	ultra := false
	switch {
	case requested != nil:
		s.effort = *requested
	case sess.Baseline != "" || sess.Ultra:
		s.effort, ultra, s.update = sess.Baseline, sess.Ultra, sess.Update
	default:
		if s.update = sess.Update; s.update == "" {
			a := s.env.AgentReasoning()
			s.effort, ultra = a.Effort, a.Ultra && s.route.Ultra
		}
	}
	var rec *store.Record
	// An effort the request names supersedes the session's updates even
	// when it equals the baseline.
	if s.effort != sess.Baseline || ultra != sess.Ultra || (s.update == "" && sess.Update != "") {
		rec = &store.Record{Body: store.ReasoningChange{Effort: s.effort, Ultra: ultra}}
		s.update = ""
	}
	s.ultra = ultra
	s.env.NoteReasoning(s.Effective())
	return rec
}

// change turns an admitted selection into what changes: a reasoning
// update message, or a new baseline record. Both nil: nothing changes.
func (s *State) change(c Config) (update *provider.Message, baseline *store.ReasoningChange) {
	cur := s.Effective()
	if c == cur {
		return nil, nil
	}
	if !c.Ultra && s.route.Updates() && c.Effort != "" && s.effort != "" {
		return &provider.Message{Role: provider.RoleDeveloper, ReasoningEffort: c.Effort,
			Text: "Reasoning effort is now " + c.Effort + "."}, nil
	}
	if c.Effort == s.effort && c.Ultra == s.ultra && s.update == "" {
		return nil, nil
	}
	return nil, &store.ReasoningChange{Effort: c.Effort, Ultra: c.Ultra}
}

// apply makes a change the run's and notes it on the agent.
func (s *State) apply(update *provider.Message, baseline *store.ReasoningChange) {
	if update != nil {
		s.update = update.ReasoningEffort
	}
	if baseline != nil {
		s.effort, s.ultra, s.update = baseline.Effort, baseline.Ultra, ""
	}
	s.env.NoteReasoning(s.Effective())
}

// Boundary admits a pending reasoning selection at a step boundary, unless
// it would change the thinking mode inside an assistant turn (Admits): a
// new baseline is recorded, an update is recorded and appended to msgs,
// the conversation of the next call.
func (s *State) Boundary(ctx context.Context, step int, msgs *[]provider.Message) error {
	c, held := s.env.TakeReasoning(func(c Config) bool { return s.Admits(c.Effort, *msgs) })
	if held {
		s.env.ReasoningLog().LogAttrs(ctx, slog.LevelDebug, "a reasoning change that turns thinking on or off waits for the assistant turn to end",
			slog.String("run_id", s.env.RunID()), slog.Int("step", step))
	}
	if c == nil {
		return nil
	}
	update, baseline := s.change(*c)
	switch {
	case update != nil:
		if err := s.env.Append(store.Record{Body: store.Message{RunID: s.env.RunID(), Message: store.NewMessageV1(*update)}}); err != nil {
			return err
		}
		*msgs = append(*msgs, *update)
	case baseline != nil:
		if err := s.env.Append(store.Record{Body: *baseline}); err != nil {
			return err
		}
	default:
		return nil
	}
	s.apply(update, baseline)
	return nil
}

// End closes the run's reasoning changes and returns the record of one no
// boundary admitted (held back by an Anthropic tool-use loop, or set after
// the last boundary), nil when none: it is not dropped but recorded before
// run_end, so that the session's next run starts with it. commit applies
// it once the record is written.
func (s *State) End() (rec *store.Record, commit func()) {
	pending := s.env.CloseReasoning()
	if pending == nil {
		return nil, nil
	}
	update, baseline := s.change(*pending)
	switch {
	case update != nil:
		rec = &store.Record{Body: store.Message{RunID: s.env.RunID(), Message: store.NewMessageV1(*update)}}
	case baseline != nil:
		rec = &store.Record{Body: *baseline}
	default:
		return nil, nil
	}
	return rec, func() { s.apply(update, baseline) }
}

// Admits reports whether a change to effort may apply to the next model
// call, whose conversation is msgs. Anthropic's extended thinking cannot
// be turned on or off in the middle of an assistant turn, and a tool-use
// loop is part of the turn: the API rejects a request whose thinking mode
// differs from the one the turn began with ("When thinking is enabled, a
// final assistant message must start with a thinking block"). On that wire
// an effort of "" sends no thinking and every other effort sends it
// (messages.setThinking), so a change between "" and an effort waits for a
// call that begins a new assistant turn. A change of effort with thinking
// on (budget_tokens or output_config.effort) is allowed mid-turn, and the
// other wires take any change at once.
func (s *State) Admits(effort string, msgs []provider.Message) bool {
	if !s.route.Anthropic || (effort == "") == (s.effort == "") {
		return true
	}
	return BeginsAssistantTurn(msgs)
}

// BeginsAssistantTurn reports whether a model call on msgs begins a new
// assistant turn: the conversation ends with user messages and no tool
// result follows the last assistant message, or those user messages
// include a run's prompt (NewTurn: the wire closes a loop a previous run
// left before it). A message delivered right after tool results (steering
// in a tool-use loop) does not begin one: the Anthropic wire sends it in
// the same user message as those results, so the loop, and the turn, go
// on.
func BeginsAssistantTurn(msgs []provider.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case provider.RoleUser:
			if msgs[i].NewTurn {
				return true
			}
		case provider.RoleTool:
			return false
		case provider.RoleAssistant:
			return i < len(msgs)-1
		}
	}
	return true
}
