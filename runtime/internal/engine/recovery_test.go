package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/engine/modelcall"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/fsm/recovery"
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/provider"
	"octet.dev/host/spec"
)

func pe(kind string, status int, written, started bool) *ProviderError {
	e := &ProviderError{Kind: provider.FailKind(kind), Status: status, Message: kind + " failure", RequestWritten: written, ContentStarted: started}
	if kind == "connect" {
		e.Err = &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return e
}

func recoveryEvents(evs []Event) []spec.RecoveryEvent {
	var out []spec.RecoveryEvent
	for _, ev := range evs {
		re := spec.RecoveryEvent{Type: ev.Type}
		switch d := ev.Data.(type) {
		case *protocol.ProviderRetry:
			re.Attempt, re.MaxAttempts, re.DelayMS = d.Attempt, &d.MaxAttempts, d.DelayMS
		case *protocol.ProviderWaitingForNetwork:
			re.Attempt, re.DelayMS = d.Attempt, d.DelayMS
		case *protocol.ModelStep:
			re.UsageUncertain = d.UsageUncertain
		}
		out = append(out, re)
	}
	return out
}

func TestRetryThenSuccess(t *testing.T) {
	f := newFixture(t, text("answer"))
	f.prov.errs = []error{pe("http_status", 503, true, false)}
	evs, res := f.run(f.req("q"))
	if res.Status != "completed" || res.Output != "answer" {
		t.Fatalf("result %+v", res)
	}
	r := find[protocol.ProviderRetry](evs)
	if len(r) != 1 || r[0].Attempt != 1 || r[0].MaxAttempts != 4 || r[0].DelayMS != 250 || !strings.Contains(r[0].Error, "http_status") {
		t.Fatalf("provider_retry %+v", r)
	}
	if len(find[protocol.ProviderUsageUncertain](evs)) != 0 {
		t.Error("a 503 before any content made usage uncertain")
	}
	if !cmp.Equal(f.slept, []time.Duration{250 * time.Millisecond}) {
		t.Errorf("slept %v", f.slept)
	}
	if err := spec.Recovery(recoveryEvents(evs)); err != nil {
		t.Error(err)
	}
}

func TestNetworkWaitDoesNotUseBudget(t *testing.T) {
	f := newFixture(t, text("up again"))
	refused := pe("connect", 0, false, false)
	f.prov.errs = []error{refused, refused, refused, refused, refused, refused}
	f.agent.SetMaxRetries(1)
	evs, res := f.run(f.req("q"))
	if res.Status != "completed" || res.Output != "up again" {
		t.Fatalf("result %+v", res)
	}
	w := find[protocol.ProviderWaitingForNetwork](evs)
	if len(w) != 6 || w[5].Attempt != 6 || len(find[protocol.ProviderRetry](evs)) != 0 || len(find[protocol.ProviderUsageUncertain](evs)) != 0 {
		t.Fatalf("waits %+v retries %d", w, len(find[protocol.ProviderRetry](evs)))
	}
	if err := spec.Recovery(recoveryEvents(evs)); err != nil {
		t.Error(err)
	}
}

func TestMaxNetworkWaitZeroStopsAtOnce(t *testing.T) {
	f := newFixture(t, text("never"))
	f.prov.errs = []error{pe("connect", 0, false, false)}
	zero := time.Duration(0)
	f.agent.SetMaxNetworkWait(&zero)
	evs, res := f.run(f.req("q"))
	if res.Status != "error" || res.Error.Code != "network_wait_exceeded" || len(find[protocol.ProviderWaitingForNetwork](evs)) != 0 {
		t.Fatalf("result %+v", res.Error)
	}
}

func TestRetriesExhausted(t *testing.T) {
	f := newFixture(t, text("never"))
	boom := pe("http_status", 500, true, false)
	f.prov.errs = []error{boom, boom, boom, boom, boom}
	evs, res := f.run(f.req("q"))
	if res.Status != "error" || res.Error.Code != "retries_exhausted" || !strings.Contains(res.Error.Message, "retry budget") {
		t.Fatalf("result %+v", res.Error)
	}
	r := find[protocol.ProviderRetry](evs)
	if len(r) != 4 || r[3].Attempt != 4 || len(f.prov.requests()) != 5 {
		t.Fatalf("%d retries, %d attempts", len(r), len(f.prov.requests()))
	}
}

func TestNonRetryableFailsAtOnce(t *testing.T) {
	for status, code := range map[int]protocol.Code{400: "bad_request", 401: "auth_failed", 403: "auth_failed", 404: "not_found", 413: "request_too_large", 422: "bad_request"} {
		f := newFixture(t, text("never"))
		f.prov.errs = []error{pe("http_status", status, true, false)}
		evs, res := f.run(f.req("q"))
		if res.Error == nil || res.Error.Code != code || len(find[protocol.ProviderRetry](evs)) != 0 {
			t.Errorf("%d: %+v", status, res.Error)
		}
	}
	f := newFixture(t, text("never"))
	f.prov.errs = []error{&ProviderError{Kind: "http_status", Status: 429, Code: "insufficient_quota", Message: "quota", RequestWritten: true}}
	if _, res := f.run(f.req("q")); res.Error == nil || res.Error.Code != "quota_exhausted" {
		t.Errorf("insufficient_quota: %+v", res.Error)
	}
}

// TestCutAfterContentIsUncertainAndSticky cuts a stream after text: the
// usage_uncertainty record is durable before the retry, the partial text
// is recovered output only, later figures are marked, and the next run on
// the session says so again.
func TestCutAfterContentIsUncertainAndSticky(t *testing.T) {
	f := newFixture(t, text("Hello ", "world"), text("again"))
	f.prov.cuts = []error{pe("stream_cut", 200, true, true)}
	req := f.req("q")
	req.SessionID = "sticky"
	evs, res := f.run(req)
	if res.Status != "completed" || res.Output != "Hello world" {
		t.Fatalf("result %+v", res)
	}
	order := types(evs)
	i, j := slices.Index(order, protocol.TypeProviderUsageUncertain), slices.Index(order, protocol.TypeProviderRetry)
	if i < 0 || j < i {
		t.Fatalf("provider_usage_uncertain must precede provider_retry: %s", order)
	}
	rec := find[recoveredOutput](evs)
	if len(rec) != 1 || rec[0].Text != "Hello world" || rec[0].Channel != protocol.ChannelText {
		t.Errorf("recovered output %+v", rec)
	}
	if st := find[protocol.ModelStep](evs); len(st) != 1 || !st[0].UsageUncertain {
		t.Errorf("model_step after uncertainty: %+v", st)
	}
	data, _ := os.ReadFile(*res.SessionFile)
	if strings.Count(string(data), `"type":"usage_uncertainty","ts":`) != 1 || strings.Count(string(data), `"role":"assistant"`) != 1 {
		t.Errorf("session:\n%s", data)
	}
	// Sticky: the next run on this session reports it again at once.
	req = f.req("q2")
	req.RunID, req.SessionID = "run-2", "sticky"
	evs, _ = f.run(req)
	if types(evs)[2] != protocol.TypeProviderUsageUncertain || !find[protocol.ModelStep](evs)[0].UsageUncertain {
		t.Errorf("resumed run: %v", types(evs))
	}
	// A fresh session starts clean.
	req.RunID, req.SessionID = "run-3", ""
	f.prov.turns = append(f.prov.turns, text("fresh"))
	evs, _ = f.run(req)
	if len(find[protocol.ProviderUsageUncertain](evs)) != 0 {
		t.Error("a new session inherited the uncertainty")
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := newFixture(t, text("never"))
	f.prov.errs = []error{pe("http_status", 500, true, false)}
	ctx, cancel := context.WithCancel(context.Background())
	f.agent.opts.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); <-ctx.Done(); return ctx.Err() }
	rc, err := f.agent.Run(ctx, f.req("q"))
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Error == nil || res.Error.Code != protocol.CodeCanceled {
		t.Fatalf("result %+v", res)
	}
}

