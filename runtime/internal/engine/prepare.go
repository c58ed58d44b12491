package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"unicode"
	"unicode/utf8"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// prepared is a validated run: everything resolved, the workspace and the
// session open. Whoever holds it must close it.
type prepared struct {
	req      RunRequest
	model    catalog.Model
	prov     provider.Provider
	root     *confine.Root
	sess     *store.Session
	tools    []toolDef
	policy   policy.Effective
	maxSteps int
	media    []provider.Media // the run's typed inputs, bytes read
	newSess  bool
	key      string         // the route's credential, scrubbed from every message
	red      *redactor      // every credential sent, redacted from the run's output (redact.go)
	guard    *confine.Guard // the operator's directories edit and write never change (protect.go)

	resources      *resources.Set     // the run's resource layers, open (resources.go)
	skills         *resources.Catalog // the skills offered, by name
	skillNames     []string           // the same, sorted, for accepted
	resourcePrompt string             // context files and skills for the system prompt

	gate *gate.State // the terminal gate, nil when none (package gate)
	// Extension discovery's findings, sent right after started (resources.go).
	extensions []protocol.ExtensionNotification
}

func (p *prepared) close() {
	// A provider that holds a connection across calls (the Responses
	// WebSocket transport) releases it with the run.
	if c, ok := p.prov.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	if p.sess != nil {
		p.sess.Close()
	}
	if p.root != nil {
		p.root.Close()
	}
	p.resources.Close()
	p.gate.Close()
}

// prepare validates every field of req (CONTRACT §8) and resolves the
// route, the workspace, the tools, the policy and the session. A failure
// is a *RunError and leaves nothing open.
func (a *Agent) prepare(ctx context.Context, req RunRequest) (*prepared, *RunError) {
	p := &prepared{req: req}
	ok := false
	defer func() {
		if !ok {
			p.close() // a refused run leaves nothing open
		}
	}()
	if store.ValidateID(req.RunID) != nil {
		return nil, refuse(protocol.CodeInvalidValue, "run_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'")
	}
	if req.Prompt == "" {
		return nil, refuse(protocol.CodeInvalidValue, "prompt is empty")
	}
	if len(req.Prompt) > MaxPromptBytes {
		return nil, refuse(protocol.CodePromptTooLarge, "prompt is %s bytes; the limit is 524288", strconv.Itoa(len(req.Prompt)))
	}
	if err := checkDisplayText(req.DisplayText); err != nil {
		return nil, err
	}
	p.maxSteps = DefaultMaxSteps
	if req.MaxSteps != nil {
		if *req.MaxSteps < 1 || *req.MaxSteps > MaxMaxSteps {
			return nil, refuse(protocol.CodeInvalidValue, "max_steps must be between 1 and 1000")
		}
		p.maxSteps = *req.MaxSteps
	}
	if req.ReasoningEffort != nil {
		switch *req.ReasoningEffort {
		case "low", "medium", "high":
		default:
			return nil, refuse(protocol.CodeInvalidValue, `reasoning.effort must be "low", "medium" or "high"`)
		}
	}
	for i, h := range req.History {
		if h.Role != "user" && h.Role != "assistant" {
			return nil, refuse(protocol.CodeHistoryInvalid, `history[%s].role must be "user" or "assistant"`, strconv.Itoa(i))
		}
		if h.Content == "" {
			return nil, refuse(protocol.CodeHistoryInvalid, "history[%s].content is empty", strconv.Itoa(i))
		}
	}
	if err := p.selectTools(req.Tools); err != nil {
		return nil, err
	}

	if !filepath.IsAbs(req.Workspace) {
		return nil, refuse(protocol.CodeWorkspaceInvalid, "workspace must be an absolute path")
	}
	root, err := confine.Open(req.Workspace)
	switch {
	case errors.Is(err, confine.ErrWorkspaceNotFound):
		return nil, refuse(protocol.CodeWorkspaceInvalid, "workspace does not exist")
	case errors.Is(err, confine.ErrWorkspaceNotDir):
		return nil, refuse(protocol.CodeWorkspaceInvalid, "workspace is not a directory")
	case err != nil:
		return nil, refuse(protocol.CodeWorkspaceInvalid, "workspace cannot be opened")
	}
	p.root = root
	p.guard = operatorGuard(root, a.opts.Home, req.Workspace, a.opts.ResourceRoots)

	if err := a.resolveRoute(ctx, p); err != nil {
		return nil, err
	}
	if req.ReasoningEffort != nil && !p.model.SupportsReasoning {
		return nil, refuse(protocol.CodeReasoningUnsupported, "the route does not support reasoning; omit reasoning")
	}
	if err := a.checkToolBudget(p); err != nil {
		return nil, err
	}
	if err := p.loadMedia(); err != nil {
		return nil, err
	}
	layers, trusted, gateSetting, perr := a.policyLayers(p.root, req.Workspace)
	if perr != nil {
		return nil, perr
	}
	if err := a.prepareGate(ctx, p, gateSetting); err != nil {
		return nil, err
	}
	hostLayer := policy.Layer{Source: policy.SourceHostRequest}
	if req.AllowFileMutation {
		yes := true
		hostLayer.AllowEdit, hostLayer.AllowWrite = &yes, &yes
	}
	p.policy = policy.Resolve(nil, nil, append(layers, hostLayer)...)
	a.loadResources(p, trusted)

	// The session comes last: it takes a lock and may create a file.
	if err := a.openSession(p); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

func checkDisplayText(s string) *RunError {
	if len(s) > MaxDisplayTextBytes {
		return refuse(protocol.CodeDisplayTextInvalid, "display_text is %s bytes; the limit is 262144", strconv.Itoa(len(s)))
	}
	if !utf8.ValidString(s) {
		// A U+FFFD the application sent is text; only bytes that are
		// not UTF-8 are refused.
		return refuse(protocol.CodeDisplayTextInvalid, "display_text is not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return refuse(protocol.CodeDisplayTextInvalid, "display_text has a control character at byte %s; only newline and tab are allowed", strconv.Itoa(i))
		}
	}
	return nil
}
