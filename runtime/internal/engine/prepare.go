package engine

import (
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/prepare"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// prepared is a validated run (prepare.Run) as the driver reads it, with
// the redactor of its credentials. Whoever holds it must close it.
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
	guard    *confine.Guard // the operator's directories edit and write never change (prepare.OperatorGuard)

	resources      *resources.Set     // the run's resource layers, open (prepare.LoadResources)
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

// prepare validates req and prepares the run (prepare.Prepare). A failure
// is a *RunError and leaves nothing open.
func (a *Agent) prepare(ctx context.Context, req RunRequest) (*prepared, *RunError) {
	cfg := a.prepareConfig()
	var r prepare.Run
	if err := prepare.Prepare(ctx, &cfg, (*prepareHost)(a), req, &r); err != nil {
		return nil, err
	}
	return &prepared{req: r.Req, model: r.Model, prov: r.Prov, root: r.Root, sess: r.Sess, tools: r.Tools, policy: r.Policy,
		maxSteps: r.MaxSteps, media: r.Media, newSess: r.NewSess, key: r.Key, red: newRedactor(r.Key, r.Headers), guard: r.Guard,
		resources: r.Res.Set, skills: r.Res.Skills, skillNames: r.Res.SkillNames, resourcePrompt: r.Res.Prompt,
		gate: r.Gate, extensions: r.Res.Extensions}, nil
}

// prepareConfig is what package prepare reads of the agent's options.
func (a *Agent) prepareConfig() prepare.Config {
	return prepare.Config{Home: a.opts.Home, SessionDir: a.opts.SessionDir, ResourceRoots: a.opts.ResourceRoots,
		TrustWorkspace: a.opts.TrustWorkspace, PolicyLayers: a.opts.PolicyLayers, Getenv: a.opts.Getenv, Now: a.opts.Now,
		Log: a.log, Cache: a.resCache, NewProvider: a.opts.ProviderFactory, Auth: a.authEnv(), Copilot: &a.copilotSt}
}

// prepareHost is the Agent as package prepare's Host.
type prepareHost Agent

func (h *prepareHost) ToolBudget() int {
	a := (*Agent)(h)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.toolBudget
}

func (h *prepareHost) Gate(ctx context.Context, setting *policy.TerminalGate) (*gate.State, *RunError) {
	return (*Agent)(h).prepareGate(ctx, setting)
}

func (h *prepareHost) Builtins() []resources.Skill { return (*Agent)(h).builtinSkills() }
