package steer

import (
	"errors"
	"slices"
	"testing"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// streaming returns a run's native steering with a steerable call
// streaming the live response resp_1, the gate's window open.
func streaming(t *testing.T) (*fakeEnv, *Native, *Gate, *fakeStream) {
	t.Helper()
	env := &fakeEnv{}
	n := NewNative(env, nil)
	g := NewGate(env)
	g.Attach(n)
	s := &fakeStream{}
	g.Begin(s)
	n.Allow = true
	must(t, n.Created("resp_1", 1))
	g.Open()
	return env, n, g, s
}

func take(t *testing.T, g *Gate, text string) {
	t.Helper()
	taken, err := g.Take(text)
	if !taken || err != nil {
		t.Fatalf("Take(%q): %v %v", text, taken, err)
	}
}

// A steer the server accepts and answers with a successor after the call:
// the intent is durable before the frame, linked to the next step, and
// settled once that step's usage is recorded.
func TestNativeSuccessor(t *testing.T) {
	env, n, g, s := streaming(t)
	take(t, g, "use tabs")
	if !slices.Equal(s.steered, []string{"resp_1|use tabs"}) || !slices.Equal(env.natives(), []string{"intent"}) {
		t.Fatalf("sent %v records %v", s.steered, env.natives())
	}
	if !n.Unresolved() || !n.InFlight() {
		t.Fatal("a dispatched steer is unresolved")
	}
	g.Shut()
	must(t, n.OnEvent(provider.StreamEvent{Kind: provider.EventSteerAccepted, ID: "steer_1"}))
	g.End()
	if len(env.events) != 0 {
		t.Fatalf("acceptance is not delivery: %v", env.events)
	}
	follow := &fakeStream{evs: []provider.StreamEvent{{Kind: provider.EventResponseCreated, ID: "resp_2"}, {Kind: provider.EventText, Text: "ok"}}}
	n.Follow = follow
	successor, err := n.Await(1, false)
	if !successor || err != nil || n.Next != follow || n.Follow != nil || n.Live != "resp_2" || follow.closed {
		t.Fatalf("await: %v %v, next %v, live %q", successor, err, n.Next, n.Live)
	}
	if got := n.TakeLinked(); len(got) != 1 || got[0].Role != provider.RoleUser || got[0].Text != "use tabs" || n.TakeLinked() != nil {
		t.Fatalf("linked %+v", got)
	}
	if !slices.Equal(env.events, []protocol.EventType{protocol.TypeSteeringDelivered}) ||
		*env.data[0].(*protocol.SteeringDelivered) != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeNative}) {
		t.Fatalf("events %v %+v", env.events, env.data)
	}
	must(t, n.Accounted(1)) // not its step
	if n.InPhase(steering.NDelivered) || !n.InPhase(steering.NLinked) {
		t.Fatal("settled by another step's usage")
	}
	must(t, n.Accounted(2))
	if got := env.natives(); !slices.Equal(got, []string{"intent", "accepted", "linked", "settled/delivered"}) {
		t.Fatalf("records %v", got)
	}
	if got := env.messages(); !slices.Equal(got, []string{"steering:user:use tabs"}) {
		t.Fatalf("messages %v", got)
	}
	if n.InFlight() || n.Blocked || env.uncertain != 0 {
		t.Fatal("a delivered steer is settled")
	}
}

// A steer pending on a response that made tool calls: the next request is
// the one response.create continuing resp_1; its response.created is the
// successor.
func TestNativePending(t *testing.T) {
	env, n, g, _ := streaming(t)
	take(t, g, "also lint")
	must(t, n.OnEvent(provider.StreamEvent{Kind: provider.EventSteerPending}))
	g.Shut()
	g.End()
	if successor, err := n.Await(1, true); successor || err != nil {
		t.Fatalf("await: %v %v", successor, err)
	}
	if n.Cont != "" {
		t.Fatal("continued before the tools ran")
	}
	must(t, n.ToolsDone())
	if n.Cont != "resp_1" {
		t.Fatalf("cont %q", n.Cont)
	}
	must(t, n.Created("resp_2", 2))
	must(t, n.Accounted(2))
	if got := env.natives(); !slices.Equal(got, []string{"intent", "linked", "settled/delivered"}) {
		t.Fatalf("records %v", got)
	}
}