// TestFactsOutageIsPositivelyIdentified: only DNS failures, refused or
// unreachable connections and dial timeouts are network waits; another
// pre-send failure (a bad certificate, a host name that does not exist) is
// fatal, never an endless wait.
func TestFactsOutageIsPositivelyIdentified(t *testing.T) {
	connect := func(err error) *ProviderError {
		return &ProviderError{Kind: provider.FailConnect, Message: "dial failed", Err: err}
	}
	cases := []struct {
		name string
		err  error
		wait bool
	}{
		{"dns unreachable resolver", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "read udp 127.0.0.1:53: connection refused", Server: "127.0.0.1:53"}}, true},
		{"dns temporary failure", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}}, true},
		{"dns timeout", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "i/o timeout", IsTimeout: true}}, true},
		{"dns no such host", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, false},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"unreachable", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}, true},
		{"opening cut at the ceiling", fmt.Errorf("chat: opening the request: %w", provider.ErrOpenTimeout), true},
		{"certificate", &tls.CertificateVerificationError{Err: errors.New("x509: unknown authority")}, false},
		{"other", errors.New("proxy said no"), false},
	}
	for _, c := range cases {
		f := facts(connect(c.err))
		if got := recovery.Classify(f).Kind == recovery.NetworkWait; got != c.wait {
			t.Errorf("%s: network wait %v, want %v (facts %+v)", c.name, got, c.wait, f)
		}
	}
}

