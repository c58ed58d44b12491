package host

import (
	"context"
	"errors"
	"log/slog"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/wire"
)

func isOutputTooLarge(err error) bool { return errors.Is(err, wire.ErrOutputTooLarge) }

// features reports what this build does end to end, each backed by tests
// (CONTRACT §6). A flag turns true only together with its tests.
func features() protocol.Features {
	return protocol.Features{
		Streaming:          true, // run_e2e_test.go: model_delta through the binary
		PersistentSessions: true, // TestRunResumeAcrossHostProcesses, TestRunTornTailIsIgnoredOnResume
		SeedHistory:        true, // TestRunSeedHistory
		PromptDisplayText:  true, // stored as session presentation metadata (TestRunResumeAcrossHostProcesses)
		InlineModels:       true, // every e2e run uses an inline route
		TypedMediaInput:    true, // media_e2e_test.go: images and audio, in order, across resume; every refusal
		TypedImageInput:    true, // TestRunMediaOtherModes: all three wire modes
		TypedAudioInput:    true, // TestRunMediaInOrderAndAcrossResume: WAV on an OpenAI Chat audio route
		Tools:              true, // TestRunScriptedConversation, TestRunToolPathsStayInWorkspace
		Skills:             true, // TestResourcesThroughTheBinary, TestRunSkillsAndContext: offered, read through skill://, read-only
		Extensions:         true, // TestExtensionsThroughTheBinary, TestRunExtensionNotifications: findings after started; grants no process start
		ProcessGroupAbort:  true,
		InBandAbort:        false,
		MaxSteps:           true, // TestRunMaxSteps: blocked with max_steps_reached, no step past the limit
		Reasoning:          true, // TestRunReasoningEffort: the effort reaches each wire's request body
	}
}

func (h *Host) hello() *protocol.Hello {
	return &protocol.Hello{
		SDKVersion:        h.cfg.Version,
		ProtocolVersion:   protocol.Version,
		MaxFrameBytes:     protocol.MaxFrameBytes,
		MaxConcurrentRuns: 1,
		Commands:          protocol.Commands(),
		Features:          features(),
	}
}

func (h *Host) models(ctx context.Context, req *wire.Request) error {
	models, issues, err := h.cfg.Agent.Models(ctx, req.Models.Offline)
	e := h.emitter(req.RequestID, "", "")
	if err != nil {
		// The catalog itself failed (a malformed ~/.octet/models.json):
		// the request is well-formed, so answer with an empty inventory
		// and the reason, rather than a protocol_error.
		issues = append(issues, protocol.DiscoveryIssue{Provider: "config", Code: protocol.CodeConfigInvalid, Message: err.Error()})
	}
	if models == nil {
		models = []protocol.ModelInfo{} // "models": [], never null
	}
	data := protocol.Models{Models: models}
	for _, is := range issues {
		data.Discovery = append(data.Discovery, protocol.DiscoveryIssue{Provider: is.Provider, Code: is.Code, Message: wire.Bound(is.Message)})
	}
	return e.finish(protocol.TypeModels, &data)
}

