package host

import (
	"context"

	"octet.dev/host/fsm/session"
	"octet.dev/host/protocol"
	"octet.dev/host/wire"
)

// emitter writes the events of the request being served. The session
// machine owns seq: each event is encoded with the machine's next seq and
// written once the machine has taken it.
type emitter struct {
	check seqCheck // the invariants build's cross-check; empty otherwise
	h     *Host
	s     *wire.Stream
}

func (h *Host) emitter(requestID, runID, sessionID string) *emitter {
	return &emitter{h: h, s: h.w.Stream(requestID, runID, sessionID)}
}

// emit writes a non-terminal event.
func (e *emitter) emit(typ protocol.EventType, data protocol.Payload) error {
	return e.write(session.TrEvent, typ, data, false)
}

// hold is emit for a caller with more events ready: the frame may be held
// back and written with the next ones (wire.Stream.Hold); flush writes it.
func (e *emitter) hold(typ protocol.EventType, data protocol.Payload) error {
	return e.write(session.TrEvent, typ, data, true)
}

// flush writes the events hold held back.
func (e *emitter) flush() error { return e.s.Flush() }

// finish writes the terminal event.
func (e *emitter) finish(typ protocol.EventType, data protocol.Payload) error {
	return e.write(session.TrTerminal, typ, data, false)
}

func (e *emitter) write(tr session.Trigger, typ protocol.EventType, data protocol.Payload, hold bool) error {
	p, err := e.s.Encode(e.h.m.NextSeq(), typ, data, tr == session.TrTerminal)
	if err != nil {
		return err
	}
	if p.Terminal {
		tr = session.TrTerminal // an oversized event is replaced by a terminal protocol_error
	}
	effects, err := e.h.m.Fire(session.Input{Trigger: tr})
	if err != nil {
		panic(err) // the driver writes only while its request is being served
	}
	e.check.written(effects, p)
	if hold {
		return e.s.Hold(p)
	}
	return e.s.Write(p)
}

// serve handles one well-formed request other than shutdown. It returns
// done when Serve must stop (the output failed).
func (h *Host) serve(ctx context.Context, req *wire.Request) (bool, error) {
	var err error
	switch req.Command {
	case protocol.CommandHello:
		err = h.emitter(req.RequestID, "", "").finish(protocol.TypeHello, h.hello())
	case protocol.CommandModels:
		err = h.models(ctx, req)
	case protocol.CommandRun:
		err = h.run(ctx, req)
	default:
		panic("host: decoded an unknown command " + req.Command)
	}
	if err != nil && !isOutputTooLarge(err) {
		return h.writeFailed(ctx, err)
	}
	return false, nil
}
