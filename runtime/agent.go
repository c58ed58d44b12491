package runtime

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/copilot"
	internalcopilot "octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/engine"
)

// Options configure an Agent. Zero values take the documented defaults.
type Options struct {
	// Home is the user's home directory, where ~/.octet lives. Default:
	// os.UserHomeDir().
	Home string
	// SessionDir is the session store: the directory of the session files
	// of runs whose request names no session_dir, and of OpenSession with
	// an empty dir. It must be absolute. Default: Home/.octet/sessions.
	SessionDir string
	// Logger receives structured diagnostics: a credential refresh (info),
	// an unreadable credentials file (warn), a run's internal error with
	// its redacted panic value and stack (error), and, at LevelTrace, every
	// state machine transition of a run. Records carry run_id where they
	// concern a run. Any [slog.Handler] fits (the binary bridges to
	// zerolog). Default (nil): nothing is logged.
	Logger *slog.Logger
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// HTTPClient performs provider and discovery requests. Default: a
	// client with no overall timeout (streams are bounded by idle timeouts).
	// Its CheckRedirect is ignored: the host never follows a redirect (a
	// 3xx answer fails the call with provider_error naming the status), so
	// that no credential reaches another address.
	HTTPClient *http.Client
	// Getenv reads the environment (credentials). Default: os.Getenv.
	Getenv func(string) string
	// IdleTimeout is the longest a provider stream may go without a byte.
	// Default: 60 s.
	IdleTimeout time.Duration
	// PolicyLayers are the operator's tool-policy layers (config,
	// environment, CLI), lowest precedence first; the run's own layer
	// (allow_file_mutation, source host_request) goes on top.
	PolicyLayers []PolicyLayer
	// ProviderFactory builds the provider of a resolved route. Default: the
	// module's Chat Completions, Responses and Messages clients.
	ProviderFactory ProviderFactory
	// Sleep waits between recovery attempts and during readiness waits
	// (a loading model, lifecycle.go); it returns early with ctx's error.
	// Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) for backoff jitter. Default:
	// math/rand/v2.
	Jitter func() float64
	// CodexTokenURL and CodexBaseURL override the Codex route's OAuth token
	// endpoint and API root (tests and proxies). Default: the real ones.
	CodexTokenURL string
	CodexBaseURL  string
	// TrustWorkspace applies every run's workspace .octet/settings.json, as
	// if the workspace were listed in trusted_workspaces of
	// ~/.octet/settings.json. The workspace's .octet is then a resource
	// layer too (CONTRACT §18).
	TrustWorkspace bool
	// ResourceRoots are the operator's explicit resource layers, absolute
	// directories, above ~/.octet and the trusted workspace's .octet in
	// the order given (CONTRACT §18): their AGENTS.md reaches the model and
	// their skills/ are offered. See ResourceRootsFromEnv.
	ResourceRoots []string
	// Docs is the documentation the binary carries (octethost.Docs): when
	// set, runs offer the built-in octet-docs skill, whose files DocsDir
	// materializes on first use. Default: none.
	Docs fs.FS
	// Version names the documentation's directory (the host's version).
	// Default: "(devel)".
	Version string
	// Copilot is the GitHub Copilot provider (copilot.NewProvider) on the
	// embedder's copilot.Host. Default (nil): one on the coding adapter's
	// file host (~/.octet/credentials/copilot.json and the "copilot"
	// member of ~/.octet/settings.json), whose models are listed only
	// while a login is stored.
	Copilot *copilot.Provider
}

// engine returns the engine's options for o.
func (o Options) engine() engine.Options {
	return engine.Options{
		Home: o.Home, SessionDir: o.SessionDir, Logger: o.Logger, Now: o.Now, HTTPClient: o.HTTPClient,
		Getenv: o.Getenv, IdleTimeout: o.IdleTimeout, PolicyLayers: policyLayers(o.PolicyLayers),
		ProviderFactory: o.ProviderFactory.engine(), Sleep: o.Sleep, Jitter: o.Jitter,
		CodexTokenURL: o.CodexTokenURL, CodexBaseURL: o.CodexBaseURL, TrustWorkspace: o.TrustWorkspace,
		ResourceRoots: o.ResourceRoots, Docs: o.Docs, Version: o.Version, Copilot: internalcopilot.Unwrap(o.Copilot),
		RecoveredOutput: recoveredOutput,
	}
}

// Agent is the embedding entry point. It is safe for concurrent use; each
// run is driven by its own goroutine and observed through a RunControl.
type Agent struct {
	e *engine.Agent
}

// New validates opts, fills defaults and returns an Agent.
func New(opts Options) (*Agent, error) {
	e, err := engine.New(opts.engine())
	if err != nil {
		return nil, err
	}
	return &Agent{e: e}, nil
}

// Run validates req and starts the run. A request that fails validation
// returns a *RunError and no RunControl: nothing was accepted (CONTRACT
// §8). ctx bounds the whole run.
func (a *Agent) Run(ctx context.Context, req RunRequest) (*RunControl, error) {
	rc, err := a.e.Run(ctx, req.engine())
	if err != nil {
		return nil, runError(err)
	}
	return &RunControl{rc: rc}, nil
}

// Models returns the model inventory, route-effective (CONTRACT §7), and
// the endpoints whose live listing failed. With offline true it never
// touches the network.
func (a *Agent) Models(ctx context.Context, offline bool) ([]protocol.ModelInfo, []protocol.DiscoveryIssue, error) {
	return a.e.Models(ctx, offline)
}

// WaitRuns waits until every run has ended and closed its session, or
// until timeout; it reports whether they all ended.
func (a *Agent) WaitRuns(timeout time.Duration) bool { return a.e.WaitRuns(timeout) }