// A pending notice for a response without tool calls breaks the protocol:
// the outcome is unknown.
func TestNativePendingWithoutCalls(t *testing.T) {
	env, n, g, _ := streaming(t)
	take(t, g, "x")
	must(t, n.OnEvent(provider.StreamEvent{Kind: provider.EventSteerPending}))
	g.Shut()
	g.End()
	if _, err := n.Await(1, false); !errors.Is(err, ErrUnknown) || !n.Blocked || env.uncertain != 1 {
		t.Fatalf("await: %v, blocked %v, uncertain %d", err, n.Blocked, env.uncertain)
	}
}

// A failed steer goes back to the ordinary queue, once, and settles.
func TestNativeFailedRequeued(t *testing.T) {
	env, n, g, _ := streaming(t)
	take(t, g, "retry me")
	must(t, n.OnEvent(provider.StreamEvent{Kind: provider.EventSteerFailed}))
	must(t, n.OnEvent(provider.StreamEvent{Kind: provider.EventSteerFailed})) // no intent waits for it
	if !slices.Equal(env.requeued, []string{"retry me"}) || !slices.Equal(env.natives(), []string{"intent", "settled/failed"}) {
		t.Fatalf("requeued %v records %v", env.requeued, env.natives())
	}
	if err := n.On(n.intents[0].id, steering.NTrSuccessor, "resp_2", 2); err == nil {
		t.Fatal("a failed intent was linked")
	}
	if err := n.On("nope", steering.NTrUsage, "", 0); err == nil {
		t.Fatal("an unknown intent id was accepted")
	}
}

// A send that fails under the gate leaves the outcome unknown: the run is
// blocked, and the uncertainty is announced only once the window shuts.
func TestNativeLostUnderGate(t *testing.T) {
	env, n, g, s := streaming(t)
	s.steerErr = errReset
	take(t, g, "x")
	if !n.Blocked || env.uncertain != 0 {
		t.Fatalf("blocked %v, announced %d under the gate", n.Blocked, env.uncertain)
	}
	g.Shut()
	if env.uncertain != 1 || !slices.Equal(env.natives(), []string{"intent", "unknown"}) {
		t.Fatalf("uncertain %d records %v", env.uncertain, env.natives())
	}
	// Blocked: the call takes no more steers; they go to the queue.
	g.Open()
	if taken, err := g.Take("y"); taken || err != nil {
		t.Fatalf("take while blocked: %v %v", taken, err)
	}
	if len(s.steered) != 1 {
		t.Fatalf("sent %v", s.steered)
	}
}

// The intent record cannot be written: nothing is sent, and the error
// says so.
func TestNativeRecordFails(t *testing.T) {
	env, n, g, s := streaming(t)
	env.fail = errReset
	taken, err := g.Take("x")
	if !taken || !errors.Is(err, errReset) || len(s.steered) != 0 || n.InFlight() {
		t.Fatalf("take: %v %v, sent %v", taken, err, s.steered)
	}
}

