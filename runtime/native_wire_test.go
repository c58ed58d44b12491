package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// Native steering end to end: a route qualified for it
// (openai-responses over WebSocket, "native_steering": true) steers the
// live response through the fake's loopback socket; the frames the fake
// received and the session's records are the evidence.

// nativeRig is an agent on a fake WebSocket route.
type nativeRig struct {
	fake  *fakeprovider.Server
	agent *runtime.Agent
	home  string
	ws    string
}

// qualified is the model entry's members of a route qualified for native
// steering.
const qualified = `,"native_steering":true`

// newNativeRig starts a fake with turns and an agent whose catalog has the
// route "lab-model", an openai-responses provider over WebSocket; model
// are more members of its model entry (qualified: native steering).
func newNativeRig(t *testing.T, turns []fakeprovider.Turn, model string, opts func(*runtime.Options)) *nativeRig {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	r := &nativeRig{fake: fake, home: t.TempDir(), ws: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(r.home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{"providers":{"lab":{"base_url":"` + fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses","transport":"websocket",` +
		`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096` + model + `}]}}}`
	if err := os.WriteFile(filepath.Join(r.home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	o := runtime.Options{Home: r.home, Getenv: func(string) string { return "" }, Sleep: func(context.Context, time.Duration) error { return nil }}
	if opts != nil {
		opts(&o)
	}
	if r.agent, err = runtime.New(o); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *nativeRig) req(runID, prompt string, tools []string) runtime.RunRequest {
	return runtime.RunRequest{RunID: runID, Workspace: r.ws, Model: "lab-model", Prompt: prompt, Tools: tools,
		SessionDir: filepath.Join(r.home, "sessions"), SessionID: "steered"}
}

// run runs req and calls Steer(text) once, at the first text delta.
func (r *nativeRig) run(t *testing.T, req runtime.RunRequest, text string) ([]runtime.Event, protocol.FinalResult, *runtime.RunControl) {
	t.Helper()
	rc, err := r.agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
		if d, ok := ev.Data.(*protocol.ModelDelta); ok && text != "" && d.Channel == protocol.ChannelText {
			if err := rc.Steer(text); err != nil {
				t.Errorf("Steer: %v", err)
			}
			text = ""
		}
	}
	return evs, rc.Wait(), rc
}

// runSteering runs req and calls Steer(steers[step]) at the first text
// delta of each step steers names; steers is left holding the steps that
// had no text delta.
func (r *nativeRig) runSteering(t *testing.T, req runtime.RunRequest, steers map[int]string) ([]runtime.Event, protocol.FinalResult) {
	t.Helper()
	rc, err := r.agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
		if d, ok := ev.Data.(*protocol.ModelDelta); ok && d.Channel == protocol.ChannelText && steers[d.Step] != "" {
			if err := rc.Steer(steers[d.Step]); err != nil {
				t.Errorf("Steer: %v", err)
			}
			delete(steers, d.Step)
		}
	}
	return evs, rc.Wait()
}

// frameTypes returns the types of the messages the fake received, in order.
func (r *nativeRig) frameTypes() []string {
	var types []string
	for _, f := range r.frames() {
		types = append(types, f["type"].(string))
	}
	return types
}

// frames returns the messages the fake received, in order.
func (r *nativeRig) frames() []map[string]any {
	var out []map[string]any
	for _, q := range r.fake.Requests() {
		if q.Method == fakeprovider.MethodMessage {
			out = append(out, q.Body)
		}
	}
	return out
}

// handshakes counts the sockets opened.
func (r *nativeRig) handshakes() int {
	n := 0
	for _, q := range r.fake.Requests() {
		if q.WebSocket > 0 && q.Method != fakeprovider.MethodMessage {
			n++
		}
	}
	return n
}

// records returns the session's native_steering records as "event" or
// "event/outcome", and its message records as "role[origin]:text".
func (r *nativeRig) records(t *testing.T, file string) (natives, messages []string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Type    string `json:"type"`
			Event   string `json:"event"`
			Outcome string `json:"outcome"`
			Origin  string `json:"origin"`
			Message struct {
				Role       string `json:"role"`
				Text       string `json:"text"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case "native_steering":
			natives = append(natives, strings.TrimSuffix(rec.Event+"/"+rec.Outcome, "/"))
		case "message":
			m := rec.Message.Role
			if rec.Origin != "" {
				m += "[" + rec.Origin + "]"
			}
			messages = append(messages, m+":"+rec.Message.Text)
		}
	}
	return natives, messages
}

