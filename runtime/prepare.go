package runtime

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/provider"
	"octet.dev/host/runtime/internal/resources"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/internal/tools"
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
}

// toolDef is a tool registered for a run.
type toolDef struct {
	spec   provider.ToolSpec
	effect policy.Effect
}

// bashSpec is the bash tool's schema. bash is registered always and denied
// unless the operator enabled process and shell effects (CONTRACT §10).
var bashSpec = provider.ToolSpec{
	Name:        "bash",
	Description: "Run a shell command in the workspace directory with the shell's -c; stdin is empty. Denied unless the operator enabled shell and process effects.",
	Parameters:  []byte(`{"type":"object","properties":{"command":{"type":"string","description":"The command line, run with the shell's -c."},"timeout_ms":{"type":"integer","minimum":1,"description":"Kill the command after this many milliseconds."}},"required":["command"],"additionalProperties":false}`),
}

// allTools returns every tool this build registers, in a fixed order.
func allTools() []toolDef {
	var defs []toolDef
	for _, s := range tools.Specs() {
		defs = append(defs, toolDef{
			spec:   provider.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters},
			effect: policy.Effect(s.Effect),
		})
	}
	return append(defs, toolDef{spec: bashSpec, effect: policy.EffectProcess})
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
	layers, trusted, perr := a.policyLayers(p.root, req.Workspace)
	if perr != nil {
		return nil, perr
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

// DefaultToolSchemaBudgetBytes is the default budget of the serialized
// tool array (CONTRACT §15).
const DefaultToolSchemaBudgetBytes = 128 << 10

// SetToolSchemaBudgetBytes bounds the size of the tool array a run sends, in
// bytes exactly as the route's wire mode serializes it (default 128 KiB). A
// run whose tools exceed it is refused (tool_schema_too_large) before any
// provider I/O; tools are never dropped or rewritten to fit. Zero permits
// only an empty tool list; a negative n counts as zero. It applies to runs
// started afterwards.
func (a *Agent) SetToolSchemaBudgetBytes(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.toolBudget = max(n, 0)
}

// checkToolBudget refuses a run whose tool array is over the budget. A
// provider that cannot size its own array (a custom ProviderFactory's) is
// measured by the neutral JSON form of the specs.
func (a *Agent) checkToolBudget(p *prepared) *RunError {
	a.mu.Lock()
	budget := a.toolBudget
	a.mu.Unlock()
	specs := make([]provider.ToolSpec, len(p.tools))
	for i, t := range p.tools {
		specs[i] = t.spec
	}
	var size int
	var err error
	if s, ok := p.prov.(provider.ToolSizer); ok {
		size, err = s.ToolArrayBytes(specs)
	} else if len(specs) > 0 {
		type neutral struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  jsontext.Value `json:"parameters,omitempty"`
		}
		arr := make([]neutral, len(specs))
		for i, t := range specs {
			arr[i] = neutral{t.Name, t.Description, t.Parameters}
		}
		var b []byte
		b, err = json.Marshal(arr)
		size = len(b)
	}
	switch {
	case err != nil:
		return refuse(protocol.CodeInternalError, "the tool array cannot be serialized: %s", err.Error())
	case size > budget:
		return refuse(protocol.CodeToolSchemaTooLarge, "the tool array is %s bytes; the budget is %s (Agent.SetToolSchemaBudgetBytes); choose fewer tools with \"tools\"",
			strconv.Itoa(size), strconv.Itoa(budget))
	}
	return nil
}