// TestMaxNetworkWaitReached: with a 5 s ceiling and a provider that stays
// unreachable, the run waits while the allowance lasts (the clock advances
// only by the waits), then fails with network_wait_exceeded.
func TestMaxNetworkWaitReached(t *testing.T) {
	f := newFixture(t, text("never"))
	refused := pe("connect", 0, false, false)
	for i := 0; i < 50; i++ {
		f.prov.errs = append(f.prov.errs, refused)
	}
	var clock time.Duration
	base := time.Unix(1_800_000_000, 0)
	f.agent.opts.Now = func() time.Time { return base.Add(clock) }
	f.agent.opts.Sleep = func(_ context.Context, d time.Duration) error { clock += d; f.slept = append(f.slept, d); return nil }
	limit := 5 * time.Second
	f.agent.SetMaxNetworkWait(&limit)
	evs, res := f.run(f.req("q"))
	if res.Status != "error" || res.Error.Code != "network_wait_exceeded" {
		t.Fatalf("result %+v", res.Error)
	}
	waits := find[protocol.ProviderWaitingForNetwork](evs)
	var total time.Duration
	for _, d := range f.slept {
		total += d
	}
	if len(waits) < 2 || total > limit || len(find[protocol.ProviderRetry](evs)) != 0 {
		t.Fatalf("%d waits, %v slept (limit %v)", len(waits), total, limit)
	}
}

// auxDriver is the driver of an accepted, started run of f, for driving an
// auxiliary operation directly: no run of this build makes one yet.
func auxDriver(t *testing.T, f *fixture) *driver {
	t.Helper()
	p, rerr := f.agent.prepare(context.Background(), f.req("q"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	t.Cleanup(p.close)
	rc := &RunControl{events: make(chan Event, 64), abandon: make(chan struct{})}
	d := &driver{a: f.agent, p: p, rc: rc, m: fsmrun.New(), recovery: f.agent.recoveryConfig()}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrAccept}, Event{Type: protocol.TypeAccepted, Data: &protocol.Accepted{}})
	d.fire(fsmrun.Input{Trigger: fsmrun.TrStart}, Event{})
	return d
}

// drained returns the events d has sent so far.
func drained(d *driver) []Event {
	var evs []Event
	for {
		select {
		case ev := <-d.rc.events:
			evs = append(evs, ev)
		default:
			return evs
		}
	}
}

