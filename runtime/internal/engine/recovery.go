package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/engine/modelcall"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// SetMaxNetworkWait bounds the elapsed recovery of a logical turn (the
// assistant turn of a step, or an auxiliary operation) after its first
// positively identified pre-send outage: every later network wait, every
// retry (a server's Retry-After included) and the opening of every later
// request (dial and TLS handshake get only what is left) must fit it, and a
// minimum delay beyond what is left stops recovery with
// network_wait_exceeded rather than retrying early. It does not bound
// streaming a response. nil means no ceiling (the default), zero disables
// waiting. It applies to runs started afterwards.
func (a *Agent) SetMaxNetworkWait(d *time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d == nil {
		a.maxNetworkWait = nil
		return
	}
	ms := max(d.Milliseconds(), 0)
	a.maxNetworkWait = &ms
}

// SetMaxRetries sets the retry budget of a turn (default 4: up to five
// attempts reach the provider); zero disables retries.
func (a *Agent) SetMaxRetries(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.maxRetries = max(n, 0)
}

func (a *Agent) recoveryConfig() recovery.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	cfg := recovery.DefaultConfig()
	if a.maxRetries >= 0 {
		cfg.MaxAttempts = a.maxRetries
	}
	if a.maxNetworkWait != nil {
		ms := *a.maxNetworkWait
		cfg.MaxNetworkWaitMS = &ms
	}
	return cfg
}

// facts maps a provider failure to the facts recovery classifies.
func facts(err error) recovery.Facts {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return recovery.Facts{Kind: recovery.FailCanceled, Message: "canceled"}
		}
		return recovery.Facts{Kind: recovery.FailDecode, Message: err.Error()}
	}
	f := recovery.Facts{Kind: recovery.FailKind(pe.Kind), Status: pe.Status, Code: pe.Code, Message: pe.Message,
		RequestWritten: pe.RequestWritten, ContentStarted: pe.ContentStarted, RetryAfterMS: pe.RetryAfter.Milliseconds()}
	if f.Kind == recovery.FailConnect && !f.RequestWritten && !isOutage(pe.Err) {
		// Not a positively identified outage (a TLS or certificate
		// failure, a proxy refusing us): waiting would not help, so it is
		// a fatal provider error rather than an endless network wait.
		f.Kind = recovery.FailDecode
		f.Message = "connection failed before the request was sent, and not for a network outage: " + f.Message
	}
	return f
}

// isOutage reports whether a pre-send connection failure is a positively
// identified network outage: DNS failure, connection refused, network or
// host unreachable, or a dial timeout (CONTRACT §12). A name the resolver
// answered does not exist (NXDOMAIN) is not an outage but a wrong host,
// most often a typo in base_url: waiting for it, with no ceiling by
// default, would hang the run for ever. A resolver that cannot be reached
// or answers with a temporary failure is an outage.
func isOutage(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return !dns.IsNotFound || dns.IsTemporary || dns.IsTimeout
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENETDOWN, syscall.EHOSTDOWN} {
		if errors.Is(err, errno) {
			return true
		}
	}
	if errors.Is(err, provider.ErrOpenTimeout) {
		// The opening was cut at the max network wait: an outage at the
		// ceiling, which recovery ends.
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && op.Timeout()
}

// Operations recovered under the recovery machine: the assistant turn of a
// step, whose recovery is reported as provider_retry and
// provider_waiting_for_network, and the auxiliary operations of CONTRACT
// §12 (local_compaction, native_compaction, terminal_gate), reported as
// provider_operation_retry. The name is also the operation of a
// usage_uncertainty record and of an auxiliary call's usage record (a
// compaction's summarizer, a model terminal gate's question).
const (
	operationAssistantTurn   = "assistant_turn"
	operationLocalCompaction = protocol.OperationLocalCompaction
	operationTerminalGate    = protocol.OperationTerminalGate
)

// operation is one logical provider call made under the recovery machine.
type operation[T any] struct {
	name string
	// call makes one attempt. Its value is provisional until the machine
	// commits it; a failed attempt's value is handed to discard.
	call    func(ctx context.Context) (T, error)
	discard func(T)
	// lifecycle: the route opted into provider_lifecycle, and loading
	// answers get a readiness wait before the machine counts an attempt
	// (lifecycle.go).
	lifecycle bool
	// endpoint and model name the route of a usage_uncertainty record
	// when the call goes to another route than the run's (a model
	// terminal gate); empty means the run's.
	endpoint, model string
}