// While the window is shut a steer waits in the mailbox; it goes out, in
// order, when the window opens; what is left when the call ends, and what
// the stream no longer takes, goes to the queue.
func TestGateMailbox(t *testing.T) {
	env, n, g, s := streaming(t)
	g.Shut()
	take(t, g, "a")
	take(t, g, "b")
	if len(s.steered) != 0 {
		t.Fatalf("sent with the window shut: %v", s.steered)
	}
	g.Open()
	if !slices.Equal(s.steered, []string{"resp_1|a", "resp_1|b"}) {
		t.Fatalf("mailbox %v", s.steered)
	}
	g.Shut()
	take(t, g, "c")
	s.steerErr = provider.ErrNotSteerable
	g.Open() // c: the stream's response ended
	g.Shut()
	take(t, g, "d")
	g.End() // d: the call ended first
	if taken, _ := g.Take("e"); taken {
		t.Fatal("taken with no call streaming")
	}
	if !slices.Equal(env.requeued, []string{"c", "d"}) || len(env.natives()) != 2 {
		t.Fatalf("requeued %v records %v", env.requeued, env.natives())
	}
	// The run ends: both intents are still without an outcome.
	status, errInfo := End(g, n, fsmrun.StatusCompleted, nil)
	if status != fsmrun.StatusBlocked || errInfo == nil || errInfo.Code != protocol.CodeUnsettledNativeSteering || errInfo.Message != UnknownMessage {
		t.Fatalf("end: %s %+v", status, errInfo)
	}
	if taken, _ := g.Take("late"); taken {
		t.Fatal("taken after the end")
	}
	// Each unknown outcome marks the run's usage uncertain (the driver
	// announces it once).
	if env.uncertain != 2 || !slices.Equal(env.natives(), []string{"intent", "intent", "unknown", "unknown"}) {
		t.Fatalf("uncertain %d records %v", env.uncertain, env.natives())
	}
}

func TestNativeAwaitBroken(t *testing.T) {
	for name, follow := range map[string]*fakeStream{
		"content first":        {evs: []provider.StreamEvent{{Kind: provider.EventText, Text: "hi"}}},
		"connection lost":      {err: errReset},
		"successor to calls":   {evs: []provider.StreamEvent{{Kind: provider.EventResponseCreated, ID: "resp_2"}}},
		"ends without outcome": {},
	} {
		t.Run(name, func(t *testing.T) {
			env, n, g, _ := streaming(t)
			take(t, g, "x")
			g.Shut()
			g.End()
			n.Follow = follow
			if _, err := n.Await(1, name == "successor to calls"); !errors.Is(err, ErrUnknown) || !follow.closed || !n.Blocked {
				t.Fatalf("await %v, closed %v", err, follow.closed)
			}
			if !slices.Equal(env.natives(), []string{"intent", "unknown"}) || env.uncertain != 1 {
				t.Fatalf("records %v uncertain %d", env.natives(), env.uncertain)
			}
		})
	}
}

func TestNativeAbort(t *testing.T) {
	env, n, g, _ := streaming(t)
	own := &modelcall.Failed{Code: protocol.CodeSessionWriteFailed}
	if tf, stop := n.Abort(own); tf != own || !stop {
		t.Fatal("the host's own failure is returned as it is")
	}
	if _, stop := n.Abort(errReset); stop {
		t.Fatal("nothing in flight: recovery decides")
	}
	take(t, g, "x")
	g.Shut()
	tf, stop := n.Abort(errReset)
	if !stop || tf.Code != protocol.CodeUnsettledNativeSteering || !n.Blocked || env.uncertain != 1 {
		t.Fatalf("in flight: %+v %v", tf, stop)
	}
	// End keeps a failure the run already has.
	failed := &protocol.ErrorData{Code: protocol.CodeProviderError}
	if status, errInfo := End(g, n, fsmrun.StatusError, failed); status != fsmrun.StatusError || errInfo != failed {
		t.Fatalf("end: %s %+v", status, errInfo)
	}
}

type intents struct {
	open    bool
	unknown []string
}

func (i intents) HasUnsettledNativeSteering() bool { return i.open }
func (i intents) UnknownNativeSteering() []string  { return i.unknown }

func TestUnsettled(t *testing.T) {
	if e := Unsettled(intents{}); e != nil {
		t.Fatalf("clean session: %+v", e)
	}
	for _, s := range []intents{{open: true}, {open: true, unknown: []string{"run-1-ns1"}}} {
		if e := Unsettled(s); e == nil || e.Code != protocol.CodeUnsettledNativeSteering || e.Message != UnsettledMessage {
			t.Fatalf("%+v: %+v", s, e)
		}
	}
}
