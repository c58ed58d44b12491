package runtime

import (
	"os"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
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
