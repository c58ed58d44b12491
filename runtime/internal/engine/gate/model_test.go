package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// scripted is a provider whose calls answer from a list of event scripts
// (or fail with err), recording the requests.
type scripted struct {
	scripts [][]provider.StreamEvent
	err     error
	reqs    []provider.Request
	closed  bool
}

func (p *scripted) Stream(_ context.Context, req provider.Request) (provider.Stream, error) {
	p.reqs = append(p.reqs, req)
	if p.err != nil {
		return nil, p.err
	}
	evs := p.scripts[min(len(p.reqs)-1, len(p.scripts)-1)]
	return &events{evs: evs}, nil
}

func (p *scripted) Close() error { p.closed = true; return nil }

type events struct {
	evs []provider.StreamEvent
	i   int
}

func (s *events) Next() bool                  { s.i++; return s.i <= len(s.evs) }
func (s *events) Event() provider.StreamEvent { return s.evs[s.i-1] }
func (s *events) Err() error                  { return nil }
func (s *events) Close() error                { return nil }

func say(text string, u *provider.Usage) []provider.StreamEvent {
	evs := []provider.StreamEvent{{Kind: provider.EventText, Text: text[:len(text)/2]}, {Kind: provider.EventText, Text: text[len(text)/2:]}}
	if u != nil {
		evs = append(evs, provider.StreamEvent{Kind: provider.EventUsage, Usage: *u})
	}
	return evs
}

var gateModel = catalog.Model{ID: "judge", Provider: "local", APIModel: "judge-v1", MaxOutputTokens: 1000,
	Cost: &catalog.Cost{Input: 2, Output: 10}}

// delegating is a reviewer that delegates to a model gate, as an
// application's gate may, and keeps AskModel's error.
func delegating(m Model, err *error) Reviewer {
	return reviewerFunc(func(ctx context.Context, in Input) (Decision, error) {
		d, e := AskModel(ctx, m, in)
		*err = e
		return d, e
	})
}

// TestAskModel: the gate's question goes to its own route under the run's
// recovery (operation terminal_gate) with its instructions, the prompt and
// the candidate; its usage is recorded and priced; its verdict is read;
// the route is resolved once per run and closed with it.
func TestAskModel(t *testing.T) {
	u := provider.Usage{InputTokens: 1000, OutputTokens: 100}
	prov := &scripted{scripts: [][]provider.StreamEvent{
		say(`Sure. {"decision":"reject","reason":"add a test"} done`, &u),
		say(`{"decision": " Accept "}`, nil),
	}}
	resolved := 0
	m := testModel("tests pass")
	var askErr error
	s := New(delegating(m, &askErr), func(_ context.Context, got Model) (*Route, error) {
		resolved++
		if got != m {
			t.Errorf("resolving %v", got)
		}
		return &Route{Model: gateModel, Prov: prov, OutputCap: 77, Redact: func(s string) string { return s }}, nil
	})
	env := &fakeEnv{}
	end, _ := s.WouldStop(context.Background(), env, 3, new([]provider.Message), "my answer", false)
	if end != nil || askErr != nil {
		t.Fatalf("first review: %+v, %v", end, askErr)
	}
	if ev, ok := env.events[0].(*protocol.CandidateRejected); !ok || ev.Reason != "add a test" {
		t.Fatalf("event %+v", env.events[0])
	}
	req := prov.reqs[0]
	if req.Model != "judge-v1" || req.MaxOutputTokens != 77 || req.MaxOutputBytes != provider.OutputLimit(1000) ||
		req.System != systemPrompt+"instructions of tests pass" || len(req.Messages) != 1 ||
		req.Messages[0].Text != "The agent's task:\n<task>\nfix the bug\n</task>\n\nIts candidate final answer (attempt 1):\n<candidate>\nmy answer\n</candidate>" {
		t.Fatalf("request %+v", req)
	}
	usage, ok := env.recs[0].Body.(store.Usage)
	if !ok || usage.Operation != protocol.OperationTerminalGate || usage.Step != 3 || usage.Model != "judge" || usage.RunID != "run-1" ||
		usage.Usage.InputTokens != 1000 || usage.CostUSD != (1000*2+100*10)/1e6 {
		t.Fatalf("usage record %+v", env.recs[0].Body)
	}

	env.complete = true
	end, _ = s.WouldStop(context.Background(), env, 4, new([]provider.Message), "my answer, tested", false)
	if end == nil || end.Output != "my answer, tested" || askErr != nil {
		t.Fatalf("second review: %+v, %v", end, askErr)
	}
	if !strings.Contains(prov.reqs[1].Messages[0].Text, "(attempt 2)") {
		t.Fatalf("second request %q", prov.reqs[1].Messages[0].Text)
	}
	// The answer came without usage: billed, of unknown size.
	if len(env.uncertain) != 1 || env.uncertain[0] != "local/judge/terminal_gate" {
		t.Fatalf("uncertain %v", env.uncertain)
	}
	if resolved != 1 || len(env.recovered) != 2 || env.recovered[0] != protocol.OperationTerminalGate {
		t.Fatalf("resolved %d times, recovered %v", resolved, env.recovered)
	}
	s.Close()
	if !prov.closed {
		t.Fatal("the gate route's provider was not closed")
	}
}

