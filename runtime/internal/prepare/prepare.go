package prepare

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/auth"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Config is what preparation reads of the agent's options, taken at the
// start of each run.
type Config struct {
	Home           string         // where ~/.octet lives
	SessionDir     string         // the session directory of a request that names none; "": Home/.octet/sessions (SessionsDir)
	ResourceRoots  []string       // the operator's explicit resource roots, absolute
	TrustWorkspace bool           // every workspace is trusted
	PolicyLayers   []policy.Layer // the embedder's policy layers, lowest precedence first
	Getenv         func(string) string
	Now            func() time.Time
	Log            *slog.Logger     // never nil
	Cache          *resources.Cache // the resource layers' cache between runs
	// NewProvider builds the provider of a resolved route; an
	// UnsupportedModeError refuses the run as unsupported.
	NewProvider func(Route) (provider.Provider, error)
	Auth        auth.Env      // the Codex and Copilot routes' environment
	Copilot     *auth.Copilot // the agent's Copilot provider state
}

// Host is what preparation asks of the agent at the moment it needs it:
// values that may change between runs, and the agent's own parts of a run.
type Host interface {
	// ToolBudget is the byte budget of the serialized tool array.
	ToolBudget() int
	// Gate returns the run's terminal gate given the one the operator's
	// settings configure (nil: none), nil when the run has none. A gate
	// whose route cannot be resolved refuses the run; the state returned
	// with a refusal is closed with the rest.
	Gate(ctx context.Context, setting *policy.TerminalGate) (*gate.State, *RunError)
	// Builtins are the host's own skills, offered below every layer's.
	Builtins() []resources.Skill
}

// Run is a prepared run: everything resolved, the workspace and the
// session open. Whoever holds it must close what it holds (Close).
type Run struct {
	Req      RunRequest
	Model    catalog.Model
	Prov     provider.Provider
	Key      string            // the route's credential, scrubbed from every message
	Headers  map[string]string // the route's extra headers, redacted too
	Root     *confine.Root
	Guard    *confine.Guard // the operator's directories edit and write never change (OperatorGuard)
	Sess     *store.Session
	NewSess  bool
	Tools    []Tool
	Policy   policy.Effective
	MaxSteps int
	Media    []provider.Media // the run's typed inputs, bytes read
	Res      Resources        // the run's resource layers, open
	Gate     *gate.State      // the terminal gate, nil when none
}

// Close releases what r holds; it is safe on a Run prepared only in part.
func (r *Run) Close() {
	// A provider that holds a connection across calls (the Responses
	// WebSocket transport) releases it with the run.
	if c, ok := r.Prov.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	if r.Sess != nil {
		r.Sess.Close()
	}
	if r.Root != nil {
		r.Root.Close()
	}
	r.Res.Set.Close()
	r.Gate.Close()
}

// Prepare validates every field of req (CONTRACT §8) and resolves the
// route, the workspace, the tools, the policy and the session into out. A
// failure is a *RunError, its message bounded once here (Bound), refused
// before any provider I/O, and leaves nothing open. The checks come in a fixed order: the request's own
// fields, the tools, the workspace, the route, the tool budget, the media,
// the operator's settings and gate, and the session last.
func Prepare(ctx context.Context, cfg *Config, host Host, req RunRequest, out *Run) (refused *RunError) {
	*out = Run{Req: req}
	defer func() {
		if refused != nil {
			out.Close() // a refused run leaves nothing open
			refused.Message = Bound(refused.Message)
		}
	}()
	maxSteps, err := CheckFields(&req)
	if err != nil {
		return err
	}
	out.MaxSteps = maxSteps
	if out.Tools, err = SelectTools(req.Tools); err != nil {
		return err
	}

	if !filepath.IsAbs(req.Workspace) {
		return &RunError{Code: protocol.CodeWorkspaceInvalid, Message: "workspace must be an absolute path"}
	}
	root, oerr := confine.Open(req.Workspace)
	switch {
	case errors.Is(oerr, confine.ErrWorkspaceNotFound):
		return &RunError{Code: protocol.CodeWorkspaceInvalid, Message: "workspace does not exist"}
	case errors.Is(oerr, confine.ErrWorkspaceNotDir):
		return &RunError{Code: protocol.CodeWorkspaceInvalid, Message: "workspace is not a directory"}
	case oerr != nil:
		return &RunError{Code: protocol.CodeWorkspaceInvalid, Message: "workspace cannot be opened"}
	}
	out.Root = root
	out.Guard = OperatorGuard(root, cfg.Home, req.Workspace, cfg.ResourceRoots)

	route, err := ResolveRoute(ctx, cfg, req.Model, req.Route)
	if err != nil {
		return err
	}
	out.Model, out.Prov, out.Key, out.Headers = route.Model, route.Prov, route.Key, route.Headers
	if req.ReasoningEffort != nil && !out.Model.SupportsReasoning {
		return &RunError{Code: protocol.CodeReasoningUnsupported, Message: "the route does not support reasoning; omit reasoning"}
	}
	if err := CheckToolBudget(host.ToolBudget(), out.Prov, out.Tools); err != nil {
		return err
	}
	if out.Media, err = LoadMedia(root, &out.Model, req.Media); err != nil {
		return err
	}
	layers, trusted, gateSetting, err := PolicyLayers(cfg, root, req.Workspace)
	if err != nil {
		return err
	}
	if out.Gate, err = host.Gate(ctx, gateSetting); err != nil {
		return err
	}
	hostLayer := policy.Layer{Source: policy.SourceHostRequest}
	if req.AllowFileMutation {
		yes := true
		hostLayer.AllowEdit, hostLayer.AllowWrite = &yes, &yes
	}
	out.Policy = policy.Resolve(nil, nil, append(layers, hostLayer)...)
	out.Res = LoadResources(cfg, root, trusted, host.Builtins(), req.RunID)

	// The session comes last: it takes a lock and may create a file.
	if out.Sess, out.NewSess, err = OpenSession(cfg, &req); err != nil {
		return err
	}
	return nil
}
