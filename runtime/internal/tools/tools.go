package tools

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
)

// DefaultMaxOutputBytes bounds a tool's output when Env.MaxOutputBytes is
// not set.
const DefaultMaxOutputBytes = 50_000

// maxMessageBytes bounds Error.Message (CONTRACT §5: messages ≤ 1 KiB).
const maxMessageBytes = 1024

// Effects a tool declares to the policy (CONTRACT §10).
const (
	EffectWorkspaceRead     = "workspace_read"
	EffectWorkspaceMutation = "workspace_mutation"
)

// Env is what a tool call runs against.
type Env struct {
	// Root is the workspace; every file access goes through it.
	Root *confine.Root
	// MaxOutputBytes bounds Result.Output; zero or less means
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// Guard, when set, protects the operator's configuration directories
	// from edit and write wherever they lie, by file identity
	// (confine.Guard); its refusals are protected_path.
	Guard *confine.Guard
	// Skills, when set, resolves the path of a skill offered to the run
	// (skill://<name>/…) to the skill's folder: the folder opened as a root
	// of its own, the path beneath it, and the prefix by which output names
	// the folder's files. For any other path it returns a nil root. Such a
	// path is read-only: read, ls, find and grep work beneath the folder as
	// they do beneath the workspace (no link followed, nothing above it
	// reachable), and edit and write are refused (protected_path).
	Skills func(p string) (root *confine.Root, rel, prefix string, err error)

	prefix string // names the files of a skill folder in find and grep output
}

// skillEnv points env at a skill's folder when the call's path argument is
// a skill path, rewriting the argument to the path beneath the folder. The
// returned release closes the folder (nil when env is unchanged).
func skillEnv(env Env, t *tool, a *args) (Env, func(), error) {
	if env.Skills == nil {
		return env, nil, nil
	}
	for _, p := range t.params {
		v, ok := a.str[p.name]
		if !p.path || !ok {
			continue
		}
		root, rel, prefix, err := env.Skills(v)
		if err != nil {
			return env, nil, pathError(err)
		}
		if root == nil {
			return env, nil, nil
		}
		if t.effect != EffectWorkspaceRead {
			root.Close()
			return env, nil, newError(CodeProtectedPath, "skill folders are read-only: "+textutil.Truncate(v, 200)+" cannot be changed")
		}
		a.str[p.name] = rel
		env.Root, env.Guard, env.prefix = root, nil, prefix
		return env, func() { root.Close() }, nil
	}
	return env, nil, nil
}

func (e Env) maxOutput() int {
	if e.MaxOutputBytes <= 0 {
		return DefaultMaxOutputBytes
	}
	return e.MaxOutputBytes
}

// Result is the outcome of a successful call.
type Result struct {
	// Output is the text returned to the model: valid UTF-8, at most
	// MaxOutputBytes long.
	Output string
	// Truncated reports that Output was cut to MaxOutputBytes; the cut is
	// marked by a line "[output truncated: N of M bytes shown]".
	Truncated bool
	// Changed lists the workspace-relative paths a mutation changed.
	Changed []string
}

// Error is a failed call. Code is one of the Code constants; Message is a
// sanitized sentence of at most 1 KiB that names paths only relative to
// the workspace.
type Error struct {
	Code    protocol.Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func newError(code protocol.Code, msg string) *Error {
	return &Error{Code: code, Message: sanitize(msg)}
}

// sanitize makes a message valid UTF-8 of at most maxMessageBytes.
func sanitize(msg string) string {
	return textutil.Truncate(strings.ToValidUTF8(msg, "\uFFFD"), maxMessageBytes-len("…"))
}

// Spec describes a tool to the model and to the policy.
type Spec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object, with
	// "additionalProperties": false.
	Parameters []byte
	// Effect is EffectWorkspaceRead or EffectWorkspaceMutation.
	Effect string
}

// tool is one registered tool.
type tool struct {
	name, description, effect string
	params                    []param
	run                       func(ctx context.Context, env Env, a *args) (Result, error)
}

// registry lists the tools in the order Specs reports them. It is filled in
// init because the run functions refer back to it indirectly.
var registry []*tool

func init() {
	registry = []*tool{readTool, lsTool, grepTool, findTool, editTool, writeTool}
}

// Specs returns the specifications of read, ls, grep, find, edit and write,
// in that order. The caller may modify the returned slice; the Parameters
// bytes are shared by every call and must not be written to.
func Specs() []Spec {
	schemas := schemas()
	specs := make([]Spec, len(registry))
	for i, t := range registry {
		specs[i] = Spec{Name: t.name, Description: t.description, Parameters: schemas[i], Effect: t.effect}
	}
	return specs
}

// schemas are the tools' parameter schemas, in registry order, built on
// first use: a run asks for them before its first model call.
var schemas = sync.OnceValue(func() [][]byte {
	out := make([][]byte, len(registry))
	for i, t := range registry {
		out[i] = schema(t.params)
	}
	return out
})

