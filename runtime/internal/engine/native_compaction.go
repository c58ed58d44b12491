package engine

import (
	"bytes"
	"context"
	"fmt"

	"octet.dev/host/fsm/compaction"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Native compaction: on an openai-responses route whose
// ~/.octet/models.json entry declares "native_compaction": true, the
// provider's compaction endpoint (POST base_url/responses/compact)
// compacts the conversation, and its output items are stored verbatim as
// the replacement history in a native checkpoint. The items are opaque
// (encrypted content included): never parsed, never altered, and never
// sent to another route: the checkpoint records its route, and a run on
// any other route continues from the raw history (and compacts it
// locally when it must).

const operationNativeCompaction = protocol.OperationNativeCompaction

// routeKey names the run's route for native checkpoints: wire, provider,
// endpoint and API model.
func (d *driver) routeKey() string {
	m := d.p.model
	return string(m.Mode) + " " + m.Provider + " " + m.BaseURL + " " + m.APIModel
}

// sessionMessages is the session's conversation for this run's route,
// media attached. The session reads back from its file the records it does
// not hold; a failure to is the step's error.
func (d *driver) sessionMessages() ([]provider.Message, error) {
	msgs, err := d.p.sess.Conversation(d.routeKey())
	if err != nil {
		return nil, fmt.Errorf("the session could not be read: %w", err)
	}
	return d.withMediaBytes(msgs)
}

// nativeCompactor returns the route's compaction endpoint when the route
// declares one.
func (d *driver) nativeCompactor() (provider.Compactor, bool) {
	m := d.p.model
	if !m.NativeCompaction || m.Inline || m.Mode != catalog.ModeOpenAIResponses {
		return nil, false
	}
	c, ok := d.p.prov.(provider.Compactor)
	return c, ok
}

// runCompaction compacts msgs natively when the route has an endpoint,
// else locally. attempted is false when a local compaction has nothing to
// summarize (no events then).
func (d *driver) runCompaction(ctx context.Context, step int, msgs *[]provider.Message, reason string, tokens int64) (attempted, ok bool, tf *modelcall.Failed) {
	c, native := d.nativeCompactor()
	var pl compactionPlan
	can := false
	if !native {
		pl, can = d.plan(*msgs)
	}
	switch (compaction.Policy{Native: native}).Choose(can) {
	case compaction.KindNative:
		ok, tf = d.compactNative(ctx, step, c, msgs, reason, tokens)
		return true, ok, tf
	case compaction.KindLocal:
		ok, tf = d.compact(ctx, step, msgs, pl, reason, tokens)
		return true, ok, tf
	}
	return false, false, nil
}

// compactNative runs one native compaction, as the auxiliary operation
// native_compaction under the recovery loop.
func (d *driver) compactNative(ctx context.Context, step int, c provider.Compactor, msgs *[]provider.Message, reason string, tokensBefore int64) (bool, *modelcall.Failed) {
	d.stream(protocol.TypeCompactionStart, &protocol.CompactionStart{Reason: reason, Kind: protocol.CompactionNative, TokensBefore: tokensBefore})
	fin := &protocol.CompactionFinish{Reason: reason, Kind: protocol.CompactionNative, TokensBefore: tokensBefore}
	req := provider.Request{Model: d.p.model.APIModel, System: d.cmp.system, Messages: *msgs}
	res, err := recoverCall(ctx, d, operation[provider.CompactResult]{
		name: operationNativeCompaction,
		call: func(ctx context.Context) (provider.CompactResult, error) { return c.Compact(ctx, req) },
	})
	if err != nil {
		return d.summarizerFailed(ctx, fin, err)
	}
	if err := d.recordAuxUsage(step, operationNativeCompaction, summaryAttempt{usage: res.Usage, reported: res.UsageReported}); err != nil {
		return d.summarizerFailed(ctx, fin, &summaryWriteError{err})
	}
	if noItems(res.Items) {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: "the compaction endpoint returned no items"}
		d.stream(protocol.TypeCompactionFinish, fin)
		return false, nil
	}
	after := d.cmp.overhead + estimateBytes(len(res.Items))
	usage := res.Usage
	cp := store.Compaction{
		Kind: protocol.CompactionNative, Reason: reason, Items: res.Items, Route: d.routeKey(),
		FirstKept: d.p.sess.MessageCount(), TokensBefore: tokensBefore, TokensAfterEstimate: after, Usage: new(store.NewUsageV1(usage)),
	}
	if err := d.p.sess.Append(store.Record{Body: cp}); err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: bound("the checkpoint could not be written: " + err.Error())}
		d.stream(protocol.TypeCompactionFinish, fin)
		return false, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
	}
	rebuilt, err := d.sessionMessages()
	if err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: bound(err.Error())}
		d.stream(protocol.TypeCompactionFinish, fin)
		return false, &modelcall.Failed{Code: protocol.CodeSessionCorrupt, Msg: err.Error()}
	}
	*msgs = rebuilt
	d.cmp.count.reset(after, len(rebuilt))
	fin.OK, fin.TokensAfterEstimate, fin.HandoffBytes = true, after, int64(len(res.Items))
	fin.WillRetry = reason == protocol.CompactionOverflow
	d.stream(protocol.TypeCompactionFinish, fin)
	return true, nil
}

// noItems reports whether items, the compaction endpoint's output array,
// holds no item: [] with any JSON whitespace inside, as a server that
// indents its answer writes it.
func noItems(items []byte) bool {
	t := bytes.Trim(items, " \t\r\n")
	return len(t) < 2 || len(bytes.Trim(t[1:len(t)-1], " \t\r\n")) == 0
}
