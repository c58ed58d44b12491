package compact

import (
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// fakeEnv is a run for the compactor: a scripted provider (turns answers
// the model calls in order; summaries answers the summarizer's), an
// in-memory session, and the events and records the compactor wrote.
type fakeEnv struct {
	turns     []turnResult
	summaries []string
	native    provider.Compactor
	latest    *store.Compaction
	convo     []provider.Message // what Conversation returns after a checkpoint

	events  []protocol.EventType // event types emitted, in order
	records []store.Record
	aux     []string // operations of aux usage recorded
	discard int      // turns discarded
}

type turnResult struct {
	t   modelcall.Turn
	err error
}

func (e *fakeEnv) Recover(ctx context.Context, op modelcall.Operation[any]) (any, error) {
	return op.Call(ctx)
}
func (e *fakeEnv) Emit(typ protocol.EventType, _ protocol.Payload) { e.events = append(e.events, typ) }
func (e *fakeEnv) Append(recs ...store.Record) error {
	e.records = append(e.records, recs...)
	for _, r := range recs {
		if cp, ok := r.Body.(store.Compaction); ok {
			e.latest = &cp
		}
	}
	return nil
}
func (e *fakeEnv) ModelTurn(context.Context, int, provider.Request) (modelcall.Turn, error) {
	r := e.turns[0]
	e.turns = e.turns[1:]
	return r.t, r.err
}
func (e *fakeEnv) Provider() provider.Provider                { return summarizer{e} }
func (e *fakeEnv) NativeEndpoint() (provider.Compactor, bool) { return e.native, e.native != nil }
func (e *fakeEnv) Conversation() ([]provider.Message, error)  { return e.convo, nil }
func (e *fakeEnv) LatestCompaction() (store.Compaction, bool) {
	if e.latest == nil {
		return store.Compaction{}, false
	}
	return *e.latest, true
}
func (e *fakeEnv) ConversationOrdinals() []int                { return nil }
func (e *fakeEnv) MessageCount() int                          { return 0 }
func (e *fakeEnv) ContextUsage() (provider.Usage, int, bool)  { return provider.Usage{}, 0, false }
func (e *fakeEnv) NativeBusy() bool                           { return false }
func (e *fakeEnv) Redact(s string) string                     { return s }
func (e *fakeEnv) RedactError(s string) string                { return s }
func (e *fakeEnv) FailureMessage(tf *modelcall.Failed) string { return tf.Msg }
func (e *fakeEnv) DiscardTurn(int, modelcall.Turn) error      { e.discard++; return nil }
func (e *fakeEnv) RecordAuxUsage(_ int, op string, _ provider.Usage, _ bool) error {
	e.aux = append(e.aux, op)
	return nil
}

// summarizer streams the env's next summary as one text event.
type summarizer struct{ e *fakeEnv }

func (s summarizer) Stream(context.Context, provider.Request) (provider.Stream, error) {
	text := s.e.summaries[0]
	s.e.summaries = s.e.summaries[1:]
	return &textStream{evs: []provider.StreamEvent{{Kind: provider.EventText, Text: text}}}, nil
}

type textStream struct {
	evs []provider.StreamEvent
	cur provider.StreamEvent
}

func (s *textStream) Next() bool {
	if len(s.evs) == 0 {
		return false
	}
	s.cur, s.evs = s.evs[0], s.evs[1:]
	return true
}
func (s *textStream) Event() provider.StreamEvent { return s.cur }
func (s *textStream) Err() error                  { return nil }
func (s *textStream) Close() error                { return nil }
