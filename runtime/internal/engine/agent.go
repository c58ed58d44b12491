package engine

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/engine/reasoning"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/shell"
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
	// Copilot is the GitHub Copilot provider (copilot.go) on the
	// embedder's copilot.Host. Default (nil): one on the coding adapter's
	// file host (~/.octet/credentials/copilot.json and the "copilot"
	// member of ~/.octet/settings.json), whose models are listed only
	// while a login is stored.
	Copilot *copilot.Provider
	// RecoveredOutput builds the event that reports an interrupted or
	// discarded attempt's partial text or reasoning (channel
	// protocol.ChannelText or ChannelReasoning) of step. Protocol 1 has no
	// such event: the façade supplies its own Go-API-only type here.
	// Default (nil): such output is not reported.
	RecoveredOutput func(step int, channel, text string) protocol.RunEvent
}

// PolicyLayer is one source's partial tool-policy settings.
type PolicyLayer = policy.Layer

// Policy sources of the operator's layers.
const (
	SourceConfig      = policy.SourceConfig
	SourceEnvironment = policy.SourceEnvironment
	SourceCLI         = policy.SourceCLI
)

// PolicyFromEnv builds the environment layer from OCTET_ALLOW_SHELL,
// OCTET_ALLOW_PROCESS, OCTET_ALLOW_REMOTE_READ, OCTET_BASH_TIMEOUT_MS,
// OCTET_MAX_OUTPUT_BYTES and OCTET_SHELL_PATH.
func PolicyFromEnv(getenv func(string) string) (PolicyLayer, error) { return policy.FromEnv(getenv) }

// Agent is the embedding entry point.
type Agent struct {
	opts Options
	log  *slog.Logger // never nil

	mu             sync.Mutex
	reasoning      ReasoningConfig // effective selection (Reasoning)
	maxNetworkWait *int64          // ms; nil: no ceiling
	maxRetries     int             // -1: recovery's default
	toolBudget     int             // bytes of the serialized tool array a run may send
	gate           gate.Reviewer   // the terminal gate of runs started afterwards (gate.go)

	observer   atomic.Pointer[observerHook]      // SetObserver (observe.go)
	delegation atomic.Pointer[reasoning.Manager] // installed by Ultra (delegation.go)

	docsMu    sync.Mutex
	docsDir   string           // materialized documentation (DocsDir), once known
	resCache  *resources.Cache // the resource layers' skills and extensions between runs
	copilotSt copilotState     // the Copilot provider (copilot.go)

	shells *shell.Registry // process groups of running bash commands
	runs   sync.WaitGroup  // runs not yet ended (their sessions still open)
}

// WaitRuns waits until every run has ended and closed its session, or
// until timeout; it reports whether they all ended.
func (a *Agent) WaitRuns(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { a.runs.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// New validates opts, fills defaults and returns an Agent.
func New(opts Options) (*Agent, error) {
	var errs []error
	if opts.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			errs = append(errs, errors.New("runtime: no home directory: set Options.Home"))
		}
		opts.Home = h
	}
	if opts.Home != "" && !filepath.IsAbs(opts.Home) {
		errs = append(errs, errors.New("runtime: Options.Home must be absolute"))
	}
	if opts.SessionDir != "" && !filepath.IsAbs(opts.SessionDir) {
		errs = append(errs, errors.New("runtime: Options.SessionDir must be absolute"))
	}
	roots := make([]string, len(opts.ResourceRoots))
	for i, r := range opts.ResourceRoots {
		if !filepath.IsAbs(r) {
			errs = append(errs, errors.New("runtime: Options.ResourceRoots["+strconv.Itoa(i)+"] must be absolute"))
		}
		roots[i] = filepath.Clean(r)
	}
	opts.ResourceRoots = roots
	for _, l := range opts.PolicyLayers {
		if err := policy.CheckLayer(l); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Sleep == nil {
		opts.Sleep = defaultSleep
	}
	if opts.Jitter == nil {
		opts.Jitter = defaultJitter
	}
	a := &Agent{opts: opts, log: log, resCache: resources.NewCache(), maxRetries: -1, toolBudget: DefaultToolSchemaBudgetBytes, shells: &shell.Registry{}}
	if a.opts.ProviderFactory == nil {
		a.opts.ProviderFactory = a.defaultFactory
	}
	return a, nil
}

// Models returns the model inventory, route-effective (CONTRACT §7), and
// the endpoints whose live listing failed. With offline true it never
// touches the network.
func (a *Agent) Models(ctx context.Context, offline bool) ([]protocol.ModelInfo, []protocol.DiscoveryIssue, error) {
	return a.models(ctx, offline)
}
