package spec_test

import (
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

// Run event builders.
var (
	acc   = spec.RunEvent{Type: protocol.TypeAccepted}
	start = spec.RunEvent{Type: protocol.TypeStarted}
	delta = spec.RunEvent{Type: "model_delta"}
	tool  = spec.RunEvent{Type: "tool_finish"}
	rej   = fin(protocol.StatusError)
)

func settled(status string) spec.RunEvent {
	return spec.RunEvent{Type: protocol.TypeSettled, Status: status}
}

func fin(status string) spec.RunEvent {
	return spec.RunEvent{Type: protocol.TypeFinalResult, Status: status}
}

var runPredicates = []predicate[spec.RunEvent]{
	{spec.NameRunTypeOK, spec.RunTypeOK},
	{spec.NameAcceptedFirst, spec.AcceptedFirst},
	{spec.NameStartedBeforeStream, spec.StartedBeforeStream},
	{spec.NameSettledBeforeFinal, spec.SettledBeforeFinal},
	{spec.NameExactlyOneFinal, spec.ExactlyOneFinal},
	{spec.NameRejectedHasNoAccepted, spec.RejectedHasNoAccepted},
	{spec.NameRunComplete, spec.RunComplete},
}

// Every run transcript runs through every run predicate: want maps the
// predicates that must fail to the index of the event they must blame; all
// others must hold.
var runTranscripts = []struct {
	name   string
	events []spec.RunEvent
	want   map[string]int
}{
	{"empty", nil, map[string]int{spec.NameRunComplete: 0}},
	{"rejected", []spec.RunEvent{rej}, nil},
	{"completed", []spec.RunEvent{acc, start, delta, tool, delta, settled("completed"), fin("completed")}, nil},
	{"blocked", []spec.RunEvent{acc, start, delta, settled("blocked"), fin("blocked")}, nil},
	// A terminal gate's rejections and its call's recovery are streaming
	// events; the run goes on, or ends blocked when they run out.
	{"gate rejections", []spec.RunEvent{acc, start, delta, {Type: protocol.TypeProviderOperationRetry}, {Type: protocol.TypeCandidateRejected}, delta,
		{Type: protocol.TypeCandidateRejected}, settled("blocked"), fin("blocked")}, nil},
	{"candidate_rejected after settled", []spec.RunEvent{acc, start, delta, settled("completed"), {Type: protocol.TypeCandidateRejected}, fin("completed")},
		map[string]int{spec.NameStartedBeforeStream: 4}},
	{"error before started", []spec.RunEvent{acc, settled("error"), fin("error")}, nil},
	{"error before any stream event", []spec.RunEvent{acc, start, settled("error"), fin("error")}, nil},
	{"in flight (a prefix)", []spec.RunEvent{acc, start, delta}, map[string]int{spec.NameRunComplete: 3}},
	{"settled, not yet final", []spec.RunEvent{acc, start, settled("completed")}, map[string]int{spec.NameRunComplete: 3}},

	{"unknown type", []spec.RunEvent{acc, start, {Type: "hello"}}, map[string]int{
		spec.NameRunTypeOK: 2, spec.NameRunComplete: 3,
	}},
	{"settled without status", []spec.RunEvent{acc, settled(""), fin("")}, map[string]int{spec.NameRunTypeOK: 1}},
	{"bad final status", []spec.RunEvent{acc, settled("done"), fin("done")}, map[string]int{spec.NameRunTypeOK: 1}},
	{"status on a stream event", []spec.RunEvent{acc, start, {Type: "model_delta", Status: "completed"}}, map[string]int{
		spec.NameRunTypeOK: 2, spec.NameRunComplete: 3,
	}},

	{"starts with started", []spec.RunEvent{start, delta}, map[string]int{
		spec.NameAcceptedFirst: 0, spec.NameStartedBeforeStream: 0, spec.NameRunComplete: 2,
	}},
	{"accepted twice", []spec.RunEvent{acc, acc}, map[string]int{spec.NameAcceptedFirst: 1, spec.NameRunComplete: 2}},
	{"rejection says blocked", []spec.RunEvent{fin("blocked")}, map[string]int{spec.NameAcceptedFirst: 0}},
	{"accepted after a rejection", []spec.RunEvent{rej, acc}, map[string]int{
		spec.NameAcceptedFirst: 1, spec.NameExactlyOneFinal: 1, spec.NameRunComplete: 2,
	}},
	{"settled first", []spec.RunEvent{settled("error"), fin("error")}, map[string]int{spec.NameAcceptedFirst: 0}},

	{"stream before started", []spec.RunEvent{acc, delta}, map[string]int{
		spec.NameStartedBeforeStream: 1, spec.NameRunComplete: 2,
	}},
	{"stream after settled", []spec.RunEvent{acc, start, settled("completed"), tool, fin("completed")}, map[string]int{
		spec.NameStartedBeforeStream: 3,
	}},
	{"started twice", []spec.RunEvent{acc, start, delta, start}, map[string]int{
		spec.NameStartedBeforeStream: 3, spec.NameRunComplete: 4,
	}},
	{"started after settled", []spec.RunEvent{acc, settled("error"), start}, map[string]int{
		spec.NameStartedBeforeStream: 2, spec.NameRunComplete: 3,
	}},

	{"final without settled", []spec.RunEvent{acc, start, delta, fin("completed")}, map[string]int{
		spec.NameSettledBeforeFinal: 3, spec.NameRejectedHasNoAccepted: 3,
	}},
	{"settled status differs from final", []spec.RunEvent{acc, start, settled("blocked"), fin("completed")}, map[string]int{
		spec.NameSettledBeforeFinal: 3,
	}},
	{"settled twice", []spec.RunEvent{acc, settled("error"), settled("error"), fin("error")}, map[string]int{
		spec.NameSettledBeforeFinal: 2,
	}},

	{"second final", []spec.RunEvent{acc, settled("completed"), fin("completed"), fin("completed")}, map[string]int{
		spec.NameExactlyOneFinal: 3,
	}},
	{"stream after final", []spec.RunEvent{acc, start, settled("completed"), fin("completed"), delta}, map[string]int{
		spec.NameStartedBeforeStream: 4, spec.NameExactlyOneFinal: 4, spec.NameRunComplete: 5,
	}},
	{"rejected twice", []spec.RunEvent{rej, rej}, map[string]int{spec.NameExactlyOneFinal: 1}},

	{"rejected after accepted", []spec.RunEvent{acc, rej}, map[string]int{
		spec.NameSettledBeforeFinal: 1, spec.NameRejectedHasNoAccepted: 1,
	}},
}

func TestRunPredicates(t *testing.T) {
	for _, tt := range runTranscripts {
		for _, p := range runPredicates {
			checkVerdict(t, tt.name, p.name, "event", p.check(tt.events), tt.want)
		}
	}
}

// RunLifecycle joins exactly the prefix-closed predicates.
func TestRunLifecycleJoins(t *testing.T) {
	for _, tt := range runTranscripts {
		err := spec.RunLifecycle(tt.events)
		for _, p := range runPredicates {
			if p.name == spec.NameRunComplete {
				if err != nil && strings.Contains(err.Error(), p.name) {
					t.Errorf("%s: RunLifecycle reports %s: %v", tt.name, p.name, err)
				}
				continue
			}
			checkMentions(t, tt.name, "RunLifecycle", p.name, err, tt.want)
		}
	}
}

// runAlphabet is every kind of event that matters to the predicates, and a
// few that must be refused.
func runAlphabet() []spec.RunEvent {
	out := []spec.RunEvent{acc, start, delta, tool, {Type: "hello"}, settled("")}
	for _, s := range protocol.Statuses() {
		out = append(out, settled(s), fin(s))
	}
	return out
}

// Every run predicate is prefix-closed: checked on every transcript of up
// to 5 events over runAlphabet.
func TestRunPrefixClosed(t *testing.T) {
	alpha := runAlphabet()
	checked := checkPrefixClosed(t, alpha, runPredicates, func(name string) bool { return name == spec.NameRunComplete })
	t.Logf("%d (predicate, transcript) pairs that hold, prefixes checked", checked)
}

func TestStreamingTypes(t *testing.T) {
	types := protocol.StreamingTypes()
	if len(types) != 18 {
		t.Errorf("StreamingTypes: %d types, CONTRACT §9 lists 18", len(types))
	}
	for _, typ := range types {
		if !spec.IsStreaming(typ) {
			t.Errorf("IsStreaming(%q) is false", typ)
		}
		if err := spec.RunTypeOK([]spec.RunEvent{{Type: typ}}); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	for _, typ := range []protocol.EventType{protocol.TypeAccepted, protocol.TypeStarted, protocol.TypeSettled, protocol.TypeFinalResult, "protocol_error", ""} {
		if spec.IsStreaming(typ) {
			t.Errorf("IsStreaming(%q) is true", typ)
		}
	}
	types[0] = "changed"
	if protocol.StreamingTypes()[0] == "changed" {
		t.Error("StreamingTypes returns the package's own slice")
	}
}

func TestRunViolationMessage(t *testing.T) {
	err := spec.SettledBeforeFinal([]spec.RunEvent{acc, settled("blocked"), fin("completed")})
	const want = `spec: SettledBeforeFinal violated at frame 2: final_result status "completed", settled at event 1 announced "blocked"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
