// Package runtime is the Go embedding API of octet-host: the one agent
// runtime that both the octet-host binary and Go applications use
// (CONTRACT §1, §15). It knows nothing of NDJSON; internal/host maps its
// events to protocol frames.
//
// An Agent is built once from Options and is safe for concurrent use; each
// run is driven by its own goroutine and observed through a RunControl.
//
// This package is the façade: it owns the public types and hands the work
// to the engine (runtime/internal/engine), converting at its edge.
//
// # Creating an Agent
//
// New validates Options, fills their defaults and returns an Agent. The
// zero Options is a working agent: ~/.octet of the user's home for
// settings, models and credentials, ~/.octet/sessions for sessions, the
// real clock, an HTTP client with no overall timeout (streams are bounded
// by the idle timeout, 60 s; a redirect is never followed), no logging.
//
//	agent, err := runtime.New(runtime.Options{
//		Home:   home,                   // where ~/.octet lives
//		Logger: slog.New(handler),      // runtime.LevelTrace logs every state transition
//	})
//	if err != nil {
//		return err // an unusable option, e.g. a relative Home or SessionDir
//	}
//	agent.SetMaxRetries(2)   // per model call; default 4
//
// The tool policy is layered as in the binary: Options.PolicyLayers are
// the operator's layers (config, environment, CLI), lowest precedence
// first (PolicyFromEnv builds the environment layer from the OCTET_*
// variables), and each run's own layer (AllowFileMutation) goes on top.
// Options.ProviderFactory replaces the built-in wires with a Provider of
// the embedder's own (package runtime/provider is the seam).
//
// # Running
//
// Agent.Run validates a RunRequest and starts the run. A refusal is a
// *RunError whose Code is one of protocol.RunCodes (session_locked,
// model_not_found, invalid_field, …): nothing ran, no event was emitted.
//
//	rc, err := agent.Run(ctx, runtime.RunRequest{
//		RunID:     "run-1",
//		Workspace: "/abs/path/to/project", // every file access is confined to it
//		Model:     "gpt-5.1",              // a catalog id, or the model of Route
//		Prompt:    "What do the notes say?",
//		// Route: &runtime.InlineRoute{Provider: "local", BaseURL: "http://127.0.0.1:8080/v1"},
//	})
//	var re *runtime.RunError
//	if errors.As(err, &re) {
//		log.Printf("refused: %s: %s", re.Code, re.Message)
//	}
//
// # Reading events
//
// RunControl.Events delivers every event of the run in order, ending with
// the final_result event, and is closed after it. Events are never
// dropped: the run waits for its reader, so read the channel to the end,
// or call Abandon (or AbandonWith) to stop reading. Event.Data is a pointer
// to the payload type of package protocol for Event.Type, except for the
// one event of the Go API alone, TypeRecoveredOutput, whose data is a
// *RecoveredOutput (an interrupted attempt's partial text, kept apart from
// the output and the answer; the NDJSON host never writes it).
//
//	for ev := range rc.Events() {
//		switch d := ev.Data.(type) {
//		case *protocol.ModelDelta:
//			fmt.Print(d.Text) // channel "text" or "reasoning"
//		case *protocol.ToolStart:
//			log.Printf("tool %s %s", d.Tool, d.Arguments)
//		case *runtime.RecoveredOutput:
//			log.Printf("discarded %s: %q", d.Channel, d.Text)
//		}
//	}
//	res := rc.Wait() // protocol.FinalResult: Status, Output, Error, Steps, …
//
// Wait returns once the run has recorded its end and closed its session.
// Status is protocol.StatusCompleted, StatusBlocked (e.g. max_steps_reached)
// or StatusError, with Error.Code saying why. Agent.SetObserver receives
// the same events of every run (and of delegated worker runs) before their
// readers do.
//
// # Steering
//
// While a run is going, RunControl.Steer queues a user message for the
// next safe boundary (after the running tool call, or after the model's
// turn), and RunControl.FollowUp one for when the run would otherwise
// complete; each delivery is an event (steering_delivered,
// follow_up_delivered). Both return ErrRunEnded once the run is ending and
// ErrMessageInvalid for an empty, oversized or non-UTF-8 text; after Wait,
// Undelivered lists what the run dropped because it ended first. On a
// route qualified for native steering, Steer goes into the live response.
//
//	if err := rc.Steer("use the tests under ./e2e instead"); errors.Is(err, runtime.ErrRunEnded) {
//		// too late: start another run on the same session
//	}
//
// RunControl.SetReasoning changes the effort of a running run at its next
// step boundary, on a route whose metadata qualifies it
// (ErrReasoningNotQualified elsewhere); Agent.SetReasoning sets the
// default of later runs.
//
// # Canceling
//
// Call RunControl.Cancel, or cancel the context given to Agent.Run (it
// bounds the whole run): the run stops its model call and its tools (shell
// process groups included) and ends with status error, code canceled,
// still with a settled event and one final_result. Agent.TerminateShells and Agent.WaitRuns are the shutdown
// of a whole agent.
//
//	rc.Cancel()
//	for range rc.Events() { // drain: the run still reports its end
//	}
//	res := rc.Wait() // res.Error.Code == protocol.CodeCanceled
//
// # Resuming a session
//
// Every run belongs to a session, an append-only file in the session
// directory (RunRequest.SessionDir, else Options.SessionDir). A run that
// names an existing SessionID continues its history; one that names none
// starts a new session with a generated ID (NewSessionID makes one ahead of
// time). A session is locked while a run uses it: a second run on it is
// refused with session_locked.
//
//	rc, err := agent.Run(ctx, runtime.RunRequest{
//		RunID: "run-2", Workspace: ws, Model: "gpt-5.1",
//		SessionID: "notes", // the history of run-1 comes first
//		Prompt:    "And what is due on Monday?",
//	})
//
// Agent.OpenSession opens a session for reading and moving it: Messages,
// Entries and Head, Checkout (move the head to an earlier entry), Fork (a
// new session from the head), Statistics (the durable usage ledger). The
// Session holds the lock until Close, so close it before running on it.
//
//	s, err := agent.OpenSession(dir, "notes")
//	if err != nil {
//		return err // ErrSessionLocked, ErrSessionCorrupt, …
//	}
//	st := s.Statistics() // tokens and cost of every run, UsageUncertain
//	s.Close()
//
// # The terminal gate
//
// A terminal gate reviews each candidate final answer (a step with no
// tool calls and no steering pending) before it ends the run: GateAccept
// lets it end the run, GateReject sends the model back with a reason,
// GateStop ends the run blocked. A gate that fails ends the run with
// terminal_gate_failed (it fails closed). ModelGate asks a model;
// TerminalGateFunc adapts a function.
//
//	agent.SetTerminalGate(runtime.TerminalGateFunc(func(ctx context.Context, in runtime.GateInput) (runtime.GateDecision, error) {
//		if !strings.Contains(in.CandidateText, "tests pass") {
//			return runtime.GateDecision{Verdict: runtime.GateReject, Reason: "run the tests and report them"}, nil
//		}
//		return runtime.GateDecision{Verdict: runtime.GateAccept}, nil
//	}))
//
// # Errors
//
// Errors come in three places. Agent.Run returns a *RunError for a
// refused request, and New an error for unusable Options. A run that
// started reports its failure in its result: Wait's FinalResult has Status
// StatusError or StatusBlocked and an Error whose Code is one of
// protocol.RunCodes (provider_error, auth_failed, canceled, …); the
// final_result event carries the same. The controls return sentinel
// errors, matched with errors.Is: ErrRunEnded, ErrMessageInvalid and the
// reasoning errors of RunControl; ErrSessionLocked, ErrSessionCorrupt,
// ErrNoSessionEntry and ErrSessionExists of sessions; ErrObserverRequired
// for the Ultra mode; ErrGateOutsideRun for a ModelGate called outside a
// run.
//
// docs/embedding.md of the repository lists every call; Example (in
// example_test.go) is a complete run against the fake provider of package
// runtime/fakeprovider.
package runtime
