package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/recovery"
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/reasoning"
	"octet.dev/host/runtime/internal/engine/steer"
	"octet.dev/host/runtime/internal/store"
)

// RunControl observes and controls one run.
//
// Events delivers the run's events in order, ending with the final_result
// event, and is closed after it. The run waits for the consumer (events are
// never dropped): read Events until it is closed, or call Abandon to stop
// reading.
type RunControl struct {
	events  chan Event
	done    chan struct{}
	abandon chan struct{}
	once    sync.Once
	cancel  context.CancelFunc
	result  protocol.FinalResult

	// closeEvents closes events once (early with ConfirmDelivery).
	closeEvents sync.Once
	// confirm is closed by Wait or Abandon*: the consumer has handled the
	// events (RunRequest.ConfirmDelivery).
	confirm     chan struct{}
	confirmOnce sync.Once
	// abandonCode and abandonMsg say why the consumer abandoned the
	// events (AbandonWith); guarded by mu.
	abandonCode protocol.Code
	abandonMsg  string

	reasoningDeclared reasoning.Route // what the route declares (SetReasoning)
	agent             *Agent
	mu                sync.Mutex
	pendingReasoning  *ReasoningConfig
	reasoningClosed   bool // the run is ending: SetReasoning is refused
	queue             steer.Queue
	// native is set when the run's route is qualified for native
	// steering (package steer); nil: Steer queues.
	native *steer.Gate
}

// Events returns the run's ordered event stream.
func (rc *RunControl) Events() <-chan Event { return rc.events }

// Cancel stops the run: it ends with status error, code canceled.
func (rc *RunControl) Cancel() { rc.cancel() }

// Abandon tells the run that nobody reads its events any more (the
// consumer failed): remaining events are discarded and the run is
// canceled.
func (rc *RunControl) Abandon() { rc.AbandonWith("", "") }

// AbandonWith is Abandon with the reason the events did not reach their
// reader: code (e.g. protocol.CodeOutputTooLarge for an event the wire
// replaced, protocol.CodeOutputFailed for a failed write) and a message. The run
// ends with status error and that code, and its session records it: in
// its run_end when the run had not ended yet, else (with
// RunRequest.ConfirmDelivery) in a second run_end that supersedes the
// first. An empty code is Abandon: the run keeps the status it ends with
// (canceled, most often). The first reason given wins.
func (rc *RunControl) AbandonWith(code protocol.Code, message string) {
	if code != "" {
		rc.mu.Lock()
		if rc.abandonCode == "" {
			rc.abandonCode, rc.abandonMsg = code, message
		}
		rc.mu.Unlock()
	}
	rc.once.Do(func() { close(rc.abandon) })
	rc.cancel()
	rc.confirmed()
}

// abandoned returns the reason AbandonWith gave, "" when none.
func (rc *RunControl) abandoned() (code protocol.Code, message string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.abandonCode, rc.abandonMsg
}

func (rc *RunControl) confirmed() { rc.confirmOnce.Do(func() { close(rc.confirm) }) }

// Wait blocks until the run has ended and returns its result. The events
// must be consumed (or abandoned) for the run to end. With
// RunRequest.ConfirmDelivery, calling it confirms that the events reached
// their reader.
func (rc *RunControl) Wait() protocol.FinalResult {
	rc.confirmed()
	<-rc.done
	return rc.result
}

// Run validates req and starts the run. A request that fails validation
// returns a *RunError and no RunControl: nothing was accepted (CONTRACT
// §8). ctx bounds the whole run.
func (a *Agent) Run(ctx context.Context, req RunRequest) (*RunControl, error) {
	return a.start(ctx, req, nil)
}

