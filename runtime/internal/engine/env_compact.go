package engine

import (
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/compact"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The driver's environment methods for compaction (package compact),
// beside env.go's.

var _ compact.Env = (*driver)(nil)

// Provider is the run's provider now (a refreshed Codex credential
// replaces it).
func (d *driver) Provider() provider.Provider { return d.p.prov }

// NativeEndpoint is the route's compaction endpoint, when it declares one.
func (d *driver) NativeEndpoint() (provider.Compactor, bool) { return d.nativeCompactor() }

// Conversation is the session's conversation for the run's route, media
// attached.
func (d *driver) Conversation() ([]provider.Message, error) { return d.sessionMessages() }

// LatestCompaction is the newest checkpoint of the run's route.
func (d *driver) LatestCompaction() (store.Compaction, bool) {
	return d.p.sess.LatestCompaction(d.routeKey())
}

// ConversationOrdinals are the file-wide ordinals of the route's
// conversation's message records after its checkpoint.
func (d *driver) ConversationOrdinals() []int { return d.p.sess.ConversationOrdinals(d.routeKey()) }

// MessageCount is the number of message records of the session.
func (d *driver) MessageCount() int { return d.p.sess.MessageCount() }

// ContextUsage is the usage of the session's newest step since its newest
// checkpoint, and the number of messages after it.
func (d *driver) ContextUsage() (provider.Usage, int, bool) { return d.p.sess.ContextUsage() }

// RecordAuxUsage puts an auxiliary call's usage in the session's ledger:
// a usage record with its operation, or, when the server reported none, a
// usage_uncertainty record (the sticky flag follows).
func (d *driver) RecordAuxUsage(step int, op string, u provider.Usage, reported bool) error {
	if !reported {
		if err := d.p.sess.RecordUsageUncertainty(d.p.model.Provider, d.p.model.ID, op); err != nil {
			return err
		}
		d.markUncertain()
		return nil
	}
	cost := priceUsage(d.p.model.Cost, protocol.Usage(u))
	return d.p.sess.Append(store.Record{Body: store.Usage{RunID: d.p.req.RunID, Operation: op, Step: step, Model: d.p.model.ID, Usage: store.NewUsageV1(u), CostUSD: cost.Total}})
}

// DiscardTurn reports a discarded answer (a silent overflow's) as
// recovered output and records its usage as discarded: the call was
// billed all the same.
func (d *driver) DiscardTurn(step int, t modelcall.Turn) error {
	d.discardTurn(step, t)
	return d.p.sess.Append(store.Record{Body: store.Usage{RunID: d.p.req.RunID, Operation: operationAssistantTurn, Discarded: true, Step: step, Model: d.p.model.ID, Usage: store.NewUsageV1(t.Usage),
		CostUSD: priceUsage(d.p.model.Cost, protocol.Usage(t.Usage)).Total}})
}

// NativeBusy says the step is native-steered: it cannot be re-issued.
func (d *driver) NativeBusy() bool { return d.nativeBusy() }

// Redact redacts the run's credentials from model output.
func (d *driver) Redact(s string) string { return d.p.red.String(s) }

// RedactError scrubs the route's key from an error message and redacts it.
func (d *driver) RedactError(msg string) string { return d.p.red.String(scrub(msg, d.p.key)) }

// FailureMessage is the message a run ending on tf reports.
func (d *driver) FailureMessage(tf *modelcall.Failed) string { return failureMessage(tf) }
