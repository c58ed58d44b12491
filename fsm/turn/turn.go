package turn

import (
	"strconv"

	"octet.dev/host/fsm"
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
)

// Phase is where the loop stands in its current step.
type Phase uint8

// Phases.
const (
	// Idle: between steps (before the first). The engine performs the
	// effects it was given, then reports Begin.
	Idle Phase = iota
	// Calling: the step's boundary work and its model call; Answer or
	// Fail comes next.
	Calling
	// Awaiting: the step answered without tool calls while a native steer
	// is outstanding; Awaited comes next.
	Awaiting
	// Gating: the step answered without tool calls: the would-stop point
	// (the terminal gate, steering, follow-ups) decides; Gate comes next.
	Gating
	// Tooling: a tool call of the step runs; ToolDone comes next.
	Tooling
	// Steering: a steering boundary after a tool call; Steered comes next.
	Steering
	// Settled: the run's outcome is decided; nothing follows.
	Settled
)

var phaseNames = [...]string{"idle", "calling", "awaiting", "gating", "tooling", "steering", "settled"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "phase(" + strconv.Itoa(int(p)) + ")"
}

// State is the loop's position. The engine keeps it and passes it to
// Next; its zero value is not a run (New makes one).
type State struct {
	MaxSteps   int   // the run's step limit (max_steps)
	Step       int   // the step begun last (0: none yet)
	Phase      Phase // where the step stands
	Calls      int   // the step's tool calls
	Ran        int   // of them, those run (or skipped once Skipped)
	Skipped    bool  // steering cut the step's remaining calls
	ModelCalls int   // CallModel effects given so far
	Outcome    Outcome
}

// New is the state of a run with the step limit maxSteps, before its
// first step.
func New(maxSteps int) State { return State{MaxSteps: maxSteps} }

// LastStep reports whether the current step is the last one max_steps
// allows: steering then waits (the run's end drops it), and a native
// steer's successor is not allowed.
func (s State) LastStep() bool { return s.Step >= s.MaxSteps }

// Kind is the kind of a fact.
type Kind uint8

// Kinds of facts, with the phase each is reported in.
const (
	// Begin (Idle): the loop is at the top of a step. Native: the step
	// reads a successor a steer created, or continues a steered response
	// (it is never re-issued, so no boundary work comes first).
	Begin Kind = iota
	// Answer (Calling): the step's model call answered and the answer is
	// committed. Calls: the tool calls it asks for; Length: it was cut by
	// the output cap; Outstanding: a native steer waits for its outcome.
	Answer
	// Awaited (Awaiting): the outstanding steer's outcome is read.
	// Successor: the server created a successor response, which the next
	// step reads.
	Awaited
	// Gate (Gating): the would-stop point answered. End: the run ends
	// with Status, Code and Msg (the gate's end, completion included);
	// else the run goes on.
	Gate
	// ToolDone (Tooling): a tool call finished and its result is
	// committed. Outstanding as for Answer, when it was the last call.
	ToolDone
	// Steered (Steering): the after-tool steering boundary fired. Skip:
	// it cut the remaining calls. Outstanding as for Answer.
	Steered
	// Fail (any phase but Settled): the run cannot go on: Code and Msg
	// say why (an effect failed, the model call failed for good, a native
	// steer's outcome became unknown).
	Fail
)

