package gate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// End is how a run ends at the would-stop point. Err's message is whole:
// the engine cuts it to an error message's bound.
type End struct {
	Status, Output string
	Err            *protocol.ErrorData
}

// origin marks the session message that carries a rejection's reason to
// the model.
const origin = protocol.OperationTerminalGate

// WouldStop handles a step that answered without tool calls: the point
// where the run would end. In order: pending steering is delivered and the
// run goes on (no gate); else the gate reviews the candidate; once it
// accepts (or without a gate: s nil), queued follow-ups are delivered and
// the run goes on; else the run completes with the candidate. At the last
// step nothing is delivered. It returns the run's end, or nil and the
// output the loop keeps while it goes on ("" once the candidate was
// rejected: it must never become the output).
func (s *State) WouldStop(ctx context.Context, env Env, step int, msgs *[]provider.Message, candidate string, lastStep bool) (*End, string) {
	writeFailed := func(err error, output string) (*End, string) {
		return &End{fsmrun.StatusError, output, &protocol.ErrorData{Code: protocol.CodeSessionWriteFailed,
			Message: env.Redact("the session could not be written: " + err.Error())}}, ""
	}
	// accepted ends the run with the candidate or delivers what is queued.
	accepted := func() (*End, string) {
		if lastStep {
			return &End{fsmrun.StatusCompleted, candidate, nil}, ""
		}
		complete, err := env.AfterTurn(step, msgs, true)
		if complete {
			return &End{fsmrun.StatusCompleted, candidate, nil}, ""
		}
		if err != nil {
			return writeFailed(err, candidate)
		}
		return nil, candidate
	}
	pending := false
	if s != nil && !lastStep {
		pending = env.SteeringPending()
	}
	if !Reviews(s != nil, lastStep, pending) {
		return accepted()
	}
	dec, end := s.review(ctx, env, step, candidate)
	if end != nil {
		return end, ""
	}
	var outcome Outcome
	outcome, s.rejections = Decide(dec.Verdict, s.rejections)
	switch outcome {
	case Accepted:
		return accepted()
	case Stopped:
		return &End{fsmrun.StatusBlocked, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateStopped,
			Message: "the terminal gate stopped the run: " + dec.Reason}}, ""
	}
	env.Emit(protocol.TypeCandidateRejected, &protocol.CandidateRejected{Step: step, Attempt: s.rejections, MaxAttempts: MaxRejections, Reason: dec.Reason})
	if outcome == Exhausted {
		return &End{fsmrun.StatusBlocked, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateExhausted,
			Message: "the terminal gate rejected " + strconv.Itoa(MaxRejections) + " candidate answers in a row; the last reason: " + dec.Reason}}, ""
	}
	if lastStep {
		// No step is left to act on the reason: the loop ends the run
		// with max_steps_reached, without the rejected candidate.
		return nil, ""
	}
	// The reason is the model's next message, then any steering that came
	// meanwhile (the turn goes on: follow-ups wait for a candidate the gate
	// accepts).
	reason := provider.Message{Role: provider.RoleUser, Text: feedback(dec.Reason, s.rejections)}
	if err := env.Append(store.Record{Body: store.Message{RunID: env.RunID(), Origin: origin, Message: store.NewMessageV1(reason)}}); err != nil {
		return writeFailed(err, "")
	}
	*msgs = append(*msgs, reason)
	if _, err := env.AfterTurn(step, msgs, false); err != nil {
		return writeFailed(err, "")
	}
	return nil, ""
}

// feedback is the user message that carries a rejection's reason.
func feedback(reason string, attempt int) string {
	return "The host's terminal gate did not accept your last answer as final (rejection " + strconv.Itoa(attempt) + " of at most " +
		strconv.Itoa(MaxRejections) + "). Its reason:\n" + reason + "\nContinue the task, then answer again."
}

// reviewing is what a review's context carries to a model gate: the state
// and the run it serves.
type reviewing struct {
	s   *State
	env Env
}

// reviewKey is the context key of reviewing.
type reviewKey struct{}

// review asks the run's gate about the candidate and checks its decision.
// A failure is the run's end: canceled, session_write_failed (a recovery
// record could not be written), or terminal_gate_failed.
func (s *State) review(ctx context.Context, env Env, step int, candidate string) (Decision, *End) {
	in := Input{RunID: env.RunID(), Step: step, CandidateText: candidate, Attempt: s.rejections + 1, Prompt: env.Prompt()}
	dec, err := s.reviewer.Review(context.WithValue(ctx, reviewKey{}, reviewing{s, env}), in)
	failed := func(msg string) (Decision, *End) {
		return Decision{}, &End{fsmrun.StatusError, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateFailed,
			Message: s.sanitize(env, "the terminal gate failed: "+msg)}}
	}
	if err != nil {
		var tf *modelcall.Failed
		switch {
		case ctx.Err() != nil:
			return Decision{}, &End{fsmrun.StatusError, "", &protocol.ErrorData{Code: protocol.CodeCanceled, Message: "the run was canceled"}}
		case errors.As(err, &tf) && tf.Code == protocol.CodeSessionWriteFailed:
			return Decision{}, &End{fsmrun.StatusError, "", &protocol.ErrorData{Code: tf.Code, Message: s.sanitize(env, tf.Msg)}}
		case errors.As(err, &tf):
			return failed("its model call failed (" + string(tf.Code) + "): " + env.FailureMessage(tf))
		}
		return failed(err.Error())
	}
	dec.Reason = s.sanitize(env, dec.Reason)
	if why := Check(dec); why != "" {
		return failed(why)
	}
	return dec, nil
}

// sanitize makes a gate's text fit for events, the session and the model:
// valid UTF-8, every credential the run knows redacted (its route's and
// its gate models'), control characters other than newline and tab
// replaced by spaces, trimmed, and cut to MaxReasonBytes.
func (s *State) sanitize(env Env, text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = env.Scrub(text)
	for _, r := range s.routes {
		text = r.Redact(text)
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return ' '
		}
		return r
	}, text)
	return textutil.Fit(strings.TrimSpace(text), MaxReasonBytes)
}