// TestAskModelFailures: a provider error loses the gate route's
// credentials; an answer that is no verdict, a route that cannot be
// resolved, and a usage record the session refuses all fail the gate.
func TestAskModelFailures(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "gate-key-42", "[gate]") }
	for _, c := range []struct {
		name    string
		prov    *scripted
		resolve error
		env     *fakeEnv
		wantErr string
		code    protocol.Code
	}{
		{"provider error", &scripted{err: &provider.Error{Kind: provider.FailKind("http"), Message: "401 for gate-key-42"}}, nil, &fakeEnv{},
			"401 for [gate]", protocol.CodeTerminalGateFailed},
		{"no object", &scripted{scripts: [][]provider.StreamEvent{say("I accept it", nil)}}, nil, &fakeEnv{},
			`the gate model's answer holds no JSON object: "I accept it"`, protocol.CodeTerminalGateFailed},
		{"not an object", &scripted{scripts: [][]provider.StreamEvent{say(`{"decision": 1}`, nil)}}, nil, &fakeEnv{},
			"the gate model's answer is not a verdict object", protocol.CodeTerminalGateFailed},
		{"unknown decision", &scripted{scripts: [][]provider.StreamEvent{say(`{"decision":"defer"}`, nil)}}, nil, &fakeEnv{},
			`the gate model's decision "defer" is not "accept", "reject" or "stop"`, protocol.CodeTerminalGateFailed},
		{"unresolved", nil, errors.New("route_invalid: no such model"), &fakeEnv{},
			"route_invalid: no such model", protocol.CodeTerminalGateFailed},
		{"usage unwritable", &scripted{scripts: [][]provider.StreamEvent{say(`{"decision":"accept"}`, &provider.Usage{OutputTokens: 1})}}, nil,
			&fakeEnv{appendErr: errors.New("EIO")}, "session_write_failed: the session could not be written: EIO", protocol.CodeSessionWriteFailed},
		{"uncertainty unwritable", &scripted{scripts: [][]provider.StreamEvent{say(`{"decision":"accept"}`, nil)}}, nil,
			&fakeEnv{appendErr: errors.New("EIO")}, "session_write_failed: the usage uncertainty record could not be written: EIO", protocol.CodeSessionWriteFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var askErr error
			s := New(delegating(testModel("x"), &askErr), func(context.Context, Model) (*Route, error) {
				if c.resolve != nil {
					return nil, c.resolve
				}
				return &Route{Model: gateModel, Prov: c.prov, Redact: redact}, nil
			})
			end, _ := s.WouldStop(context.Background(), c.env, 1, new([]provider.Message), "candidate", false)
			if askErr == nil || !strings.Contains(askErr.Error(), c.wantErr) {
				t.Fatalf("AskModel error %v, want %q in it", askErr, c.wantErr)
			}
			if code(end) != c.code {
				t.Fatalf("end %+v, want code %s", end, c.code)
			}
			var f *modelcall.Failed
			if errors.As(askErr, &f) != (c.code == protocol.CodeSessionWriteFailed) {
				t.Fatalf("AskModel error %T", askErr)
			}
		})
	}
}

// TestAskModelOutsideRun: a model gate asked with a context no review
// gave fails with ErrOutsideRun and calls nothing.
func TestAskModelOutsideRun(t *testing.T) {
	_, err := AskModel(context.Background(), testModel("x"), Input{})
	if !errors.Is(err, ErrOutsideRun) {
		t.Fatalf("err %v", err)
	}
}

func TestParseVerdict(t *testing.T) {
	for _, c := range []struct {
		text string
		want Decision
		err  string
	}{
		{`{"decision":"accept"}`, Decision{Verdict: Accept}, ""},
		{"verdict:\n```json\n{\"decision\":\"REJECT\",\"reason\":\"tests fail\",\"extra\":true}\n```", Decision{Verdict: Reject, Reason: "tests fail"}, ""},
		{`{"decision":"stop","reason":"{nested}"}`, Decision{Verdict: Stop, Reason: "{nested}"}, ""},
		{`}{`, Decision{}, "holds no JSON object"},
		{`{"decision":"accept"} and {"decision":"reject"}`, Decision{}, "is not a verdict object"},
		{`{"reason":"x"}`, Decision{}, `decision "" is not`},
	} {
		got, err := parseVerdict(c.text)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("parseVerdict(%q) = %+v, %v; want %+v, %q", c.text, got, err, c.want, c.err)
		}
	}
}