// TestAuxiliaryOperationRecovery: an auxiliary operation recovers through
// the assistant turn's loop but is announced as provider_operation_retry
// (CONTRACT §12): max_attempts is the budget for a retry and null for a
// network wait, the usage_uncertainty record names the operation, a
// replaced attempt's value is discarded and only the committed one is
// returned.
func TestAuxiliaryOperationRecovery(t *testing.T) {
	f := newFixture(t)
	d := auxDriver(t, f)
	failures := []error{
		pe("connect", 0, false, false),      // outage: a network wait
		pe("http_status", 503, true, false), // a retry, nothing billed
		pe("stream_cut", 0, true, true),     // a retry after content: usage uncertain
	}
	var discarded []string
	attempt := 0
	got, err := recoverCall(context.Background(), d, operation[string]{
		name: operationLocalCompaction,
		call: func(ctx context.Context) (string, error) {
			// An auxiliary call is the agent's own: Copilot is told so.
			if who := copilot.InitiatorOf(ctx); who != copilot.InitiatorAgent {
				t.Errorf("X-Initiator of an auxiliary call: %q", who)
			}
			attempt++
			v := fmt.Sprintf("summary %d", attempt)
			if attempt <= len(failures) {
				return v, failures[attempt-1]
			}
			return v, nil
		},
		discard: func(v string) { discarded = append(discarded, v) },
	})
	if err != nil || got != "summary 4" {
		t.Fatalf("recoverCall = %q, %v; want the fourth attempt's value", got, err)
	}
	if want := []string{"summary 1", "summary 2", "summary 3"}; !cmp.Equal(discarded, want) {
		t.Errorf("discarded %q, want %q", discarded, want)
	}
	evs := drained(d)
	var types []protocol.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	wantTypes := []protocol.EventType{protocol.TypeAccepted, protocol.TypeStarted, protocol.TypeProviderOperationRetry, protocol.TypeProviderOperationRetry, protocol.TypeProviderUsageUncertain, protocol.TypeProviderOperationRetry}
	if !cmp.Equal(types, wantTypes) {
		t.Fatalf("events %q, want %q", types, wantTypes)
	}
	ops := find[protocol.ProviderOperationRetry](evs)
	four := 4
	want := []protocol.ProviderOperationRetry{
		{Operation: operationLocalCompaction, Attempt: 1, MaxAttempts: nil, DelayMS: 500},
		{Operation: operationLocalCompaction, Attempt: 1, MaxAttempts: &four, DelayMS: 250},
		{Operation: operationLocalCompaction, Attempt: 2, MaxAttempts: &four, DelayMS: 500},
	}
	for i := range ops {
		if ops[i].Error == "" || strings.Contains(ops[i].Error, "sk-test-secret-value") {
			t.Errorf("operation retry %d error %q", i, ops[i].Error)
		}
		ops[i].Error = ""
	}
	var gotOps []protocol.ProviderOperationRetry
	for _, o := range ops {
		gotOps = append(gotOps, *o)
	}
	if diff := cmp.Diff(want, gotOps); diff != "" {
		t.Errorf("provider_operation_retry (-want +got):\n%s", diff)
	}
	recs := d.p.sess.UsageUncertaintyRecords()
	if len(recs) != 1 || recs[0].Operation != operationLocalCompaction || recs[0].Model != d.p.model.ID {
		t.Errorf("usage_uncertainty records %+v, want one for %s", recs, operationLocalCompaction)
	}
	if len(find[protocol.ProviderRetry](evs))+len(find[protocol.ProviderWaitingForNetwork](evs)) != 0 {
		t.Error("an auxiliary operation was announced as the assistant turn's recovery")
	}
}

// TestAuxiliaryOperationExhausted: an auxiliary operation that keeps
// failing ends with retries_exhausted after the budget, each replacement
// announced with its operation.
func TestAuxiliaryOperationExhausted(t *testing.T) {
	f := newFixture(t)
	d := auxDriver(t, f)
	f.agent.SetMaxRetries(1)
	d.recovery = f.agent.recoveryConfig()
	_, err := recoverCall(context.Background(), d, operation[struct{}]{
		name: operationTerminalGate,
		call: func(context.Context) (struct{}, error) { return struct{}{}, pe("http_status", 500, true, false) },
	})
	var tf *modelcall.Failed
	if !errors.As(err, &tf) || tf.Code != recovery.CodeRetriesExhausted {
		t.Fatalf("err %v, want %s", err, recovery.CodeRetriesExhausted)
	}
	ops := find[protocol.ProviderOperationRetry](drained(d))
	if len(ops) != 1 || ops[0].Operation != operationTerminalGate || ops[0].MaxAttempts == nil || *ops[0].MaxAttempts != 1 {
		t.Errorf("provider_operation_retry %+v", ops)
	}
}