// loadMedia checks the run's media against the route, then reads each
// input beneath the workspace (CONTRACT §16). A type the route cannot take
// is refused before any file is read.
func (p *prepared) loadMedia() *RunError {
	refs := p.req.Media
	for i, r := range refs {
		switch {
		case r.Type == provider.MediaImage && !p.model.Vision():
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is an image, but the route does not accept image input (model %s takes %s)",
				strconv.Itoa(i), strconv.Quote(trunc(p.model.ID, 128)), strings.Join(p.model.EffectiveModalities(), ", "))
		case r.Type == provider.MediaAudio && !p.model.Audio():
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is audio, but the route does not accept audio input (only OpenAI Chat routes that declare audio do)", strconv.Itoa(i))
		}
	}
	var images, audio int64
	for i, r := range refs {
		m, err := media.Load(p.root, i, media.Ref{Type: r.Type, Path: r.Path})
		switch {
		case errors.Is(err, media.ErrTooLarge):
			return refuse(protocol.CodeMediaTooLarge, "%s", strings.TrimPrefix(err.Error(), media.ErrTooLarge.Error()+": "))
		case err != nil:
			return refuse(protocol.CodeMediaInvalid, "%s", strings.TrimPrefix(err.Error(), media.ErrInvalid.Error()+": "))
		}
		if m.Type == provider.MediaAudio && !slices.Contains(catalog.AudioFormats, m.Format) {
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is %s audio; the route accepts only %s", strconv.Itoa(i), m.Format, strings.Join(catalog.AudioFormats, " and "))
		}
		if m.Type == provider.MediaImage {
			images += m.Bytes
		} else {
			audio += m.Bytes
		}
		if images > media.MaxImageTotalBytes {
			return refuse(protocol.CodeMediaTooLarge, "the images add up to more than 20971520 bytes (at media[%s])", strconv.Itoa(i))
		}
		if audio > media.MaxAudioTotalBytes {
			return refuse(protocol.CodeMediaTooLarge, "the audio clips add up to more than 41943040 bytes (at media[%s])", strconv.Itoa(i))
		}
		p.media = append(p.media, m)
	}
	return nil
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

func (p *prepared) selectTools(names []string) *RunError {
	all := allTools()
	if names == nil {
		p.tools = all
		return nil
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return refuse(protocol.CodeToolsInvalid, "tools names %s twice", strconv.Quote(trunc(n, 64)))
		}
		seen[n] = true
		if !slices.ContainsFunc(all, func(d toolDef) bool { return d.spec.Name == n }) {
			return refuse(protocol.CodeToolsInvalid, "unknown tool %s; the tools are read, ls, grep, find, edit, write, bash", strconv.Quote(trunc(n, 64)))
		}
	}
	// The selected tools keep the fixed order of allTools, whatever order
	// the request names them in: the tools array heads every model
	// request, and the same tools in another order would make the
	// provider's prompt cache miss on the whole conversation.
	p.tools = []toolDef{}
	for _, d := range all {
		if seen[d.spec.Name] {
			p.tools = append(p.tools, d)
		}
	}
	return nil
}

// trunc cuts s to about n bytes at a rune boundary, marking the cut.
func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncUTF8(s, n) + "…"
}

// forbiddenHeaders are hop-by-hop and routing headers (CONTRACT §8) plus
// the credential headers, which only api_key may set.
var forbiddenHeaders = []string{"authorization", "x-api-key", "proxy-authorization", "cookie"}