// start starts a run, a worker run (delegation.go) when w is not nil.
func (a *Agent) start(ctx context.Context, req RunRequest, w *worker) (*RunControl, error) {
	p, rerr := a.prepare(ctx, req)
	if rerr != nil {
		return nil, rerr
	}
	ctx, cancel := context.WithCancel(ctx)
	rc := &RunControl{events: make(chan Event, 64), done: make(chan struct{}), abandon: make(chan struct{}), confirm: make(chan struct{}), cancel: cancel,
		reasoningDeclared: reasoning.RouteOf(p.model), agent: a, queue: steer.NewQueue()}
	if p.model.NativeSteeringQualified(p.model.NativeCompaction, false) {
		// This build sets no hard cumulative ceiling on a run: max_steps
		// is kept by steering natively only while another step may
		// follow (package steer).
		rc.native = steer.NewGate(rcQueue{rc})
	}
	trace := transitionTracer(ctx, a.log, req.RunID)
	rc.queue.SetTracer(trace)
	a.runs.Add(1)
	go func() {
		defer a.runs.Done()
		defer close(rc.done)
		defer rc.closeEvents.Do(func() { close(rc.events) })
		defer cancel()
		defer p.close()
		d := &driver{a: a, p: p, rc: rc, m: fsmrun.New(), recovery: a.recoveryConfig(), trace: trace}
		d.m.SetTracer(trace)
		if w != nil {
			d.parent, d.recovery = w.parent, w.recovery
		}
		rc.result = d.drive(ctx)
	}()
	return rc, nil
}

// driver runs one accepted run on its own goroutine, the owner of the run
// machine.
type driver struct {
	a  *Agent
	p  *prepared
	rc *RunControl
	m  *fsmrun.Machine

	steps     int
	toolCalls int
	changed   []string
	total     protocol.Totals
	uncertain bool            // usage figures are known subtotals (sticky)
	recovery  recovery.Config // snapshot at run start
	rs        reasoning.State // the pinned baseline and the updates after it (env_reasoning.go)
	parent    string          // the delegating run's id for a worker (delegation.go)
	workers   int             // worker runs started (delegation.go)
	reauthed  int             // the step whose Codex 401 refreshed the credential (codex.go)
	trace     fsm.Tracer      // the run's machines' tracer (nil: tracing off)
	cmp       *compactor      // context budgeting and compaction (compaction.go)
	native    *steer.Native   // native steering on a qualified route (package steer); nil otherwise
	// nativeStep: the step's call reads a successor or continues a
	// steered response, so it is never re-issued (package compact).
	nativeStep bool

	deltas []protocol.ModelDelta // the unused rest of the model_delta slab (step.go)
}

// send delivers an event unless the consumer abandoned the run.
func (d *driver) send(ev Event) {
	d.observe(ev)
	// The fast path: room in the buffer. A select with a default is a
	// plain non-blocking send, far cheaper than the two-way select.
	select {
	case d.rc.events <- ev:
		return
	default:
	}
	select {
	case d.rc.events <- ev:
	case <-d.rc.abandon:
	}
}

// fire applies a lifecycle input and sends the events it calls for; data
// is the streaming event for TrStream, the result for TrFinalize.
func (d *driver) fire(in fsmrun.Input, data Event) {
	effects, err := d.m.Fire(in)
	if err != nil {
		panic(err) // the driver only fires permitted inputs
	}
	for _, e := range effects {
		switch e.Kind {
		case fsmrun.EffAccepted, fsmrun.EffStream, fsmrun.EffFinal:
			d.send(data)
		case fsmrun.EffStarted:
			d.send(Event{Type: protocol.TypeStarted, Data: &protocol.Started{}})
		case fsmrun.EffSettled:
			d.send(Event{Type: protocol.TypeSettled, Data: &protocol.Settled{Status: e.Status}})
		}
	}
}

func (d *driver) stream(typ protocol.EventType, data protocol.Payload) {
	d.fire(fsmrun.Input{Trigger: fsmrun.TrStream}, Event{Type: typ, Data: data})
}