// TestUncertaintyWriteFailureEndsTheTurn: when the usage_uncertainty record
// cannot be written, the turn ends with session_write_failed — also when
// the failed attempt was the last of the budget, so the machine had
// already ended the turn and there is nothing left to abort.
func TestUncertaintyWriteFailureEndsTheTurn(t *testing.T) {
	for _, retries := range []int{0, 2} {
		t.Run(fmt.Sprintf("budget %d", retries), func(t *testing.T) {
			f := newFixture(t)
			f.agent.SetMaxRetries(retries)
			d := auxDriver(t, f)
			d.p.sess.Close() // every later append fails
			calls := 0
			_, err := recoverCall(context.Background(), d, operation[struct{}]{
				name: operationAssistantTurn,
				call: func(context.Context) (struct{}, error) {
					calls++
					return struct{}{}, pe("stream_cut", 0, true, true) // may have been billed
				},
			})
			var tf *modelcall.Failed
			if !errors.As(err, &tf) || tf.Code != protocol.CodeSessionWriteFailed {
				t.Fatalf("err %v, want %s", err, protocol.CodeSessionWriteFailed)
			}
			if calls != 1 {
				t.Errorf("%d attempts: an attempt was replaced although its uncertainty was not recorded", calls)
			}
			if len(find[protocol.ProviderRetry](drained(d))) != 0 {
				t.Error("provider_retry after the record failed")
			}
		})
	}
}

// TestAuxiliaryOperationCeiling: the network-wait ceiling bounds an
// auxiliary operation's recovery exactly as the assistant turn's (they
// share recoverCall): after the outage that armed it, the next attempt's
// request must open within what is left (2.5 s of 3 s, under a fake clock
// moved only by the 500 ms wait), and a Retry-After of 5 s that does not
// fit stops recovery with network_wait_exceeded instead of a retry.
func TestAuxiliaryOperationCeiling(t *testing.T) {
	f := newFixture(t)
	var clock time.Duration
	base := time.Unix(1_800_000_000, 0)
	f.agent.opts.Now = func() time.Time { return base.Add(clock) }
	f.agent.opts.Sleep = func(_ context.Context, d time.Duration) error { clock += d; return nil }
	f.agent.opts.Jitter = func() float64 { return 0 }
	limit := 3 * time.Second
	f.agent.SetMaxNetworkWait(&limit)
	d := auxDriver(t, f)
	var opens []time.Duration
	throttled := pe("http_status", 429, true, false)
	throttled.RetryAfter = 5 * time.Second
	failures := []error{pe("connect", 0, false, false), throttled}
	attempt := 0
	_, err := recoverCall(context.Background(), d, operation[struct{}]{
		name: operationTerminalGate,
		call: func(ctx context.Context) (struct{}, error) {
			opens = append(opens, provider.OpenTimeout(ctx))
			attempt++
			if attempt <= len(failures) {
				return struct{}{}, failures[attempt-1]
			}
			return struct{}{}, nil
		},
	})
	var tf *modelcall.Failed
	if !errors.As(err, &tf) || tf.Code != recovery.CodeNetworkWaitExceeded {
		t.Fatalf("err %v, want %s", err, recovery.CodeNetworkWaitExceeded)
	}
	if want := []time.Duration{0, 2500 * time.Millisecond}; !cmp.Equal(opens, want) {
		t.Errorf("opening bounds %v, want %v", opens, want)
	}
	ops := find[protocol.ProviderOperationRetry](drained(d))
	if len(ops) != 1 || ops[0].MaxAttempts != nil || ops[0].Operation != operationTerminalGate {
		t.Errorf("provider_operation_retry %+v, want the one network wait", ops)
	}
}