// TerminateShells ends every command the agent's runs started: SIGTERM to
// each process group (and to processes that left it), up to grace for them
// to exit, then SIGKILL to survivors (CONTRACT §14). Commands started
// afterwards are refused, and the spare command guard (a child process the
// runtime keeps ready for the next bash command, see docs/operations.md)
// is ended. The host calls it on HUP, INT, QUIT and TERM.
func (a *Agent) TerminateShells(grace time.Duration) { a.e.TerminateShells(grace) }

// SetMaxNetworkWait bounds the elapsed recovery of a logical turn (the
// assistant turn of a step, or an auxiliary operation) after its first
// positively identified pre-send outage: every later network wait, every
// retry (a server's Retry-After included) and the opening of every later
// request (dial and TLS handshake get only what is left) must fit it, and a
// minimum delay beyond what is left stops recovery with
// network_wait_exceeded rather than retrying early. It does not bound
// streaming a response. nil means no ceiling (the default), zero disables
// waiting. It applies to runs started afterwards.
func (a *Agent) SetMaxNetworkWait(d *time.Duration) { a.e.SetMaxNetworkWait(d) }

// SetMaxRetries sets the retry budget of a turn (default 4: up to five
// attempts reach the provider); zero disables retries.
func (a *Agent) SetMaxRetries(n int) { a.e.SetMaxRetries(n) }

// DefaultToolSchemaBudgetBytes is the default budget of the serialized
// tool array (CONTRACT §15).
const DefaultToolSchemaBudgetBytes = 128 << 10

// SetToolSchemaBudgetBytes bounds the size of the tool array a run sends, in
// bytes exactly as the route's wire mode serializes it (default 128 KiB). A
// run whose tools exceed it is refused (tool_schema_too_large) before any
// provider I/O; tools are never dropped or rewritten to fit. Zero permits
// only an empty tool list; a negative n counts as zero. It applies to runs
// started afterwards.
func (a *Agent) SetToolSchemaBudgetBytes(n int) { a.e.SetToolSchemaBudgetBytes(n) }

// Observation is one event of a run, as the observer receives it: the
// run's id, and for a worker run (see DelegateTool) the id of the run
// that delegated to it.
type Observation struct {
	RunID string
	// Parent is the delegating run's id for a worker's event, "" for a run
	// the application started.
	Parent string
	Event  Event
}

// SetObserver installs fn, which receives every event of every run started
// afterwards and of their worker runs, in each run's order, before the
// run's consumer gets it; nil removes it. fn runs on the run's goroutine:
// it must not block, and must not call into the run (a slow observer slows
// the run). The Ultra reasoning mode needs an observer: removing it does
// not leave Ultra, but Ultra cannot be selected again without one.
func (a *Agent) SetObserver(fn func(Observation)) {
	if fn == nil {
		a.e.SetObserver(nil)
		return
	}
	a.e.SetObserver(func(o engine.Observation) { fn(Observation(o)) })
}

// SetReasoning sets the effort used by runs that name none and whose
// session has no restored selection, and what Reasoning reports from now
// on: after a resume has restored a session's selection (its baseline and
// reasoning updates) into Reasoning, SetReasoning overrides it there. A
// resumed session's own runs keep continuing from their recorded
// selection unless the run request names an effort. Selecting Ultra needs
// an observer (ErrObserverRequired); the next run applies it where its
// route declares the mode, and elsewhere uses the effort alone.
func (a *Agent) SetReasoning(cfg ReasoningConfig) error {
	return a.e.SetReasoning(engine.ReasoningConfig(cfg))
}

// Reasoning returns the effective selection: the last one set with
// SetReasoning, or chosen, restored or changed by a run since. After a
// reasoning update its Effort is the update's (the effort in effect), not
// the request's pinned baseline; Ultra is true while the latest baseline
// is the Ultra mode's and no update followed it.
func (a *Agent) Reasoning() ReasoningConfig { return ReasoningConfig(a.e.Reasoning()) }

// DelegationInstalled reports whether the agent has a delegation manager:
// selecting Ultra installs it, and it stays.
func (a *Agent) DelegationInstalled() bool { return a.e.DelegationInstalled() }

// DocsDir materializes the documentation of Options.Docs under
// ${XDG_DATA_HOME:-$HOME/.local/share}/octet/docs/<version>/ when it is
// not there yet (or is stale), atomically, and returns the directory. It
// fails when Options.Docs is nil.
func (a *Agent) DocsDir() (string, error) { return a.e.DocsDir() }

// DocsSkill is the name of the built-in skill that points the model at the
// documentation the binary carries.
const DocsSkill = "octet-docs"

// ResourceRootsFromEnv splits OCTET_RESOURCE_ROOTS, a list of absolute
// directories separated by ':' (empty elements ignored), the environment's
// explicit resource roots (CONTRACT §18).
func ResourceRootsFromEnv(getenv func(string) string) ([]string, error) {
	return engine.ResourceRootsFromEnv(getenv)
}

// LevelTrace is the level of the state machines' transition lines, one
// step below [slog.LevelDebug]. slog's own handlers print it as
// "DEBUG-4"; a handler that wants the name "TRACE" can rename it with
// [slog.HandlerOptions] ReplaceAttr. The runtime installs its tracers only
// when Options.Logger is enabled at this level, so a logger that drops it
// pays nothing for tracing.
const LevelTrace = slog.Level(-8)

// Redaction: every credential a run sent (an API key, a custom header value
// of at least MinRedactedBytes bytes) is replaced by RedactedMarker in what
// the run reports and records.
const (
	RedactedMarker   = "[redacted]"
	MinRedactedBytes = 8
)
