package store

import (
	"testing"
)

func TestNativeSteeringRecords(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "n1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
		t.Fatal("a new session has native steering")
	}
	app := func(b NativeSteering) {
		t.Helper()
		if err := s.Append(Record{Body: b}); err != nil {
			t.Fatal(err)
		}
	}
	// A settled intent: delivered.
	app(NativeSteering{IntentID: "a", Event: NativeIntent, RunID: "r1", PreviousResponseID: "resp_1", InputSHA256: "00"})
	if !s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
		t.Fatalf("in flight: unsettled %v uncertain %v", s.HasUnsettledNativeSteering(), s.HasUncertainUsage())
	}
	app(NativeSteering{IntentID: "a", Event: NativeAccepted, SteerID: "steer_1"})
	app(NativeSteering{IntentID: "a", Event: NativeLinked, ResponseID: "resp_2", Step: 2})
	app(NativeSteering{IntentID: "a", Event: NativeSettled, Outcome: NativeOutcomeDelivered})
	if s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
		t.Fatal("settled intent still unsettled")
	}
	// One marked unknown in this process.
	app(NativeSteering{IntentID: "b", Event: NativeIntent, RunID: "r2"})
	app(NativeSteering{IntentID: "b", Event: NativeUnknown})
	if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
		t.Fatal("unknown intent: not unsettled and uncertain")
	}
	// One left open when the process went away.
	app(NativeSteering{IntentID: "c", Event: NativeIntent, RunID: "r3"})
	if got := s.UnknownNativeSteering(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("unknown %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, "n1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.UnknownNativeSteering(); len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Fatalf("after reload unknown %v", got)
	}
	if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
		t.Fatal("after reload: not unsettled and uncertain")
	}
	if n := s.UnknownRecords(); n != 0 {
		t.Fatalf("%d unknown records", n)
	}
	// A fork starts clean: native steering records are not copied.
	f, err := s.Fork("n2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.HasUnsettledNativeSteering() || f.HasUncertainUsage() {
		t.Fatal("fork inherited unsettled native steering")
	}
}
