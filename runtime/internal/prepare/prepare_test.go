package prepare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// testProv is a provider that preparation may build and close, never call.
type testProv struct {
	t      *testing.T
	closed int
	size   int // ToolArrayBytes's answer when sized
	sized  bool
}

func (p *testProv) Stream(context.Context, provider.Request) (provider.Stream, error) {
	p.t.Error("preparation called the provider")
	return nil, errors.New("no model call while preparing")
}

func (p *testProv) Close() error { p.closed++; return nil }

// sizedProv sizes its own tool array.
type sizedProv struct{ *testProv }

func (p sizedProv) ToolArrayBytes(specs []provider.ToolSpec) (int, error) { return p.size, nil }

// testHost answers as an agent would, and records what it was asked.
type testHost struct {
	budget  int
	gateErr *RunError
	setting *policy.TerminalGate // the operator's gate it was given
	gates   int
}

func (h *testHost) ToolBudget() int { return h.budget }

func (h *testHost) Gate(_ context.Context, setting *policy.TerminalGate) (*gate.State, *RunError) {
	h.gates++
	h.setting = setting
	return nil, h.gateErr
}

func (h *testHost) Builtins() []resources.Skill { return nil }

// env is one preparation's surroundings: a home, a workspace, a session
// directory, and the providers its factory built.
type env struct {
	t          *testing.T
	home, ws   string
	sessions   string
	cfg        *Config
	host       *testHost
	built      []*testProv
	factoryErr error
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, home: t.TempDir(), ws: t.TempDir(), host: &testHost{budget: DefaultToolSchemaBudgetBytes}}
	e.sessions = filepath.Join(e.home, "sessions")
	e.cfg = testConfig(e.home)
	e.cfg.NewProvider = func(r Route) (provider.Provider, error) {
		if e.factoryErr != nil {
			return nil, e.factoryErr
		}
		p := &testProv{t: t}
		e.built = append(e.built, p)
		return p, nil
	}
	return e
}