var kindNames = [...]string{"begin", "answer", "awaited", "gate", "tool_done", "steered", "fail"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Fact is what the engine reports. Canceled, in any fact, says the engine
// observed the run's cancellation at that point: the run settles as
// canceled, whatever the rest of the fact says.
type Fact struct {
	Kind        Kind
	Canceled    bool
	Native      bool          // Begin
	Calls       int           // Answer
	Length      bool          // Answer
	Outstanding bool          // Answer, ToolDone, Steered
	Successor   bool          // Awaited
	Skip        bool          // Steered
	End         bool          // Gate
	Status      string        // Gate with End
	Code        protocol.Code // Gate with End, Fail
	Msg         string        // Gate with End, Fail
}

// EffectKind is the kind of an effect.
type EffectKind uint8

// Kinds of effects. The engine performs a batch in order; a failure stops
// it and is reported as Fail. The effect that yields the next fact
// (CallModel, AwaitNative without calls, AskGate, RunTool, SteerAfterTool)
// is the last of its batch.
const (
	// AdmitReasoning: admit a pending reasoning change at the boundary.
	AdmitReasoning EffectKind = iota
	// Compact: the threshold check (it compacts when fsm/compaction says
	// the context is over its threshold).
	Compact
	// CallModel: the step's model call, under recovery; its answer is
	// committed, then reported as Answer.
	CallModel
	// AwaitNative: read the outstanding native steer's outcome.
	// WithCalls: the steered response stopped for the step's tool outputs
	// (the next request carries them); else the outcome is reported as
	// Awaited.
	AwaitNative
	// AskGate: the would-stop point (steering, the terminal gate,
	// follow-ups); LastStep says nothing may be delivered. Reported as
	// Gate.
	AskGate
	// RunTool: run the step's tool call Index; reported as ToolDone.
	RunTool
	// SteerAfterTool: fire the steering boundary after a tool call;
	// reported as Steered.
	SteerAfterTool
	// SkipTools: answer the calls from Index on as skipped by steering.
	SkipTools
	// SteerAfterTurn: fire the steering boundary after the step's turn.
	SteerAfterTurn
	// Deliver: deliver what the step's steering boundary released, to
	// the model step Step.
	Deliver
	// Settle: the run ends with Outcome.
	Settle
)

var effectNames = [...]string{"admit_reasoning", "compact", "call_model", "await_native", "ask_gate", "run_tool",
	"steer_after_tool", "skip_tools", "steer_after_turn", "deliver", "settle"}

func (k EffectKind) String() string {
	if int(k) < len(effectNames) {
		return effectNames[k]
	}
	return "effect(" + strconv.Itoa(int(k)) + ")"
}

// Effect is one thing for the engine to do.
type Effect struct {
	Kind      EffectKind
	Step      int     // AdmitReasoning, Compact, CallModel, AskGate: the step; Deliver: the step that sees the messages
	Index     int     // RunTool: the call; SkipTools: the first call skipped
	LastStep  bool    // AskGate
	WithCalls bool    // AwaitNative
	Outcome   Outcome // Settle
}

// Outcome is how a run ends: a status of fsm/run, and for any status but
// completed a code of protocol and its message. The message of a Fail is
// the engine's own (it redacts and bounds it); a canceled, max_steps or
// output-cap end is worded here.
type Outcome struct {
	Status string
	Code   protocol.Code
	Msg    string
	Gate   bool // the would-stop point's end, which the engine returns as it gave it
}

// Messages of the outcomes worded here.
const (
	canceledMsg   = "the run was canceled"
	incompleteMsg = "the model's output reached max_output_tokens before it finished"
)

// accepts is the phase each fact kind is reported in (Fail: any but
// Settled).
var accepts = [...]Phase{Begin: Idle, Answer: Calling, Awaited: Awaiting, Gate: Gating, ToolDone: Tooling, Steered: Steering}

// Next applies fact f to s and returns the state after it and the effects
// to perform, in order. A fact not reported in s's phase (or any fact once
// settled) is the engine's bug: Next returns a *fsm.TransitionError and s
// unchanged.
func Next(s State, f Fact) (State, []Effect, error) {
	if s.Phase == Settled || f.Kind > Fail || f.Kind != Fail && accepts[f.Kind] != s.Phase {
		return s, nil, &fsm.TransitionError{Machine: "turn", Phase: s.Phase.String(), Trigger: f.Kind.String()}
	}
	if f.Canceled {
		return settle(s, Outcome{Status: fsmrun.StatusError, Code: protocol.CodeCanceled, Msg: canceledMsg})
	}
	switch f.Kind {
	case Begin:
		step := s.Step + 1
		if step > s.MaxSteps {
			return settle(s, Outcome{Status: fsmrun.StatusBlocked, Code: protocol.CodeMaxStepsReached,
				Msg: "the run reached max_steps (" + strconv.Itoa(s.MaxSteps) + ") before the model finished"})
		}
		s.Step, s.Calls, s.Ran, s.Skipped, s.Phase = step, 0, 0, false, Calling
		s.ModelCalls++
		call := Effect{Kind: CallModel, Step: step}
		if f.Native {
			return s, []Effect{call}, nil
		}
		return s, []Effect{{Kind: AdmitReasoning, Step: step}, {Kind: Compact, Step: step}, call}, nil
	case Answer:
		switch {
		case f.Length:
			// A tool call cut by the output cap is never executed, and a
			// cut answer is not presented as complete.
			return settle(s, Outcome{Status: fsmrun.StatusError, Code: protocol.CodeOutputIncomplete, Msg: incompleteMsg})
		case f.Calls > 0:
			s.Calls, s.Phase = f.Calls, Tooling
			return s, []Effect{{Kind: RunTool, Index: 0}}, nil
		case f.Outstanding:
			s.Phase = Awaiting
			return s, []Effect{{Kind: AwaitNative}}, nil
		}
		return gate(s)
	case Awaited:
		if f.Successor {
			s.Phase = Idle // the next step reads it
			return s, nil, nil
		}
		return gate(s)
	case Gate:
		if f.End {
			return settle(s, Outcome{Status: f.Status, Code: f.Code, Msg: f.Msg, Gate: true})
		}
		s.Phase = Idle
		return s, nil, nil
	case ToolDone:
		s.Ran++
		switch {
		case s.Ran == s.Calls:
			return endTools(s, f.Outstanding, nil)
		case s.LastStep():
			// No steering boundary at the last step: the queue waits.
			return s, []Effect{{Kind: RunTool, Index: s.Ran}}, nil
		}
		s.Phase = Steering
		return s, []Effect{{Kind: SteerAfterTool}}, nil
	case Steered:
		if f.Skip {
			s.Skipped = true
			skip := Effect{Kind: SkipTools, Index: s.Ran}
			s.Ran = s.Calls
			return endTools(s, f.Outstanding, []Effect{skip})
		}
		s.Phase = Tooling
		return s, []Effect{{Kind: RunTool, Index: s.Ran}}, nil
	}
	// Fail.
	if f.Code == protocol.CodeUnsettledNativeSteering {
		return settle(s, Outcome{Status: fsmrun.StatusBlocked, Code: f.Code, Msg: f.Msg})
	}
	return settle(s, Outcome{Status: fsmrun.StatusError, Code: f.Code, Msg: f.Msg})
}

// gate asks the would-stop point about an answer without tool calls.
func gate(s State) (State, []Effect, error) {
	s.Phase = Gating
	return s, []Effect{{Kind: AskGate, Step: s.Step, LastStep: s.LastStep()}}, nil
}

// endTools ends a step's tool calls: the outstanding steer's outcome,
// then (while another step may follow, and unless a boundary already
// fired) the after-turn boundary, then the delivery to the next step.
func endTools(s State, outstanding bool, effs []Effect) (State, []Effect, error) {
	s.Phase = Idle
	if outstanding {
		effs = append(effs, Effect{Kind: AwaitNative, WithCalls: true})
	}
	if !s.Skipped && !s.LastStep() {
		effs = append(effs, Effect{Kind: SteerAfterTurn})
	}
	return s, append(effs, Effect{Kind: Deliver, Step: s.Step + 1}), nil
}

func settle(s State, o Outcome) (State, []Effect, error) {
	s.Phase, s.Outcome = Settled, o
	return s, []Effect{{Kind: Settle, Outcome: o}}, nil
}
