package engine

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/steer"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// TestUnsettledNativeSteeringBlocksLaterRuns: a session whose native
// steering intent was never settled (the process died after the record)
// blocks every later run before any provider I/O, reports its usage as
// uncertain, and replays nothing; a fork of it goes on.
func TestUnsettledNativeSteeringBlocksLaterRuns(t *testing.T) {
	f := newFixture(t, text("first"), text("forked"))
	req := f.req("q")
	req.SessionID = "steered"
	_, res := f.run(req)
	if res.Status != "completed" {
		t.Fatalf("first run %+v", res)
	}
	file := *res.SessionFile
	s, err := f.agent.OpenSession(f.sessions, "steered")
	if err != nil {
		t.Fatal(err)
	}
	if s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
		t.Fatal("clean session reports native steering")
	}
	// What RunControl.Steer writes before response.steer, and nothing
	// after it: the process died there.
	if err := s.s.Append(store.Record{Body: store.NativeSteering{IntentID: "ns-1", Event: store.NativeIntent, RunID: "run-1",
		PreviousResponseID: "resp_1", InputSHA256: strings.Repeat("ab", 32)}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = f.agent.OpenSession(f.sessions, "steered")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
		t.Fatalf("after the crash: unsettled %v uncertain %v", s.HasUnsettledNativeSteering(), s.HasUncertainUsage())
	}
	s.Close()

	before := len(f.prov.requests())
	for i, id := range []string{"run-2", "run-3"} {
		req := f.req("go on")
		req.RunID, req.SessionID = id, "steered"
		evs, res := f.run(req)
		if res.Status != protocol.StatusBlocked || res.Error == nil || res.Error.Code != protocol.CodeUnsettledNativeSteering ||
			!strings.Contains(res.Error.Message, "start a new session") {
			t.Fatalf("run %d: %+v", i, res)
		}
		if res.Steps != 0 || len(find[protocol.ModelStep](evs)) != 0 || len(find[protocol.ProviderUsageUncertain](evs)) != 1 {
			t.Errorf("run %d events %v", i, types(evs))
		}
	}
	if got := len(f.prov.requests()); got != before {
		t.Fatalf("blocked runs made %d provider requests", got-before)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"go on"`) {
		// The prompt of a blocked run never enters the conversation.
		t.Errorf("blocked prompt recorded:\n%s", data)
	}

	// A fork is the new session the message points to: it goes on.
	s, err = f.agent.OpenSession(f.sessions, "steered")
	if err != nil {
		t.Fatal(err)
	}
	fk, err := s.Fork("steered-2")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fk.HasUnsettledNativeSteering() || fk.HasUncertainUsage() {
		t.Error("the fork inherited the unsettled intent")
	}
	fk.Close()
	req = f.req("go on")
	req.RunID, req.SessionID = "run-4", "steered-2"
	if _, res := f.run(req); res.Status != "completed" || res.Output != "forked" {
		t.Fatalf("fork run %+v", res)
	}
}

// nativeRig is a started run's driver with native steering over a
// recording send.
type nativeRig struct {
	d     *driver
	n     *steer.Native
	sent  []string // "respID|text" of each response.steer sent
	fail  error    // the next send's error
	sessF string
}

func newNativeRig(t *testing.T, f *fixture) *nativeRig {
	t.Helper()
	r := &nativeRig{d: auxDriver(t, f)}
	r.d.rc.queue = steer.NewQueue()
	r.n = steer.NewNative(r.d, func(respID, text string, record func() error) error {
		if err := record(); err != nil {
			return err
		}
		r.sent = append(r.sent, respID+"|"+text)
		err := r.fail
		r.fail = nil
		return err
	})
	r.sessF = r.d.p.sess.Path()
	return r
}

// natives returns the session's native_steering records as "event/outcome".
func (r *nativeRig) natives() []string {
	var out []string
	for _, rec := range r.d.p.sess.Records() {
		if b, ok := rec.Body.(store.NativeSteering); ok {
			out = append(out, strings.TrimSuffix(b.Event+"/"+b.Outcome, "/"))
		}
	}
	return out
}

func TestNativeSteeringAccepted(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	id, err := r.n.Steer("resp_1", "use tabs")
	if err != nil {
		t.Fatal(err)
	}
	// The intent is durable before the steer leaves.
	if got := r.natives(); !slices.Equal(got, []string{"intent"}) || len(r.sent) != 1 || r.sent[0] != "resp_1|use tabs" {
		t.Fatalf("records %v sent %v", got, r.sent)
	}
	if !r.d.p.sess.HasUnsettledNativeSteering() || r.d.p.sess.HasUncertainUsage() {
		t.Fatal("in flight: must be unsettled, usage still certain")
	}
	must(t, r.n.On(id, steering.NTrAccepted, "steer_9", 0))
	if evs := find[protocol.SteeringDelivered](drained(r.d)); len(evs) != 0 {
		t.Fatalf("acceptance is not delivery: %+v", evs)
	}
	must(t, r.n.On(id, steering.NTrSuccessor, "resp_2", 2))
	evs := find[protocol.SteeringDelivered](drained(r.d))
	if len(evs) != 1 || *evs[0] != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeNative}) {
		t.Fatalf("steering_delivered %+v", evs)
	}
	must(t, r.n.On(id, steering.NTrUsage, "", 0))
	if got := r.natives(); !slices.Equal(got, []string{"intent", "accepted", "linked", "settled/delivered"}) {
		t.Fatalf("records %v", got)
	}
	if r.d.p.sess.HasUnsettledNativeSteering() || r.d.p.sess.HasUncertainUsage() {
		t.Fatal("settled intent still unsettled")
	}
	// The input is in the conversation once, as steering.
	n := 0
	for _, m := range r.d.p.sess.Messages() {
		if m.Text == "use tabs" {
			n++
		}
	}
	if n != 1 || len(r.sent) != 1 {
		t.Fatalf("input in the conversation %d times, sent %d times", n, len(r.sent))
	}
	// The steered intent settles once: nothing more is accepted.
	if err := r.n.On(id, steering.NTrFailed, "", 0); err == nil {
		t.Fatal("failed accepted after delivery")
	}
}

func TestNativeSteeringPending(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	id, err := r.n.Steer("resp_1", "also lint")
	must(t, err)
	must(t, r.n.On(id, steering.NTrPending, "", 0))
	must(t, r.n.On(id, steering.NTrSendCreate, "", 0))
	if err := r.n.On(id, steering.NTrSendCreate, "", 0); err == nil {
		t.Fatal("a second response.create was allowed")
	}
	must(t, r.n.On(id, steering.NTrSuccessor, "resp_2", 3))
	must(t, r.n.On(id, steering.NTrUsage, "", 0))
	if len(r.sent) != 1 {
		t.Fatalf("the steer input was sent %d times", len(r.sent))
	}
	if got := r.natives(); !slices.Equal(got, []string{"intent", "linked", "settled/delivered"}) {
		t.Fatalf("records %v", got)
	}
}

func TestNativeSteeringFailedGoesToQueueOnce(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	id, err := r.n.Steer("resp_1", "retry me")
	must(t, err)
	must(t, r.n.On(id, steering.NTrAccepted, "steer_1", 0))
	must(t, r.n.On(id, steering.NTrFailed, "", 0))
	if got := r.natives(); !slices.Equal(got, []string{"intent", "accepted", "settled/failed"}) {
		t.Fatalf("records %v", got)
	}
	if r.d.p.sess.HasUnsettledNativeSteering() || r.d.p.sess.HasUncertainUsage() {
		t.Fatal("a failed intent is settled")
	}
	// The ordinary queue delivers it at the next boundary, once.
	out := r.d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn})
	if len(out.deliver) != 1 || out.deliver[0] != (QueuedMessage{Kind: KindSteering, Text: "retry me"}) {
		t.Fatalf("queued delivery %+v", out)
	}
	if out = r.d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn}); len(out.deliver) != 0 {
		t.Fatalf("delivered twice: %+v", out)
	}
	if err := r.n.On(id, steering.NTrSuccessor, "resp_2", 2); err == nil {
		t.Fatal("a failed intent was linked")
	}
}

func TestNativeSteeringFailedAfterRunEndIsUndelivered(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	id, err := r.n.Steer("resp_1", "late")
	must(t, err)
	r.d.rc.closeSteering()
	must(t, r.n.On(id, steering.NTrFailed, "", 0))
	if got := r.d.rc.Undelivered(); len(got) != 1 || got[0].Text != "late" {
		t.Fatalf("undelivered %+v", got)
	}
}

func TestNativeSteeringLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(r *nativeRig) error
	}{
		{"send fails", func(r *nativeRig) error {
			r.fail = errors.New("connection reset")
			_, err := r.n.Steer("resp_1", "x")
			return err
		}},
		{"disconnect after dispatch", func(r *nativeRig) error {
			id, err := r.n.Steer("resp_1", "x")
			if err != nil {
				return err
			}
			return r.n.On(id, steering.NTrLost, "", 0)
		}},
		{"no acknowledgement by the run's end", func(r *nativeRig) error {
			if _, err := r.n.Steer("resp_1", "x"); err != nil {
				return err
			}
			r.n.Close()
			return errNativeUnknown
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			r := newNativeRig(t, f)
			if err := tc.run(r); !errors.Is(err, errNativeUnknown) {
				t.Fatalf("err %v", err)
			}
			s := r.d.p.sess
			if !r.n.Blocked || !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
				t.Fatalf("blocked %v unsettled %v uncertain %v", r.n.Blocked, s.HasUnsettledNativeSteering(), s.HasUncertainUsage())
			}
			if len(find[protocol.ProviderUsageUncertain](drained(r.d))) != 1 {
				t.Error("no provider_usage_uncertain")
			}
			if got := r.natives(); !slices.Equal(got, []string{"intent", "unknown"}) {
				t.Errorf("records %v", got)
			}
			// Nothing was requeued or replayed.
			if out := r.d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn}); len(out.deliver) != 0 || len(r.sent) != 1 {
				t.Errorf("replayed: %+v, sent %v", out, r.sent)
			}
			if d := r.d.unsettledNativeSteering(); d == nil || d.Code != protocol.CodeUnsettledNativeSteering {
				t.Errorf("later run check %+v", d)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The gate: a steer that comes while the run goroutine handles an event
// waits in the mailbox and goes out, in order, when the window opens; one
// that comes while the window is open goes out at once; what the mailbox
// holds when the call ends, and every steer when the call cannot take it,
// goes to the ordinary queue. Nothing under the gate emits an event.
func TestNativeGate(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	rc := r.d.rc
	g := steer.NewGate(rcQueue{rc})
	g.Attach(r.n)
	rc.native = g
	r.d.native = r.n
	r.n.Live, r.n.Allow = "resp_1", true

	must(t, rc.Steer("queued before any call"))
	g.Begin(nil)
	must(t, rc.Steer("a"))
	must(t, rc.Steer("b"))
	if len(r.sent) != 0 {
		t.Fatalf("sent with the window shut: %v", r.sent)
	}
	g.Open()
	if !slices.Equal(r.sent, []string{"resp_1|a", "resp_1|b"}) {
		t.Fatalf("mailbox dispatch %v", r.sent)
	}
	must(t, rc.Steer("c"))
	if len(r.sent) != 3 || r.sent[2] != "resp_1|c" {
		t.Fatalf("window dispatch %v", r.sent)
	}
	// A send that fails under the gate: unknown, announced after the
	// window shuts.
	drained(r.d)
	r.fail = errors.New("connection reset")
	must(t, rc.Steer("d"))
	if len(drained(r.d)) != 0 {
		t.Fatal("an event was emitted under the gate")
	}
	g.Shut()
	if len(find[protocol.ProviderUsageUncertain](drained(r.d))) != 1 || !r.n.Blocked {
		t.Fatal("the unknown outcome was not announced")
	}
	must(t, rc.Steer("e")) // blocked: the call takes no more
	g.End()
	must(t, rc.Steer("f")) // no call streams
	out := rc.boundary(steering.Input{Trigger: steering.TrAfterTurn})
	var got []string
	for _, m := range out.deliver {
		got = append(got, m.Text)
	}
	if !slices.Equal(got, []string{"queued before any call", "e", "f"}) {
		t.Fatalf("queued %v", got)
	}
	if got := r.natives(); !slices.Equal(got, []string{"intent", "intent", "intent", "intent", "unknown"}) {
		t.Fatalf("records %v", got)
	}
	g.Close()
	rc.closeSteering()
	if err := rc.Steer("late"); !errors.Is(err, ErrRunEnded) {
		t.Fatalf("Steer after the end: %v", err)
	}
}

// A steer the stream no longer takes (its response ended) is queued, with
// no intent recorded.
func TestNativeGateNotSteerable(t *testing.T) {
	f := newFixture(t)
	r := newNativeRig(t, f)
	rc := r.d.rc
	r.n = steer.NewNative(r.d, func(string, string, func() error) error { return provider.ErrNotSteerable })
	g := steer.NewGate(rcQueue{rc})
	g.Attach(r.n)
	rc.native = g
	r.n.Live, r.n.Allow = "resp_1", true
	g.Begin(nil)
	g.Open()
	must(t, rc.Steer("x"))
	g.Shut()
	g.End()
	if out := rc.boundary(steering.Input{Trigger: steering.TrAfterTurn}); len(out.deliver) != 1 || out.deliver[0].Text != "x" {
		t.Fatalf("queued %+v", out)
	}
	if got := r.natives(); len(got) != 0 {
		t.Fatalf("records %v", got)
	}
}