// req is a valid request on an inline route.
func (e *env) req() RunRequest {
	return RunRequest{RunID: "run-1", Workspace: e.ws, Model: "local-model", Prompt: "hello", SessionDir: e.sessions,
		Route: &InlineRoute{Provider: "local", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-test-secret-value"}}
}

func (e *env) prepare(req RunRequest) (*Run, *RunError) {
	var r Run
	if err := Prepare(context.Background(), e.cfg, e.host, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// closedAll fails unless every provider built was closed exactly once.
func (e *env) closedAll() {
	e.t.Helper()
	for i, p := range e.built {
		if p.closed != 1 {
			e.t.Errorf("provider %d closed %d times", i, p.closed)
		}
	}
}

// TestPrepareRefusalOrder: a request with a fault in every check is
// refused by the first check, and repairing the faults one by one meets
// them in the order of CONTRACT §8 as the engine keeps it: the request's
// own fields, the tools, the workspace, the route (the first provider
// built), reasoning, the tool budget, the media, the operator's settings,
// the terminal gate, and the session last. No provider is called, every
// provider built is closed, and no session file exists before the
// session's own check.
func TestPrepareRefusalOrder(t *testing.T) {
	e := newEnv(t)
	req := e.req()
	settings := filepath.Join(e.home, ".octet", "settings.json")
	writeRes(t, settings, `{"tool_policy":`)
	e.host.budget = 10
	e.host.gateErr = Refuse(protocol.CodeModelNotFound, "the terminal gate's model")
	steps := []struct {
		code         protocol.Code
		msg          string
		break_, fix  func()
		providerMade bool // the route resolved: a provider was built
	}{
		{protocol.CodeInvalidValue, "run_id", func() { req.RunID = "" }, func() { req.RunID = "run-1" }, false},
		{protocol.CodeInvalidValue, "prompt is empty", func() { req.Prompt = "" }, func() { req.Prompt = "hello" }, false},
		{protocol.CodeDisplayTextInvalid, "control character at byte 2", func() { req.DisplayText = "ab\x01" }, func() { req.DisplayText = "" }, false},
		{protocol.CodeInvalidValue, "max_steps", func() { zero := 0; req.MaxSteps = &zero }, func() { req.MaxSteps = nil }, false},
		{protocol.CodeHistoryInvalid, "history[0].role", func() { req.History = []protocol.HistoryMessage{{Role: "system", Content: "x"}} }, func() { req.History = nil }, false},
		{protocol.CodeToolsInvalid, `unknown tool "nope"`, func() { req.Tools = []string{"nope"} }, func() { req.Tools = nil }, false},
		{protocol.CodeWorkspaceInvalid, "absolute", func() { req.Workspace = "rel" }, func() { req.Workspace = e.ws }, false},
		{protocol.CodeRouteInvalid, "need base_url", func() { req.Route.BaseURL = "" }, func() { req.Route.BaseURL = "http://127.0.0.1:9/v1" }, false},
		{protocol.CodeReasoningUnsupported, "does not support reasoning", func() { high := "high"; req.ReasoningEffort = &high }, func() { req.ReasoningEffort = nil }, true},
		{protocol.CodeToolSchemaTooLarge, "the budget is 10", nil, func() { e.host.budget = DefaultToolSchemaBudgetBytes }, true},
		{protocol.CodeMediaUnsupported, "media[0] is an image", func() { req.Media = []protocol.Media{{Type: provider.MediaImage, Path: "missing.png"}} }, func() { req.Media = nil }, true},
		{protocol.CodeConfigInvalid, "settings.json", nil, func() { writeRes(t, settings, `{}`) }, true},
		{protocol.CodeModelNotFound, "the terminal gate's model", nil, func() { e.host.gateErr = nil }, true},
		{protocol.CodeSessionDirInvalid, "session_dir must be an absolute path", func() { req.SessionDir = "sessions" }, func() { req.SessionDir = e.sessions }, true},
	}
	for _, s := range steps {
		if s.break_ != nil {
			s.break_()
		}
	}
	for _, s := range steps {
		before := len(e.built)
		_, err := e.prepare(req)
		if err == nil || err.Code != s.code || !strings.Contains(err.Message, s.msg) {
			t.Fatalf("want %s (%q), got %v", s.code, s.msg, err)
		}
		if made := len(e.built) > before; made != s.providerMade {
			t.Errorf("%s: provider built %v, want %v", s.code, made, s.providerMade)
		}
		if _, serr := os.Stat(e.sessions); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s: the session directory exists before the session's check", s.code)
		}
		e.closedAll()
		s.fix()
	}
	r, err := e.prepare(req)
	if err != nil {
		t.Fatalf("repaired request refused: %v", err)
	}
	r.Close()
	e.closedAll()
	if e.host.gates != 3 { // the settings fault stops before the gate
		t.Errorf("the host was asked for the gate %d times, want 3", e.host.gates)
	}
}

// TestPrepareRun: a valid request comes back resolved: the step limit, the
// tools in their fixed order whatever the order named, the route's key and
// provider, the request's own policy layer over the operator's, the guard
// over the operator's directories, the resource layers and a new session.
func TestPrepareRun(t *testing.T) {
	e := newEnv(t)
	writeRes(t, filepath.Join(e.home, ".octet", "settings.json"), `{"terminal_gate":{"model":"gate-model","instructions":"Check it."}}`)
	writeRes(t, filepath.Join(e.home, ".octet", "AGENTS.md"), "Operator rule.\n")
	writeRes(t, filepath.Join(e.ws, "photo.png"), "\x89PNG\r\n\x1a\n"+strings.Repeat("\x00", 64))
	req := e.req()
	req.Tools = []string{"write", "read"}
	req.AllowFileMutation = true
	steps := 7
	req.MaxSteps = &steps
	r, err := e.prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.MaxSteps != 7 || r.Req.RunID != "run-1" || r.Key != "sk-test-secret-value" || r.Model.ID == "" {
		t.Errorf("max steps %d, run %q, key %q, model %q", r.MaxSteps, r.Req.RunID, r.Key, r.Model.ID)
	}
	if len(e.built) != 1 || r.Prov != provider.Provider(e.built[0]) {
		t.Errorf("the run's provider is not the one built (%d built)", len(e.built))
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Spec.Name)
	}
	if !slices.Equal(names, []string{"read", "write"}) {
		t.Errorf("tools %v, want the fixed order [read write]", names)
	}
	if d := r.Policy.Decide("write", policy.EffectWorkspaceMutation); !d.Allowed || d.Authorization != policy.AuthHostRequest {
		t.Errorf("write with allow_file_mutation: %+v", d)
	}
	if err := r.Guard.Check(".octet/settings.json"); err == nil {
		t.Error("the workspace's .octet is not protected")
	}
	if err := r.Guard.Check("notes.txt"); err != nil {
		t.Errorf("an ordinary file is protected: %v", err)
	}
	if !strings.Contains(r.Res.Prompt, "Operator rule.") {
		t.Errorf("the user's AGENTS.md is not in the resource prompt:\n%s", r.Res.Prompt)
	}
	if e.host.setting == nil || e.host.setting.Model != "gate-model" {
		t.Errorf("the host got gate setting %+v, want the user's", e.host.setting)
	}
	if !r.NewSess || r.Sess == nil {
		t.Fatal("no new session")
	}
	if _, err := os.Stat(e.sessions); err != nil {
		t.Errorf("the session directory: %v", err)
	}
	// The session is locked until the run closes: a second run on it is
	// refused, and that refusal closes what it opened.
	req2 := e.req()
	req2.SessionID = r.Sess.ID()
	if _, err := e.prepare(req2); err == nil || err.Code != protocol.CodeSessionLocked {
		t.Fatalf("a second run on a locked session: %v", err)
	}
	if len(e.built) != 2 || e.built[1].closed != 1 {
		t.Errorf("the refused run's provider was not closed")
	}
}

// TestPrepareHistoryOnlySeedsNewSessions: history on a session that has
// messages is refused after the session was opened, and the refusal
// releases its lock.
func TestPrepareHistoryOnlySeedsNewSessions(t *testing.T) {
	e := newEnv(t)
	s, err := store.Open(e.sessions, "s-1", store.Options{Now: e.cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(store.Record{Body: store.Message{Message: store.NewMessageV1(provider.Message{Role: provider.RoleUser, Text: "earlier"})}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	req := e.req()
	req.SessionID = "s-1"
	req.History = []protocol.HistoryMessage{{Role: "user", Content: "seed"}}
	if _, err := e.prepare(req); err == nil || err.Code != protocol.CodeHistoryInvalid || !strings.Contains(err.Message, "already has messages") {
		t.Fatalf("history on a session with messages: %v", err)
	}
	req.History = nil
	r, err2 := e.prepare(req) // the lock was released
	if err2 != nil {
		t.Fatal(err2)
	}
	if r.NewSess {
		t.Error("a session with messages is new")
	}
	r.Close()
}
