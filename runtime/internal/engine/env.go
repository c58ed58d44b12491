package engine

import (
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The driver's environment methods: what the engine's parts (compaction,
// the terminal gate, steering, reasoning) may ask of the run they serve.
// Each part declares the few it needs as an interface of its own (its
// narrow environment), which the driver satisfies; none of them sees the
// driver itself. A part that needs something more adds it in a file of its
// own here (env_<part>.go).

// Emit sends a streaming event of the run (through the run machine).
func (d *driver) Emit(typ protocol.EventType, data protocol.Payload) { d.stream(typ, data) }

// Append appends records to the run's session, durably.
func (d *driver) Append(recs ...store.Record) error { return d.p.sess.Append(recs...) }

// RunID is the run's id.
func (d *driver) RunID() string { return d.p.req.RunID }

// ModelTurn performs a step's model call under the recovery machine.
func (d *driver) ModelTurn(ctx context.Context, step int, req provider.Request) (modelcall.Turn, error) {
	return d.modelTurn(ctx, step, req)
}

// Recover performs an auxiliary operation under the recovery machine.
func (d *driver) Recover(ctx context.Context, op modelcall.Operation[any]) (any, error) {
	return recoverCall(ctx, d, operation[any]{name: op.Name, call: op.Call, discard: op.Discard,
		lifecycle: op.Lifecycle, endpoint: op.Endpoint, model: op.Model})
}

var _ modelcall.Recoverer = (*driver)(nil)