func (a *Agent) resolveRoute(ctx context.Context, p *prepared) *RunError {
	req := p.req
	key := ""
	var headers map[string]string
	if r := req.Route; r != nil {
		if r.BaseURL == "" {
			return refuse(protocol.CodeRouteInvalid, "inline route fields need base_url; without base_url, model names a catalog entry and the route fields must be omitted")
		}
		if err := checkHeaders(r.Headers); err != nil {
			return err
		}
		names := make([]string, 0, len(r.Headers))
		for n := range r.Headers {
			names = append(names, n)
		}
		slices.Sort(names)
		if err := catalog.ValidateHeaderNames(names); err != nil {
			return refuse(protocol.CodeHeadersRejected, "%s", err.Error())
		}
		m, err := catalog.InlineRoute(catalog.InlineSpec{
			Provider: r.Provider, BaseURL: r.BaseURL, Model: req.Model, Mode: r.Mode,
			ContextWindowTokens: r.ContextWindowTokens, MaxOutputTokens: r.MaxOutputTokens,
			InputModalities: r.InputModalities, Vision: r.Vision, SupportsReasoning: r.SupportsReasoning,
		})
		if err != nil {
			return refuse(protocol.CodeRouteInvalid, "%s", scrub(err.Error(), r.APIKey))
		}
		p.model, key = m, r.APIKey
		headers = r.Headers
	} else if name, ok := copilotName(req.Model); ok {
		// A Copilot route carries no key: the Copilot client adds the
		// session to every request (copilot.go).
		m, prov, err := a.copilotRoute(ctx, name)
		if err != nil {
			return err
		}
		p.model, p.prov, p.key, p.red = m, prov, "", newRedactor("", nil)
		return nil
	} else if name, ok := strings.CutPrefix(req.Model, codexPrefix); ok {
		m, k, h, err := a.codexRoute(ctx, name)
		if err != nil {
			return err
		}
		p.model, key, headers = m, k, h
	} else {
		cat, err := catalog.Load(a.opts.Home)
		if err != nil {
			return refuse(protocol.CodeModelNotFound, "the model catalog cannot be loaded: %s", err.Error())
		}
		m, ok := cat.Lookup(req.Model)
		if !ok {
			m, ok = discoveredRoute(cat, req.Model)
		}
		if !ok {
			return refuse(protocol.CodeModelNotFound, "no model %s in the catalog; list them with the models command, or define an inline route with base_url", strconv.Quote(trunc(req.Model, 128)))
		}
		p.model = m
		// Built-in providers always need a key; a configured provider needs
		// one when it names api_key_env (a local server may take none).
		builtin := m.Provider == catalog.ProviderOpenAI || m.Provider == catalog.ProviderAnthropic
		if key = a.credential(ctx, m); key == "" && (builtin || m.CredentialEnv != "") {
			return refuse(protocol.CodeCredentialsMissing, "no API key for provider %s: set %s or write ~/.octet/credentials/%s.json", strconv.Quote(m.Provider), m.CredentialEnv, m.Provider)
		}
	}
	prov, err := a.opts.ProviderFactory(routeFor(p.model, key, headers))
	var unsupported errUnsupportedMode
	switch {
	case errors.As(err, &unsupported):
		return refuse(protocol.CodeUnsupported, "%s", err.Error())
	case err != nil:
		return refuse(protocol.CodeRouteInvalid, "%s", scrub(err.Error(), key))
	}
	p.prov, p.key, p.red = prov, key, newRedactor(key, headers)
	return nil
}

func checkHeaders(h map[string]string) *RunError {
	if len(h) > MaxHeaderEntries {
		return refuse(protocol.CodeHeadersRejected, "custom_headers has %s entries; the limit is 64", strconv.Itoa(len(h)))
	}
	total := 0
	for n, v := range h {
		total += len(n) + len(v)
		if slices.Contains(forbiddenHeaders, strings.ToLower(n)) {
			return refuse(protocol.CodeHeadersRejected, "custom_headers may not set %s; credentials go in api_key", http.CanonicalHeaderKey(trunc(n, 64)))
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return refuse(protocol.CodeHeadersRejected, "custom header %s has a control character in its value", strconv.Quote(trunc(n, 64)))
		}
	}
	if total > MaxHeaderBytes {
		return refuse(protocol.CodeHeadersRejected, "custom_headers total %s bytes; the limit is 65536", strconv.Itoa(total))
	}
	return nil
}