// nativeIntent is one intent's native_steering records.
type nativeIntent struct {
	id     string
	events []string // "event" or "event/outcome", in file order
	steers string   // the intent's previous_response_id
	linked string   // the successor's response id
	step   int      // the step it was linked to
}

// nativeIntents returns the session's intents in the order of their intent
// records.
func nativeIntents(t *testing.T, file string) []*nativeIntent {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nativeIntent
	for line := range strings.Lines(string(data)) {
		var rec struct {
			Type               string `json:"type"`
			IntentID           string `json:"intent_id"`
			Event              string `json:"event"`
			Outcome            string `json:"outcome"`
			PreviousResponseID string `json:"previous_response_id"`
			ResponseID         string `json:"response_id"`
			Step               int    `json:"step"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Type != "native_steering" {
			continue
		}
		i := slices.IndexFunc(out, func(it *nativeIntent) bool { return it.id == rec.IntentID })
		if i < 0 {
			i = len(out)
			out = append(out, &nativeIntent{id: rec.IntentID})
		}
		it := out[i]
		it.events = append(it.events, strings.TrimSuffix(rec.Event+"/"+rec.Outcome, "/"))
		switch rec.Event {
		case "intent":
			it.steers = rec.PreviousResponseID
		case "linked":
			it.linked, it.step = rec.ResponseID, rec.Step
		}
	}
	return out
}

func events[T any](evs []runtime.Event) []*T {
	var out []*T
	for _, ev := range evs {
		if d, ok := any(ev.Data).(*T); ok {
			out = append(out, d)
		}
	}
	return out
}

// count returns how many times s occurs in the JSON of the frames.
func count(t *testing.T, frames []map[string]any, s string) int {
	t.Helper()
	data, err := json.Marshal(frames)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), s)
}

// Accepted: the steered response ends (incomplete, steered, or completed
// first), the successor follows on the socket without a request of the
// host's, its response.created links the intent (steering_delivered,
// mode native, exactly once), and its usage settles it.
func TestNativeSteeringAcceptedEndToEnd(t *testing.T) {
	for _, outcome := range []string{fakeprovider.SteerAccepted, fakeprovider.SteerAcceptedCompleted} {
		t.Run(outcome, func(t *testing.T) {
			r := newNativeRig(t, []fakeprovider.Turn{
				{Text: "I will indent the file with spaces", Usage: fakeprovider.Usage{Input: 100, Output: 8}, Steer: &fakeprovider.Steer{Outcome: outcome}},
				{Text: "Tabs it is.", Usage: fakeprovider.Usage{Input: 120, Output: 4}},
			}, qualified, nil)
			evs, res, _ := r.run(t, r.req("run-1", "indent it", []string{}), "use tabs")
			if res.Status != protocol.StatusCompleted || res.Output != "Tabs it is." || res.Steps != 2 {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			del := events[protocol.SteeringDelivered](evs)
			if len(del) != 1 || *del[0] != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeNative}) {
				t.Fatalf("steering_delivered %+v", del)
			}
			if steps := events[protocol.ModelStep](evs); len(steps) != 2 || steps[1].Usage.InputTokens != 120 {
				t.Fatalf("model_step %+v", steps)
			}
			if len(events[protocol.ProviderUsageUncertain](evs)) != 0 {
				t.Fatal("usage uncertain")
			}
			frames := r.frames()
			if len(frames) != 2 || frames[0]["type"] != "response.create" || frames[1]["type"] != "response.steer" ||
				frames[1]["input"] != "use tabs" || count(t, frames, "use tabs") != 1 {
				t.Fatalf("frames %v", frames)
			}
			natives, messages := r.records(t, *res.SessionFile)
			if !slices.Equal(natives, []string{"intent", "accepted", "linked", "settled/delivered"}) {
				t.Fatalf("native records %v", natives)
			}
			// The input is in the conversation once, after the steered
			// answer's prefix and before the successor's answer.
			if n := len(messages); n < 3 || messages[n-2] != "user[steering]:use tabs" || messages[n-1] != "assistant:Tabs it is." ||
				!strings.HasPrefix(messages[n-3], "assistant:I will") {
				t.Fatalf("messages %q", messages)
			}
			s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "steered")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
				t.Fatal("a delivered intent left the session unsettled")
			}
		})
	}
}

// Pending: the steered response stopped for its tool call; the tool runs
// as usual, then exactly one response.create carries its output, with the
// steered response as previous_response_id and without the input, which
// the server prepends: the successor's response.created links it.
func TestNativeSteeringPendingEndToEnd(t *testing.T) {
	r := newNativeRig(t, []fakeprovider.Turn{
		{Text: "Reading the file first.", ToolCalls: []fakeprovider.ToolCall{{ID: "call_r", Name: "read", Arguments: `{"path":"notes.txt"}`}},
			Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "The notes say hello, in Celsius."},
	}, qualified, nil)
	if err := os.WriteFile(filepath.Join(r.ws, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, res, _ := r.run(t, r.req("run-1", "read my notes", []string{"read"}), "use Celsius")
	if res.Status != protocol.StatusCompleted || res.Output != "The notes say hello, in Celsius." || res.ToolCalls != 1 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	del := events[protocol.SteeringDelivered](evs)
	if len(del) != 1 || del[0].Mode != protocol.SteeringModeNative || del[0].Step != 2 {
		t.Fatalf("steering_delivered %+v", del)
	}
	frames := r.frames()
	if len(frames) != 3 || frames[1]["type"] != "response.steer" || frames[2]["type"] != "response.create" {
		t.Fatalf("frames %v", frames)
	}
	create := frames[2]
	input, _ := create["input"].([]any)
	if create["previous_response_id"] != frames[1]["previous_response_id"] || len(input) != 1 ||
		input[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("the response.create after pending: %v", create)
	}
	if n := count(t, frames, "use Celsius"); n != 1 {
		t.Fatalf("the input went out %d times", n)
	}
	natives, messages := r.records(t, *res.SessionFile)
	if !slices.Equal(natives, []string{"intent", "accepted", "linked", "settled/delivered"}) {
		t.Fatalf("native records %v", natives)
	}
	if n := len(messages); !strings.HasPrefix(messages[n-3], "tool:") || !strings.Contains(messages[n-3], "hello") || messages[n-2] != "user[steering]:use Celsius" {
		t.Fatalf("messages %q", messages)
	}
}

// Failed: the returned input goes to the ordinary queue and is delivered
// once, as queued steering, at the next boundary.
func TestNativeSteeringFailedEndToEnd(t *testing.T) {
	for _, outcome := range []string{fakeprovider.SteerFailed, fakeprovider.SteerAcceptedFailed} {
		t.Run(outcome, func(t *testing.T) {
			r := newNativeRig(t, []fakeprovider.Turn{
				{Text: "Spaces everywhere, as usual", Steer: &fakeprovider.Steer{Outcome: outcome}},
				{Text: "Switching to tabs."},
			}, qualified, nil)
			evs, res, _ := r.run(t, r.req("run-1", "indent it", []string{}), "use tabs")
			if res.Status != protocol.StatusCompleted || res.Output != "Switching to tabs." {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			del := events[protocol.SteeringDelivered](evs)
			if len(del) != 1 || *del[0] != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeQueued}) {
				t.Fatalf("steering_delivered %+v", del)
			}
			frames := r.frames()
			if len(frames) != 3 || frames[2]["type"] != "response.create" || count(t, frames, "use tabs") != 2 {
				t.Fatalf("frames %v", frames)
			}
			natives, messages := r.records(t, *res.SessionFile)
			want := []string{"intent", "settled/failed"}
			if outcome == fakeprovider.SteerAcceptedFailed {
				want = []string{"intent", "accepted", "settled/failed"}
			}
			if !slices.Equal(natives, want) {
				t.Fatalf("native records %v", natives)
			}
			n := 0
			for _, m := range messages {
				if m == "user[steering]:use tabs" {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("the input is in the conversation %d times: %q", n, messages)
			}
		})
	}
}

// Unknown: the connection drops right after the steer, or the server
// never answers it. The intent stays unsettled, usage is uncertain, the
// run ends blocked, and every later run on the session is blocked before
// any provider I/O; the input is never replayed.
func TestNativeSteeringUnknownEndToEnd(t *testing.T) {
	for _, outcome := range []string{fakeprovider.SteerDrop, fakeprovider.SteerSilent} {
		t.Run(outcome, func(t *testing.T) {
			r := newNativeRig(t, []fakeprovider.Turn{
				{Text: "Spaces everywhere, as usual", Steer: &fakeprovider.Steer{Outcome: outcome}},
				{Text: "never served"},
			}, qualified, func(o *runtime.Options) { o.IdleTimeout = 300 * time.Millisecond })
			evs, res, _ := r.run(t, r.req("run-1", "indent it", []string{}), "use tabs")
			if res.Status != protocol.StatusBlocked || res.Error == nil || res.Error.Code != protocol.CodeUnsettledNativeSteering {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			if len(events[protocol.ProviderUsageUncertain](evs)) != 1 || len(events[protocol.SteeringDelivered](evs)) != 0 ||
				len(events[protocol.ProviderRetry](evs)) != 0 {
				t.Fatalf("events %v", evs)
			}
			natives, messages := r.records(t, *res.SessionFile)
			if !slices.Equal(natives, []string{"intent", "unknown"}) {
				t.Fatalf("native records %v", natives)
			}
			for _, m := range messages {
				if strings.Contains(m, "use tabs") {
					t.Fatalf("the input entered the conversation: %q", messages)
				}
			}
			s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "steered")
			if err != nil {
				t.Fatal(err)
			}
			if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
				t.Fatal("the session is not unsettled and uncertain")
			}
			s.Close()
			before, sockets := len(r.fake.Requests()), r.handshakes()
			_, res2, _ := r.run(t, r.req("run-2", "go on", []string{}), "")
			if res2.Status != protocol.StatusBlocked || res2.Error == nil || res2.Error.Code != protocol.CodeUnsettledNativeSteering ||
				!strings.Contains(res2.Error.Message, "start a new session") || res2.Steps != 0 {
				t.Fatalf("later run %+v %+v", res2, res2.Error)
			}
			if len(r.fake.Requests()) != before || r.handshakes() != sockets {
				t.Fatal("the blocked run reached the provider")
			}
			if n := count(t, r.frames(), "use tabs"); n != 1 {
				t.Fatalf("the input went out %d times", n)
			}
		})
	}
}

// An unqualified route keeps the ordinary queued steering, and never
// sends response.steer: the same WebSocket route without
// "native_steering", or with it but over HTTP, or with provider-side
// compaction.
func TestNativeSteeringUnqualifiedQueues(t *testing.T) {
	for _, tc := range []struct{ name, model string }{
		{"no native_steering", ""},
		{"over HTTP", qualified + `,"transport":"http"`},
		{"native compaction", qualified + `,"native_compaction":true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newNativeRig(t, []fakeprovider.Turn{
				{Text: "Spaces everywhere, as usual"},
				{Text: "Switching to tabs."},
			}, tc.model, nil)
			// The first answer stalls after its first delta, so the steer
			// comes while it streams.
			r.fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 5, For: 300 * time.Millisecond})
			evs, res, _ := r.run(t, r.req("run-1", "indent it", []string{}), "use tabs")
			if res.Status != protocol.StatusCompleted || res.Output != "Switching to tabs." {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			del := events[protocol.SteeringDelivered](evs)
			if len(del) != 1 || *del[0] != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeQueued}) {
				t.Fatalf("steering_delivered %+v", del)
			}
			posts := 0
			for _, q := range r.fake.Requests() {
				if q.Method == "POST" {
					posts++
				}
				if q.Method == fakeprovider.MethodMessage && q.Body["type"] != "response.create" {
					t.Fatalf("frame %v", q.Body)
				}
			}
			if (posts == 2) != strings.Contains(tc.model, "http") || len(r.frames())+posts != 2 {
				t.Fatalf("%d posts, frames %v", posts, r.frames())
			}
			natives, _ := r.records(t, *res.SessionFile)
			if len(natives) != 0 {
				t.Fatalf("native records %v", natives)
			}
		})
	}
}

