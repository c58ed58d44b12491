package compact

import (
	"bytes"
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Native compaction (CONTRACT §17): on an openai-responses route whose
// ~/.octet/models.json entry declares "native_compaction": true, the
// provider's compaction endpoint (POST base_url/responses/compact)
// compacts the conversation, and its output items are stored verbatim as
// the replacement history in a native checkpoint. The items are opaque
// (encrypted content included): never parsed, never altered, and never
// sent to another route: the checkpoint records its route, and a run on
// any other route continues from the raw history (and compacts it
// locally when it must).

// compactNative runs one native compaction, as the auxiliary operation
// native_compaction under the recovery loop.
func (c *Compactor) compactNative(ctx context.Context, step int, ep provider.Compactor, msgs *[]provider.Message, reason string, tokensBefore int64) (bool, *modelcall.Failed) {
	c.env.Emit(protocol.TypeCompactionStart, &protocol.CompactionStart{Reason: reason, Kind: protocol.CompactionNative, TokensBefore: tokensBefore})
	fin := &protocol.CompactionFinish{Reason: reason, Kind: protocol.CompactionNative, TokensBefore: tokensBefore}
	req := provider.Request{Model: c.cfg.APIModel, System: c.cfg.System, Messages: *msgs}
	res, err := modelcall.Recover(ctx, c.env, modelcall.Operation[provider.CompactResult]{
		Name: protocol.OperationNativeCompaction,
		Call: func(ctx context.Context) (provider.CompactResult, error) { return ep.Compact(ctx, req) },
	})
	if err != nil {
		return c.summarizerFailed(ctx, fin, err)
	}
	if err := c.env.RecordAuxUsage(step, protocol.OperationNativeCompaction, res.Usage, res.UsageReported); err != nil {
		return c.summarizerFailed(ctx, fin, &summaryWriteError{err})
	}
	if noItems(res.Items) {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: "the compaction endpoint returned no items"}
		c.env.Emit(protocol.TypeCompactionFinish, fin)
		return false, nil
	}
	after := c.overhead + estimateBytes(len(res.Items))
	usage := res.Usage
	cp := store.Compaction{
		Kind: protocol.CompactionNative, Reason: reason, Items: res.Items, Route: c.cfg.Route,
		FirstKept: c.env.MessageCount(), TokensBefore: tokensBefore, TokensAfterEstimate: after, Usage: new(store.NewUsageV1(usage)),
	}
	return c.checkpoint(cp, msgs, fin, int64(len(res.Items)))
}

// noItems reports whether items, the compaction endpoint's output array,
// holds no item: [] with any JSON whitespace inside, as a server that
// indents its answer writes it.
func noItems(items []byte) bool {
	t := bytes.Trim(items, " \t\r\n")
	return len(t) < 2 || len(bytes.Trim(t[1:len(t)-1], " \t\r\n")) == 0
}