func (d *driver) drive(ctx context.Context) protocol.FinalResult {
	p := d.p
	names := make([]string, len(p.tools))
	for i, t := range p.tools {
		names[i] = t.Spec.Name
	}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrAccept}, Event{Type: protocol.TypeAccepted, Data: &protocol.Accepted{
		Model: protocol.ModelInfo{ID: p.model.ID, Provider: p.model.Provider, Name: p.model.Name,
			ProviderMode: string(p.model.Mode), ContextWindowTokens: p.model.ContextWindowTokens,
			MaxOutputTokens: p.model.MaxOutputTokens, InputModalities: p.model.EffectiveModalities(),
			Vision: p.model.Vision(), Audio: p.model.Audio(), SupportsReasoning: p.model.SupportsReasoning},
		SessionFile:         p.sess.Path(),
		Tools:               names,
		EffectiveToolPolicy: p.policy.EffectivePolicy,
		Skills:              p.skillNames,
	}})
	d.fire(fsmrun.Input{Trigger: fsmrun.TrStart}, Event{})
	d.reportExtensions()
	d.sessionUncertain(p.sess) // sticky across resume: every later run says so again

	var status, output string
	var errInfo *protocol.ErrorData
	if blocked := d.unsettledNativeSteering(); blocked != nil {
		status, output, errInfo = blockedByNativeSteering(blocked) // before any provider I/O
	} else {
		status, output, errInfo = d.contain(ctx)
		d.endCompaction(status) // compaction.go
	}
	status, errInfo = d.endNative(status, errInfo) // before the queue closes: a late native input is queued, then dropped
	d.rc.closeSteering()                           // what is still queued is dropped, before settled
	if code, msg := d.rc.abandoned(); code != "" {
		// Nobody saw the run's events after the one that failed: it ends
		// as what its consumer was told, whatever the loop made of the
		// cancel.
		status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: code, Message: bound(msg)}
	}

	// A reasoning change no boundary admitted (held back by an Anthropic
	// tool-use loop, or set after the last boundary) is not dropped: it is
	// recorded, so that the session's next run starts with it.
	end := store.RunEnd{RunID: p.req.RunID, Status: status}
	if errInfo != nil {
		end.Code = errInfo.Code
	}
	ends := []store.Record{{Body: end}}
	pending, commitReasoning := d.endReasoning()
	if pending != nil {
		ends = append([]store.Record{*pending}, ends...)
	}
	switch err := p.sess.Append(ends...); {
	case err != nil:
		if errInfo == nil {
			status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: protocol.CodeSessionWriteFailed, Message: "the session could not be written: " + bound(err.Error())}
		}
	case pending != nil:
		commitReasoning()
	}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrSettle, Status: status}, Event{})
	path := p.sess.Path()
	changed := d.changed
	if changed == nil {
		changed = []string{}
	}
	res := protocol.FinalResult{Status: status, Output: output, Error: errInfo, FilesChanged: changed, ToolCalls: d.toolCalls, Steps: d.steps, SessionFile: &path}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrFinalize}, Event{Type: protocol.TypeFinalResult, Data: &res})
	if !p.req.ConfirmDelivery {
		return res
	}
	// The session stays open until the consumer says whether the last
	// events reached their reader: if they did not, a second run_end says
	// so (the first one said what the run itself ended with).
	d.rc.closeEvents.Do(func() { close(d.rc.events) })
	<-d.rc.confirm
	code, msg := d.rc.abandoned()
	if code == "" || code == end.Code {
		return res
	}
	corrected := res
	corrected.Status, corrected.Error = fsmrun.StatusError, &protocol.ErrorData{Code: code, Message: bound(msg)}
	if err := p.sess.Append(store.Record{Body: store.RunEnd{RunID: p.req.RunID, Status: corrected.Status, Code: code}}); err != nil {
		d.a.log.LogAttrs(context.Background(), slog.LevelError, "the session could not record that the run's events were abandoned",
			slog.String("run_id", p.req.RunID), slog.Any("error", err))
	}
	return corrected
}

// contain runs the loop and turns a panic inside it (a bug in a decoder or a
// tool) into an internal_error result, so that the run still ends with its
// one final_result and the host serves on; the stack goes to the log. The
// loop's deferred cleanups (shell process groups, descriptors) have run by
// then.
func (d *driver) contain(ctx context.Context) (status, output string, errInfo *protocol.ErrorData) {
	defer func() {
		if v := recover(); v != nil {
			// The panic value may quote provider output: redacted like it.
			pv := scrub(d.p.red.String(fmt.Sprint(v)), d.p.key)
			d.a.log.LogAttrs(ctx, slog.LevelError, "the run failed on an internal error",
				slog.String("run_id", d.p.req.RunID), slog.String("panic", pv), slog.String("stack", string(debug.Stack())))
			status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: protocol.CodeInternalError, Message: bound("internal error: " + pv)}
		}
	}()
	return d.loop(ctx)
}