// scrub removes a credential from a message.
func scrub(msg, key string) string {
	if len(key) >= 4 {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}

// credential finds the API key of a catalog route: the environment
// variable, then ~/.octet/credentials/<provider>.json {"api_key": "..."}.
func (a *Agent) credential(ctx context.Context, m catalog.Model) string {
	if m.CredentialEnv != "" {
		if v := strings.TrimSpace(a.opts.Getenv(m.CredentialEnv)); v != "" {
			return v
		}
	}
	data, err := os.ReadFile(filepath.Join(a.opts.Home, ".octet", "credentials", m.Provider+".json"))
	if err != nil {
		return ""
	}
	var c struct {
		APIKey string `json:"api_key"`
	}
	if json.Unmarshal(data, &c, json.RejectUnknownMembers(false)) != nil {
		a.log.LogAttrs(ctx, slog.LevelWarn, "credentials file is not valid JSON; ignoring it", slog.String("provider", m.Provider))
		return ""
	}
	return strings.TrimSpace(c.APIKey)
}

// sessionsDir is the default session directory.
// routeFor is the Route the provider factory gets for model m with its
// credential and extra headers.
func routeFor(m catalog.Model, key string, headers map[string]string) Route {
	return Route{ModelID: m.ID, APIModel: m.APIModel, Provider: m.Provider, Mode: string(m.Mode),
		BaseURL: m.BaseURL, APIKey: key, Headers: headers, SupportsReasoning: m.SupportsReasoning,
		AcceptsPromptCacheKey: acceptsPromptCacheKey(m), Transport: m.Transport, AudioOutput: m.AudioOutput(), ImageOutput: m.ImageOutput()}
}

func (a *Agent) sessionsDir() string {
	if a.opts.SessionDir != "" {
		return a.opts.SessionDir
	}
	return filepath.Join(a.opts.Home, ".octet", "sessions")
}

func (a *Agent) openSession(p *prepared) *RunError {
	dir := p.req.SessionDir
	if dir == "" {
		dir = a.sessionsDir()
	} else if !filepath.IsAbs(dir) {
		return refuse(protocol.CodeSessionDirInvalid, "session_dir must be an absolute path")
	}
	id := p.req.SessionID
	if id == "" {
		id = store.NewID()
	}
	s, err := store.Open(dir, id, store.Options{Now: a.opts.Now})
	switch {
	case errors.Is(err, store.ErrLocked):
		return refuse(protocol.CodeSessionLocked, "session %s is in use by another run or process", strconv.Quote(id))
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrUnsupportedSchema):
		return refuse(protocol.CodeSessionCorrupt, "session %s cannot be resumed: %s", strconv.Quote(id), err.Error())
	case errors.Is(err, store.ErrInvalidID):
		return refuse(protocol.CodeInvalidValue, "session_id is not a valid ID")
	case err != nil:
		return refuse(protocol.CodeSessionDirInvalid, "session_dir cannot be used: %s", err.Error())
	}
	p.sess = s
	p.newSess = len(s.Messages()) == 0
	if len(p.req.History) > 0 && !p.newSess {
		return refuse(protocol.CodeHistoryInvalid, "history seeds only a new session; session %s already has messages", strconv.Quote(id))
	}
	return nil
}

// policyLayers returns the operator's layers, lowest precedence first:
// ~/.octet/settings.json, the workspace's .octet/settings.json when the
// workspace is trusted, then the embedder's (environment, CLI) layers
// (CONTRACT §10). The workspace file is read through the workspace root,
// so a symlink cannot substitute another file.
func (a *Agent) policyLayers(root *confine.Root, workspace string) (layers []policy.Layer, trusted bool, _ *RunError) {
	user, err := policy.LoadSettings(filepath.Join(a.opts.Home, ".octet", "settings.json"), "~/.octet/settings.json")
	if err != nil {
		return nil, false, refuse(protocol.CodeConfigInvalid, "%s", err.Error())
	}
	layers = []policy.Layer{user.Layer()}
	trusted = a.opts.TrustWorkspace || user.Trusts(workspace)
	if trusted {
		data, err := root.ReadFile(".octet/settings.json")
		switch {
		case errors.Is(err, confine.ErrNotFound):
		case err != nil:
			return nil, false, refuse(protocol.CodeConfigInvalid, "the workspace's .octet/settings.json cannot be read")
		default:
			ws, err := policy.ParseSettings(data, "workspace .octet/settings.json")
			if err != nil {
				return nil, false, refuse(protocol.CodeConfigInvalid, "%s", err.Error())
			}
			if len(ws.TrustedWorkspaces) > 0 {
				return nil, false, refuse(protocol.CodeConfigInvalid, "workspace .octet/settings.json may not set trusted_workspaces")
			}
			layers = append(layers, ws.Layer())
		}
	}
	return append(layers, a.opts.PolicyLayers...), trusted, nil
}

// discoveredRoute resolves "provider/model" for a configured (not built-in)
// provider whose model was found by live discovery rather than listed in
// ~/.octet/models.json: the route is the provider's, the window a default.
func discoveredRoute(cat *catalog.Catalog, id string) (catalog.Model, bool) {
	prov, name, ok := strings.Cut(id, "/")
	if !ok || name == "" || prov == catalog.ProviderOpenAI || prov == catalog.ProviderAnthropic {
		return catalog.Model{}, false
	}
	for _, m := range cat.Models() {
		if m.Provider == prov && !m.Inline && m.BaseURL != "" {
			return catalog.Model{ID: id, Provider: prov, Name: name, APIModel: name, Mode: m.Mode, BaseURL: m.BaseURL,
				CredentialEnv: m.CredentialEnv, ContextWindowTokens: discoveredContextWindow,
				MaxOutputTokens: discoveredMaxOutput, InputModalities: []string{"text"}, LifecycleEvents: m.LifecycleEvents}, true
		}
	}
	return catalog.Model{}, false
}