// recoverCall performs op under the recovery machine: attempts, retries and
// network waits, until a committed attempt or a final failure. Only the
// committed attempt's value is returned; every replaced attempt's value
// goes to op.discard. The assistant turn and the auxiliary operations share
// this one loop and differ only in how their recovery is announced.
func recoverCall[T any](ctx context.Context, d *driver, op operation[T]) (T, error) {
	var zero T
	if op.name != operationAssistantTurn {
		// An auxiliary call (a summary, a gate's question) is the agent's
		// own request, never the user's: Copilot bills and routes it by
		// its X-Initiator.
		ctx = copilot.WithInitiator(ctx, copilot.InitiatorAgent)
	}
	m, err := recovery.New(d.recovery)
	if err != nil {
		return zero, err
	}
	m.SetTracer(d.trace)
	// The machine reads elapsed milliseconds; Sub uses the clock's
	// monotonic reading, so a wall-clock step cannot end a wait early.
	start := d.a.opts.Now()
	now := func() int64 { return d.a.opts.Now().Sub(start).Milliseconds() }
	effects, err := m.Fire(recovery.Input{Trigger: recovery.TrStart})
	if err != nil {
		panic(err)
	}
	last, have := zero, false
	var ready readiness // the operation's readiness waits (lifecycle.go)
	for {
		var next recovery.Input
		for _, e := range append([]recovery.Effect(nil), effects...) {
			switch e.Kind {
			case recovery.EffStartAttempt:
				// Armed, the request must open within what is left of the
				// max network wait: a reading at or past the deadline then
				// reports the cut opening.
				callCtx, deadline := ctx, int64(0)
				if e.OpenWithinMS > 0 {
					callCtx = provider.WithOpenTimeout(ctx, time.Duration(e.OpenWithinMS)*time.Millisecond)
					deadline = now() + e.OpenWithinMS
				}
				v, err := callReady(callCtx, d, op, &ready)
				if err != nil && op.name == operationAssistantTurn {
					// Native steering in flight: never retried
					// (package steer).
					if tf, stop := d.nativeAbort(err); stop {
						if op.discard != nil {
							op.discard(v)
						}
						return zero, tf
					}
				}
				last, have = v, true // provisional until EffSucceed
				if err == nil {
					next = recovery.Input{Trigger: recovery.TrAttemptSucceeded}
					break
				}
				f := facts(err)
				f.Message = scrub(f.Message, d.p.key)
				if ctx.Err() != nil {
					next = recovery.Input{Trigger: recovery.TrCancel, Facts: f}
				} else {
					at := now()
					if errors.Is(err, provider.ErrOpenTimeout) {
						at = max(at, deadline)
					}
					next = recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: f, NowMS: at, Jitter: d.a.opts.Jitter()}
				}
			case recovery.EffPersistUsageUncertainty:
				// Durable BEFORE the attempt is replaced (CONTRACT §12).
				endpoint, model := d.p.model.Provider, d.p.model.ID
				if op.model != "" {
					endpoint, model = op.endpoint, op.model
				}
				if err := d.p.sess.RecordUsageUncertainty(endpoint, model, op.name); err != nil {
					msg := "the usage uncertainty record could not be written: " + err.Error()
					if m.State().Phase.Terminal() {
						// The same step ended the turn (its budget was
						// spent, or it was canceled): there is nothing
						// left to abort, and the write failure is the
						// more important news.
						return zero, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: bound(scrub(msg, d.p.key))}
					}
					next = recovery.Input{Trigger: recovery.TrAbort, Code: protocol.CodeSessionWriteFailed, Message: msg}
					goto fire
				}
				d.markUncertain()
			case recovery.EffDiscardAttempt:
				if have && op.discard != nil {
					op.discard(last)
				}
				last, have = zero, false
			case recovery.EffEmitRetry:
				msg := bound(d.p.red.String(scrub(e.Error, d.p.key)))
				if op.name == operationAssistantTurn {
					d.stream(protocol.TypeProviderRetry, &protocol.ProviderRetry{Attempt: e.Attempt, MaxAttempts: e.MaxAttempts, DelayMS: e.DelayMS, Error: msg})
				} else {
					maxAttempts := e.MaxAttempts
					d.stream(protocol.TypeProviderOperationRetry, &protocol.ProviderOperationRetry{Operation: op.name, Attempt: e.Attempt, MaxAttempts: &maxAttempts, DelayMS: e.DelayMS, Error: msg})
				}
			case recovery.EffEmitWaitingForNetwork:
				msg := bound(d.p.red.String(scrub(e.Error, d.p.key)))
				if op.name == operationAssistantTurn {
					d.stream(protocol.TypeProviderWaitingForNetwork, &protocol.ProviderWaitingForNetwork{Attempt: e.Attempt, DelayMS: e.DelayMS, Error: msg})
				} else {
					// A network wait has no count limit: max_attempts is null.
					d.stream(protocol.TypeProviderOperationRetry, &protocol.ProviderOperationRetry{Operation: op.name, Attempt: e.Attempt, DelayMS: e.DelayMS, Error: msg})
				}
			case recovery.EffStartTimer:
				if err := d.a.opts.Sleep(ctx, time.Duration(e.DelayMS)*time.Millisecond); err != nil {
					next = recovery.Input{Trigger: recovery.TrCancel}
				} else {
					next = recovery.Input{Trigger: recovery.TrTimerFired, NowMS: now()}
				}
			case recovery.EffSucceed:
				return last, nil
			case recovery.EffFail:
				return zero, &modelcall.Failed{Code: e.Code, Msg: bound(scrub(e.Message, d.p.key))}
			}
		}
	fire:
		if next.Trigger == "" {
			panic(fmt.Sprintf("runtime: recovery effects %+v left no input", effects))
		}
		effects, err = m.Fire(next)
		if err != nil {
			panic(err)
		}
	}
}

// modelTurn performs one logical model turn under the recovery machine.
// Only the committed attempt's output reaches the session; a replaced
// attempt's partial text and reasoning become recovered_output events.
func (d *driver) modelTurn(ctx context.Context, step int, req provider.Request) (modelcall.Turn, error) {
	return recoverCall(ctx, d, operation[modelcall.Turn]{
		name:      operationAssistantTurn,
		call:      func(ctx context.Context) (modelcall.Turn, error) { return d.callModel(ctx, step, req) },
		lifecycle: d.lifecycleOn(),
		discard:   func(t modelcall.Turn) { d.discardTurn(step, t) },
	})
}

// markUncertain sets the run's sticky usage uncertainty and emits the
// event once per run.
func (d *driver) markUncertain() {
	if d.uncertain {
		return
	}
	d.uncertain = true
	d.stream(protocol.TypeProviderUsageUncertain, &protocol.ProviderUsageUncertain{})
}

// sessionUncertain reports a resumed session's sticky flag at run start.
func (d *driver) sessionUncertain(s *store.Session) {
	if s.HasUncertainUsage() {
		d.markUncertain()
	}
}

func defaultSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func defaultJitter() float64 { return rand.Float64() }
