package host

import (
	"context"
	"errors"

	"octet.dev/host/runtime"
	"octet.dev/host/wire"
)

func isOutputTooLarge(err error) bool { return errors.Is(err, wire.ErrOutputTooLarge) }

// features reports what this build does end to end, each backed by tests
// (CONTRACT §6). A flag turns true only together with its tests.
func features() wire.Features {
	return wire.Features{
		ProcessGroupAbort: true,
		InBandAbort:       false,
	}
}

func (h *Host) hello() wire.Hello {
	return wire.Hello{
		SDKVersion:        h.cfg.Version,
		ProtocolVersion:   wire.ProtocolVersion,
		MaxFrameBytes:     wire.MaxFrameBytes,
		MaxConcurrentRuns: 1,
		Commands:          wire.Commands,
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
		issues = append(issues, runtime.DiscoveryIssue{Provider: "config", Code: "config_invalid", Message: err.Error()})
	}
	data := wire.ModelsData{Models: make([]wire.ModelInfo, 0, len(models))}
	for _, m := range models {
		data.Models = append(data.Models, modelInfo(m))
	}
	for _, is := range issues {
		data.Discovery = append(data.Discovery, wire.DiscoveryIssue{Provider: is.Provider, Code: wire.Code(is.Code), Message: wire.Bound(is.Message)})
	}
	return e.finish(wire.TypeModels, data)
}

func modelInfo(m runtime.Model) wire.ModelInfo {
	mi := wire.ModelInfo{
		ID: m.ID, Provider: m.Provider, Name: m.Name, ProviderMode: m.ProviderMode,
		ContextWindowTokens: m.ContextWindowTokens, MaxOutputTokens: m.MaxOutputTokens,
		InputModalities: m.InputModalities, Vision: m.Vision, Audio: m.Audio,
		SupportsReasoning: m.SupportsReasoning,
	}
	if m.Cost != nil {
		mi.Cost = &wire.Cost{Input: m.Cost.Input, Output: m.Cost.Output, CacheRead: m.Cost.CacheRead, CacheWrite: m.Cost.CacheWrite, Currency: m.Cost.Currency}
	}
	return mi
}

// run answers a well-formed run. Runs are not served by this build yet:
// the request ends with final_result status error, code unsupported, and
// hello advertises no run feature.
func (h *Host) run(_ context.Context, req *wire.Request) error {
	sid := ""
	if req.Run.SessionID != nil {
		sid = *req.Run.SessionID
	}
	e := h.emitter(req.RequestID, req.Run.RunID, sid)
	return e.finish(wire.TypeFinalResult, wire.FinalResult{
		Status:       wire.StatusError,
		Error:        &wire.ErrorData{Code: wire.CodeUnsupported, Message: "this build of octet-host does not serve runs yet"},
		FilesChanged: []string{},
	})
}