// A chain: the successor of an accepted steer is steered in turn, and its
// own successor ends the run. Each steer is linked to the successor that
// follows it (two native steering_delivered events), both intents settle
// delivered, the conversation alternates answer and steer, the fake got
// one response.create and two response.steer frames on one socket, and
// the ledger counts the three responses.
func TestNativeSteeringChainEndToEnd(t *testing.T) {
	r := newNativeRig(t, []fakeprovider.Turn{
		{Text: "I will indent the file with spaces", Usage: fakeprovider.Usage{Input: 100, Output: 8}, Steer: &fakeprovider.Steer{}},
		{Text: "Tabs then, four wide", Usage: fakeprovider.Usage{Input: 120, Output: 5}, Steer: &fakeprovider.Steer{}},
		{Text: "Tabs, eight wide.", Usage: fakeprovider.Usage{Input: 140, Output: 4}},
	}, qualified, nil)
	// One steer at the first text delta of each of the first two steps.
	steers := map[int]string{1: "use tabs", 2: "eight wide"}
	evs, res := r.runSteering(t, r.req("run-1", "indent it", []string{}), steers)
	if res.Status != protocol.StatusCompleted || res.Output != "Tabs, eight wide." || res.Steps != 3 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if len(steers) != 0 {
		t.Fatalf("steps without a text delta: %v", steers)
	}
	del := events[protocol.SteeringDelivered](evs)
	if len(del) != 2 ||
		*del[0] != (protocol.SteeringDelivered{Step: 2, Text: "use tabs", Mode: protocol.SteeringModeNative}) ||
		*del[1] != (protocol.SteeringDelivered{Step: 3, Text: "eight wide", Mode: protocol.SteeringModeNative}) {
		t.Fatalf("steering_delivered %+v", del)
	}
	if steps := events[protocol.ModelStep](evs); len(steps) != 3 || steps[0].Usage.InputTokens != 100 ||
		steps[1].Usage.InputTokens != 120 || steps[2].Usage.InputTokens != 140 {
		t.Fatalf("model_step %+v", steps)
	}
	if len(events[protocol.ProviderUsageUncertain](evs)) != 0 {
		t.Fatal("usage uncertain")
	}

	frames, types := r.frames(), r.frameTypes()
	if !slices.Equal(types, []string{"response.create", "response.steer", "response.steer"}) || r.handshakes() != 1 {
		t.Fatalf("frames %v, %d sockets", frames, r.handshakes())
	}
	// Each steer names the response streaming when it was sent: the
	// first the created one, the second its successor.
	if frames[1]["input"] != "use tabs" || frames[2]["input"] != "eight wide" ||
		frames[1]["previous_response_id"] == frames[2]["previous_response_id"] ||
		count(t, frames, "use tabs") != 1 || count(t, frames, "eight wide") != 1 {
		t.Fatalf("steer frames %v", frames[1:])
	}

	// Per intent: recorded against the response streaming, linked to the
	// successor that followed it (the response the next steer named),
	// settled delivered. The first settles when its successor's usage is
	// accounted, which is after the second was sent into that successor.
	ints := nativeIntents(t, *res.SessionFile)
	first, second := frames[1]["previous_response_id"], frames[2]["previous_response_id"]
	if len(ints) != 2 ||
		!slices.Equal(ints[0].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		!slices.Equal(ints[1].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		ints[0].steers != first || ints[0].linked != second || ints[0].step != 2 ||
		ints[1].steers != second || ints[1].linked == "" || ints[1].linked == second || ints[1].step != 3 {
		t.Fatalf("intents %+v, steered %v then %v", ints, first, second)
	}
	_, messages := r.records(t, *res.SessionFile)
	if len(messages) != 6 || messages[0] != "user:indent it" || !strings.HasPrefix(messages[1], "assistant:I will") ||
		messages[2] != "user[steering]:use tabs" || !strings.HasPrefix(messages[3], "assistant:Tabs then") ||
		messages[4] != "user[steering]:eight wide" || messages[5] != "assistant:Tabs, eight wide." {
		t.Fatalf("messages %q", messages)
	}

	s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "steered")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.HasUnsettledNativeSteering() || s.HasUncertainUsage() {
		t.Fatal("delivered intents left the session unsettled")
	}
	var got []string
	for _, m := range s.Messages() {
		got = append(got, string(m.Role)+":"+m.Text)
	}
	if len(got) != 6 || got[2] != "user:use tabs" || got[4] != "user:eight wide" || got[5] != "assistant:Tabs, eight wide." {
		t.Fatalf("the session's history %q", got)
	}
	st := s.Statistics()
	if st.ModelCalls != 3 || st.InputTokens != 360 || st.OutputTokens != 17 || st.UsageUncertain {
		t.Fatalf("statistics %+v", st)
	}
}

// A chain whose second steer comes back pending: the first steer's
// successor stops for its tool call, the tool runs, and exactly one
// response.create continues the successor (its previous_response_id) with
// the tool output only; that response's response.created links the second
// intent.
func TestNativeSteeringChainPendingEndToEnd(t *testing.T) {
	r := newNativeRig(t, []fakeprovider.Turn{
		{Text: "I will read the file first", Steer: &fakeprovider.Steer{}},
		{Text: "Reading notes.txt now.", ToolCalls: []fakeprovider.ToolCall{{ID: "call_r", Name: "read", Arguments: `{"path":"notes.txt"}`}},
			Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "The notes say hello, in Celsius."},
	}, qualified, nil)
	if err := os.WriteFile(filepath.Join(r.ws, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	steers := map[int]string{1: "read notes.txt", 2: "use Celsius"}
	evs, res := r.runSteering(t, r.req("run-1", "read my notes", []string{"read"}), steers)
	if res.Status != protocol.StatusCompleted || res.Output != "The notes say hello, in Celsius." || res.Steps != 3 || res.ToolCalls != 1 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	del := events[protocol.SteeringDelivered](evs)
	if len(del) != 2 || *del[0] != (protocol.SteeringDelivered{Step: 2, Text: "read notes.txt", Mode: protocol.SteeringModeNative}) ||
		*del[1] != (protocol.SteeringDelivered{Step: 3, Text: "use Celsius", Mode: protocol.SteeringModeNative}) {
		t.Fatalf("steering_delivered %+v", del)
	}
	frames, types := r.frames(), r.frameTypes()
	if !slices.Equal(types, []string{"response.create", "response.steer", "response.steer", "response.create"}) || r.handshakes() != 1 {
		t.Fatalf("frames %v, %d sockets", frames, r.handshakes())
	}
	create := frames[3]
	input, _ := create["input"].([]any)
	if create["previous_response_id"] != frames[2]["previous_response_id"] || len(input) != 1 ||
		input[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("the response.create after pending: %v", create)
	}
	if count(t, frames, "read notes.txt") != 1 || count(t, frames, "use Celsius") != 1 {
		t.Fatalf("frames %v", frames)
	}
	ints := nativeIntents(t, *res.SessionFile)
	if len(ints) != 2 || !slices.Equal(ints[0].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		!slices.Equal(ints[1].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		ints[1].steers != ints[0].linked || ints[0].step != 2 || ints[1].step != 3 {
		t.Fatalf("intents %+v", ints)
	}
	_, messages := r.records(t, *res.SessionFile)
	if len(messages) != 7 || messages[2] != "user[steering]:read notes.txt" || !strings.HasPrefix(messages[3], "assistant:Reading notes.txt") ||
		!strings.HasPrefix(messages[4], "tool:") || messages[5] != "user[steering]:use Celsius" ||
		messages[6] != "assistant:The notes say hello, in Celsius." {
		t.Fatalf("messages %q", messages)
	}
}

// A steer that comes right after the run was canceled, while the model
// streams, cannot leave any more (the call's context ended, its socket is
// closing): it is reported undelivered, and the session is not blocked by
// an intent whose input never left the host.
func TestNativeSteeringAfterCancel(t *testing.T) {
	r := newNativeRig(t, []fakeprovider.Turn{
		{Text: "Spaces everywhere, as usual", Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerHold}},
	}, qualified, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := r.agent.Run(ctx, r.req("run-1", "indent it", []string{}))
	if err != nil {
		t.Fatal(err)
	}
	steered := false
	for ev := range rc.Events() {
		if d, ok := ev.Data.(*protocol.ModelDelta); ok && d.Channel == protocol.ChannelText && !steered {
			steered = true
			cancel()
			if err := rc.Steer("use tabs"); err != nil && !errors.Is(err, runtime.ErrRunEnded) {
				t.Errorf("Steer: %v", err)
			}
		}
	}
	res := rc.Wait()
	if res.Status != protocol.StatusError || res.Error == nil || res.Error.Code != protocol.CodeCanceled {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if u := rc.Undelivered(); len(u) != 1 || u[0].Text != "use tabs" {
		t.Fatalf("undelivered %+v", u)
	}
	if n := count(t, r.frames(), "use tabs"); n != 0 {
		t.Fatalf("the input went out %d times", n)
	}
	s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "steered")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.HasUnsettledNativeSteering() {
		t.Fatal("a steer that never left blocks the session")
	}
}

// Two pending steers in a row: the response that answers the first
// pending notice (the one response.create with the tool outputs, whose
// response.created links the first input) is steered in turn and stops
// for its own tool call; the second response.create continues it, with
// its tool output only. (Its conversation on the server holds the first
// steering input, so it continues like a successor: it was sent with its
// whole conversation again, which no previous_response_id could name, and
// the run ended blocked.)
func TestNativeSteeringPendingTwiceEndToEnd(t *testing.T) {
	r := newNativeRig(t, []fakeprovider.Turn{
		{Text: "Reading the file first.", ToolCalls: []fakeprovider.ToolCall{{ID: "call_a", Name: "read", Arguments: `{"path":"notes.txt"}`}},
			Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "Reading it once more.", ToolCalls: []fakeprovider.ToolCall{{ID: "call_b", Name: "read", Arguments: `{"path":"notes.txt"}`}},
			Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "The notes say hello, in Celsius, briefly."},
	}, qualified, nil)
	if err := os.WriteFile(filepath.Join(r.ws, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	steers := map[int]string{1: "use Celsius", 2: "be brief"}
	evs, res := r.runSteering(t, r.req("run-1", "read my notes", []string{"read"}), steers)
	if res.Status != protocol.StatusCompleted || res.Output != "The notes say hello, in Celsius, briefly." || res.Steps != 3 || res.ToolCalls != 2 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	del := events[protocol.SteeringDelivered](evs)
	if len(del) != 2 || *del[0] != (protocol.SteeringDelivered{Step: 2, Text: "use Celsius", Mode: protocol.SteeringModeNative}) ||
		*del[1] != (protocol.SteeringDelivered{Step: 3, Text: "be brief", Mode: protocol.SteeringModeNative}) {
		t.Fatalf("steering_delivered %+v", del)
	}
	frames, types := r.frames(), r.frameTypes()
	if !slices.Equal(types, []string{"response.create", "response.steer", "response.create", "response.steer", "response.create"}) || r.handshakes() != 1 {
		t.Fatalf("frames %v, %d sockets", frames, r.handshakes())
	}
	for i, steer := range []map[string]any{frames[1], frames[3]} {
		create := frames[2+2*i]
		input, _ := create["input"].([]any)
		if create["previous_response_id"] != steer["previous_response_id"] || len(input) != 1 ||
			input[0].(map[string]any)["type"] != "function_call_output" {
			t.Fatalf("the response.create after pending %d: %v", i+1, create)
		}
	}
	if count(t, frames, "use Celsius") != 1 || count(t, frames, "be brief") != 1 {
		t.Fatalf("frames %v", frames)
	}
	ints := nativeIntents(t, *res.SessionFile)
	if len(ints) != 2 || !slices.Equal(ints[0].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		!slices.Equal(ints[1].events, []string{"intent", "accepted", "linked", "settled/delivered"}) ||
		ints[1].steers != ints[0].linked || ints[0].step != 2 || ints[1].step != 3 {
		t.Fatalf("intents %+v", ints)
	}
}