// run serves a well-formed run: a request that fails validation gets a
// single final_result error and no accepted (CONTRACT §8); an accepted run
// streams its events through the emitter until its final_result.
func (h *Host) run(ctx context.Context, req *wire.Request) error {
	r := req.Run
	run := runRequest(r)
	e := h.emitter(req.RequestID, run.RunID, run.SessionID)
	rc, err := h.cfg.Agent.Run(ctx, run)
	if err != nil {
		var re *runtime.RunError
		if !errors.As(err, &re) {
			re = &runtime.RunError{Code: protocol.CodeInternalError, Message: err.Error()}
		}
		h.cfg.Log.LogAttrs(ctx, slog.LevelInfo, "run refused", slog.String("run_id", r.RunID), slog.String("code", string(re.Code)))
		return e.finish(protocol.TypeFinalResult, &protocol.FinalResult{
			Status:       protocol.StatusError,
			Error:        &protocol.ErrorData{Code: re.Code, Message: wire.Bound(re.Message)},
			FilesChanged: []string{},
		})
	}
	var werr error
	events := rc.Events()
	for ev := range events {
		if werr != nil {
			continue // abandoned: let the run wind down
		}
		switch ev.Type {
		case runtime.TypeRecoveredOutput:
			// A Go API event with no NDJSON contract (the source's
			// AgentEvent::RecoveredOutput); provider_retry tells NDJSON
			// clients to discard the attempt's deltas.
		case protocol.TypeFinalResult:
			werr = e.finish(protocol.TypeFinalResult, ev.Data)
		default:
			// Events that arrive faster than stdout takes them are written
			// in batches; the batch goes out as soon as no event is
			// waiting, so an event is never kept from the client while the
			// run is busy or idle.
			werr = e.hold(ev.Type, ev.Data)
		}
		if werr == nil && len(events) == 0 {
			werr = e.flush()
		}
		if werr != nil {
			// The output failed, or an event was replaced by a terminal
			// output_too_large: nobody can see this run any more, and its
			// session says so (even when this was its final_result).
			if isOutputTooLarge(werr) {
				rc.AbandonWith(protocol.CodeOutputTooLarge, "the run's "+string(ev.Type)+" event exceeded the 1048576-byte frame bound: "+
					"the client got protocol_error output_too_large and none of the run's later events")
			} else {
				rc.AbandonWith(protocol.CodeOutputFailed, "writing the run's "+string(ev.Type)+" event to stdout failed: "+werr.Error())
			}
		}
	}
	res := rc.Wait() // delivered (unless abandoned); the session is closed and its lock released
	h.cfg.Log.LogAttrs(ctx, slog.LevelInfo, "run ended", slog.String("run_id", r.RunID), slog.String("status", res.Status), slog.Int("steps", res.Steps))
	return werr
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// tokenCeiling is far above any token limit the runtime accepts.
const tokenCeiling = 1 << 40

// optInt maps an optional protocol integer to the runtime's: absent stays
// nil (the runtime's default); a value sent is passed on, so that an
// invalid one is refused by validation rather than defaulted. It is
// clamped into [lo, hi] to fit an int; lo and hi are values the runtime
// refuses, so clamping never makes a value valid.
func optInt(p *int64, lo, hi int64) *int {
	if p == nil {
		return nil
	}
	return new(int(min(max(*p, lo), hi)))
}

// runRequest maps the protocol's run to the runtime's.
func runRequest(r *protocol.RunRequest) runtime.RunRequest {
	rr := runtime.RunRequest{
		RunID: r.RunID, Workspace: r.Workspace, Model: r.Model, Prompt: r.Prompt,
		SessionID: deref(r.SessionID), SessionDir: deref(r.SessionDir), SystemPrompt: deref(r.SystemPrompt),
		AllowFileMutation: deref(r.AllowFileMutation), DisplayText: deref(r.DisplayText), ConfirmDelivery: true,
		MaxSteps: optInt(r.MaxSteps, 0, runtime.MaxMaxSteps+1),
	}
	if r.Tools != nil {
		rr.Tools = append([]string{}, (*r.Tools)...)
	}
	if r.Reasoning != nil {
		// Present but empty is refused by validation, not taken as "none".
		rr.ReasoningEffort = new(r.Reasoning.Effort)
	}
	rr.Media = append(rr.Media, r.Media...)
	rr.History = append(rr.History, r.History...)
	// Any route field makes the run an inline route, so that a field given
	// without base_url is refused (route_invalid) instead of ignored.
	if r.BaseURL != nil || r.Provider != nil || r.ProviderMode != nil || r.APIKey != nil || r.CustomHeaders != nil ||
		r.ContextWindowTokens != nil || r.MaxOutputTokens != nil || r.InputModalities != nil || r.Vision != nil || r.SupportsReasoning != nil {
		rt := &runtime.InlineRoute{
			Provider: deref(r.Provider), BaseURL: deref(r.BaseURL), APIKey: deref(r.APIKey),
			Headers: r.CustomHeaders, Mode: deref(r.ProviderMode),
			ContextWindowTokens: optInt(r.ContextWindowTokens, 0, tokenCeiling), MaxOutputTokens: optInt(r.MaxOutputTokens, 0, tokenCeiling),
			Vision: r.Vision, SupportsReasoning: r.SupportsReasoning,
		}
		if r.InputModalities != nil {
			rt.InputModalities = append([]string{}, (*r.InputModalities)...)
		}
		rr.Route = rt
	}
	return rr
}