// Gate runs every check that decides a call before the caller announces
// it as allowed (CONTRACT §10: allowed evidence only after every gate):
// the arguments fit the tool (else CodeInvalidArguments, or CodeUnknownTool),
// and then each path argument passes the workspace gates, in this order:
//
//   - confinement: the path stays in the workspace (CodePathOutsideWorkspace;
//     a path with a NUL byte is CodeInvalidArguments);
//   - protected paths, for edit and write: the path is not in the
//     workspace's .octet directory, nor in an operator directory that
//     Env.Guard protects by identity wherever it lies (CodeProtectedPath);
//   - link refusal: resolving the path beneath the workspace meets no
//     symbolic link, final element included (CodeSymlinkRefused).
//
// A path that does not exist, or not yet, passes: that is the operation's
// to report. Gate is a pre-check for the announcement, not the guard: Run
// opens every path beneath the workspace descriptor again, and refuses a
// link or escape that appeared since with the same code.
func Gate(env Env, name string, args []byte) error {
	i := slices.IndexFunc(registry, func(t *tool) bool { return t.name == name })
	if i < 0 {
		return newError(CodeUnknownTool, "there is no tool named "+quote(textutil.Truncate(name, 64)))
	}
	t := registry[i]
	a, err := decodeArgs(args, t.params)
	if err != nil {
		return err
	}
	if env.Root == nil {
		return newError(CodeIOError, "no workspace is open")
	}
	env, release, err := skillEnv(env, t, a)
	if err != nil {
		return err
	}
	if release != nil {
		defer release()
	}
	for _, p := range t.params {
		if !p.path {
			continue
		}
		rel, err := env.Root.Rel(a.string(p.name, ""))
		if err != nil {
			return pathError(err)
		}
		if t.effect == EffectWorkspaceMutation {
			if err := checkMutable(rel); err != nil {
				return err
			}
			if err := env.Guard.Check(rel); err != nil {
				return pathError(err)
			}
		}
		if _, err := env.Root.Check(rel); err != nil {
			return pathError(err)
		}
	}
	return nil
}

// Run executes the tool name with the raw JSON arguments args. A failure is
// returned as an *Error; Result is then the zero value. Run honours ctx,
// whatever the input, returning code canceled: read checks it every
// cancelCheckBytes it reads, grep every grepStepBytes of whole lines it
// searches (a longer line is one step) and before each file, find at each entry of its walk, edit between reads of
// editReadChunk; edit and write check it last before the atomic
// replacement, which runs to its end once begun. Listing one directory
// (ls, or a step of a walk) is the one step not interrupted: about 1 ms per
// thousand entries.
func Run(ctx context.Context, env Env, name string, args []byte) (Result, error) {
	i := slices.IndexFunc(registry, func(t *tool) bool { return t.name == name })
	if i < 0 {
		return Result{}, newError(CodeUnknownTool, "there is no tool named "+quote(textutil.Truncate(name, 64)))
	}
	t := registry[i]
	if env.Root == nil {
		return Result{}, newError(CodeIOError, "no workspace is open")
	}
	if err := ctx.Err(); err != nil {
		return Result{}, canceled()
	}
	a, err := decodeArgs(args, t.params)
	if err != nil {
		return Result{}, err
	}
	env, release, err := skillEnv(env, t, a)
	if err != nil {
		return Result{}, err
	}
	if release != nil {
		defer release()
	}
	res, err := t.run(ctx, env, a)
	if err != nil {
		var te *Error
		if !errors.As(err, &te) {
			te = pathError(err)
		}
		te.Message = sanitize(te.Message)
		return Result{}, te
	}
	return res, nil
}

// pathError maps an error of package confine (or of a file it opened) to a
// tool error. The message is the error's text, which names the path only
// relative to the workspace.
func pathError(err error) *Error {
	code := CodeIOError
	switch {
	case errors.Is(err, confine.ErrEscape):
		code = CodePathOutsideWorkspace
	case errors.Is(err, confine.ErrSymlink):
		code = CodeSymlinkRefused
	case errors.Is(err, confine.ErrNotFound):
		code = CodeNotFound
	case errors.Is(err, confine.ErrIsDir):
		code = CodeIsDirectory
	case errors.Is(err, confine.ErrNotDir):
		code = CodeNotDirectory
	case errors.Is(err, confine.ErrNotRegular):
		code = CodeNotRegularFile
	case errors.Is(err, confine.ErrInvalidPath):
		code = CodeInvalidArguments
	case errors.Is(err, confine.ErrProtected):
		code = CodeProtectedPath
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return canceled()
	}
	return newError(code, err.Error())
}

func canceled() *Error { return newError(CodeCanceled, "the tool call was canceled") }

// schema builds the JSON Schema of a parameter list: an object with
// the properties in name order, each with its type, description and, where
// set, minimum and minLength; the required names in parameter order; and
// "additionalProperties": false. It appends the bytes directly (no
// reflection: the schemas are built on a run's start-up path), equal to
// what json.Marshal makes of the same document with deterministic map
// order (TestSchemaBytes).
func schema(params []param) []byte {
	byName := slices.Clone(params)
	slices.SortFunc(byName, func(a, b param) int { return strings.Compare(a.name, b.name) })
	b := []byte(`{"type":"object","properties":{`)
	for i, p := range byName {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p.name)
		b = append(b, `:{"type":`...)
		b = appendString(b, p.kind.schemaType())
		b = append(b, `,"description":`...)
		b = appendString(b, p.description)
		if p.kind == kindInteger {
			b = append(b, `,"minimum":`...)
			b = strconv.AppendInt(b, int64(p.min), 10)
		}
		if p.nonEmpty {
			b = append(b, `,"minLength":1`...)
		}
		b = append(b, '}')
	}
	b = append(b, `},"required":[`...)
	n := 0
	for _, p := range params {
		if p.required {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p.name)
			n++
		}
	}
	return append(b, `],"additionalProperties":false}`...)
}

// appendString appends s as a JSON string, escaped as the json package
// escapes it.
func appendString(b []byte, s string) []byte {
	b, err := jsontext.AppendQuote(b, s)
	if err != nil {
		panic("tools: schema: " + err.Error()) // the registry's own text is valid UTF-8
	}
	return b
}
