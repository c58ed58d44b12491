package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/opfile"
)

// Settings is an operator settings file: ~/.octet/settings.json, or a
// trusted workspace's .octet/settings.json (CONTRACT §10).
type Settings struct {
	ToolPolicy *FileToolPolicy `json:"tool_policy"`
	// TrustedWorkspaces lists absolute workspace paths whose
	// .octet/settings.json is applied; only the user file may set it.
	TrustedWorkspaces []string `json:"trusted_workspaces"`
	// Copilot is the GitHub Copilot identity (OAuth client id, editor
	// headers); runtime/internal/copilot reads and validates it, from the
	// user file only.
	Copilot jsontext.Value `json:"copilot"`
	// TerminalGate configures a model terminal gate for every run; a
	// trusted workspace's replaces the user file's.
	TerminalGate *TerminalGate `json:"terminal_gate"`
}

// TerminalGate is the terminal_gate object of a settings file: the
// catalog model that reviews each candidate final answer, and the
// operator's instructions it judges by.
type TerminalGate struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
}

// memberTerminalGate is the settings file's member (Settings.TerminalGate's
// json tag), named in its errors: the file's vocabulary, not a protocol
// code (the operation of that name is protocol.OperationTerminalGate).
const memberTerminalGate = "terminal_gate"

// Limits of terminal_gate.
const (
	MaxGateModelBytes        = 256
	MaxGateInstructionsBytes = 64 << 10
)

// CheckTerminalGate validates a terminal gate's model and instructions:
// both present and not blank, within their limits, and the model free of
// control characters. field prefixes the errors ("terminal_gate").
func CheckTerminalGate(field, model, instructions string) error {
	switch {
	case strings.TrimSpace(model) == "":
		return fmt.Errorf("%s.model is required: the catalog id of the model that reviews candidate answers", field)
	case len(model) > MaxGateModelBytes:
		return fmt.Errorf("%s.model is longer than %d bytes", field, MaxGateModelBytes)
	case strings.ContainsFunc(model, unicode.IsControl):
		return fmt.Errorf("%s.model has a control character", field)
	case strings.TrimSpace(instructions) == "":
		return fmt.Errorf("%s.instructions is required: what the gate model checks before an answer may end the run", field)
	case len(instructions) > MaxGateInstructionsBytes:
		return fmt.Errorf("%s.instructions is longer than %d bytes", field, MaxGateInstructionsBytes)
	case !utf8.ValidString(model) || !utf8.ValidString(instructions):
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	return nil
}

// FileToolPolicy is the tool_policy object of a settings file, named like
// the policy fields.
type FileToolPolicy struct {
	AllowEdit       *bool   `json:"allow_edit"`
	AllowWrite      *bool   `json:"allow_write"`
	AllowProcess    *bool   `json:"allow_process"`
	AllowShell      *bool   `json:"allow_shell"`
	ShellPath       *string `json:"shell_path"`
	BashTimeoutMS   *int64  `json:"bash_timeout_ms"`
	MaxOutputBytes  *int64  `json:"max_output_bytes"`
	AllowRemoteRead *bool   `json:"allow_remote_read"`
}

// ErrSettings wraps every settings problem.
var ErrSettings = errors.New("invalid operator settings")

// maxSettingsBytes bounds a settings file.
const maxSettingsBytes = opfile.SettingsLimit

// LoadSettings reads a settings file strictly (unknown or duplicate
// members, wrong types are errors). A missing file is an empty Settings.
// display names the file in errors (e.g. "~/.octet/settings.json"). The
// file is read as every operator file is (opfile.Read: a link followed,
// then regular files of at most 1 MiB only, opened non-blocking), so a
// FIFO or a device is an error, never a hang.
func LoadSettings(path, display string) (Settings, error) {
	var s Settings
	data, err := opfile.Read(path, display, maxSettingsBytes, opfile.Follow)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	var refused *opfile.Error
	if errors.As(err, &refused) {
		return s, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	if err != nil {
		return s, fmt.Errorf("%w: %s: %v", ErrSettings, display, errors.Unwrap(err))
	}
	return ParseSettings(data, display)
}

// ParseSettings decodes a settings file's bytes strictly.
func ParseSettings(data []byte, display string) (Settings, error) {
	var s Settings
	if len(data) > maxSettingsBytes {
		return s, fmt.Errorf("%w: %s is larger than 1 MiB", ErrSettings, display)
	}
	if err := json.Unmarshal(data, &s, json.RejectUnknownMembers(true)); err != nil {
		return s, fmt.Errorf("%w: %s: %v", ErrSettings, display, err)
	}
	if tp := s.ToolPolicy; tp != nil {
		if err := checkLimits(tp.BashTimeoutMS, tp.MaxOutputBytes); err != nil {
			return s, fmt.Errorf("%w: %s: %v", ErrSettings, display, err)
		}
		if tp.ShellPath != nil && !filepath.IsAbs(*tp.ShellPath) {
			return s, fmt.Errorf("%w: %s: tool_policy.shell_path must be absolute", ErrSettings, display)
		}
	}
	if g := s.TerminalGate; g != nil {
		if err := CheckTerminalGate(memberTerminalGate, g.Model, g.Instructions); err != nil {
			return s, fmt.Errorf("%w: %s: %v", ErrSettings, display, err)
		}
	}
	for _, w := range s.TrustedWorkspaces {
		if !filepath.IsAbs(w) {
			return s, fmt.Errorf("%w: %s: trusted_workspaces entries must be absolute paths", ErrSettings, display)
		}
	}
	return s, nil
}

// Layer returns the settings' tool policy as a layer of source config.
func (s Settings) Layer() Layer {
	l := Layer{Source: SourceConfig}
	if tp := s.ToolPolicy; tp != nil {
		l.AllowEdit, l.AllowWrite, l.AllowProcess, l.AllowShell = tp.AllowEdit, tp.AllowWrite, tp.AllowProcess, tp.AllowShell
		l.ShellPath, l.BashTimeoutMS, l.MaxOutputBytes, l.AllowRemoteRead = tp.ShellPath, tp.BashTimeoutMS, tp.MaxOutputBytes, tp.AllowRemoteRead
	}
	return l
}

// Trusts reports whether workspace (absolute, cleaned) is listed.
func (s Settings) Trusts(workspace string) bool {
	for _, w := range s.TrustedWorkspaces {
		if filepath.Clean(w) == filepath.Clean(workspace) {
			return true
		}
	}
	return false
}

// Limits of numeric settings.
const (
	MaxBashTimeoutMS  = 24 * 60 * 60 * 1000
	MinMaxOutputBytes = 1024
	MaxMaxOutputBytes = 512 << 10
)

func checkLimits(timeout, output *int64) error {
	if timeout != nil && (*timeout < 1 || *timeout > MaxBashTimeoutMS) {
		return fmt.Errorf("bash_timeout_ms must be between 1 and %d", MaxBashTimeoutMS)
	}
	if output != nil && (*output < MinMaxOutputBytes || *output > MaxMaxOutputBytes) {
		return fmt.Errorf("max_output_bytes must be between %d and %d", MinMaxOutputBytes, MaxMaxOutputBytes)
	}
	return nil
}

// Environment variables of the environment layer.
const (
	EnvAllowShell      = "OCTET_ALLOW_SHELL"
	EnvAllowProcess    = "OCTET_ALLOW_PROCESS"
	EnvAllowRemoteRead = "OCTET_ALLOW_REMOTE_READ"
	EnvBashTimeoutMS   = "OCTET_BASH_TIMEOUT_MS"
	EnvMaxOutputBytes  = "OCTET_MAX_OUTPUT_BYTES"
	EnvShellPath       = "OCTET_SHELL_PATH"
)

// FromEnv builds the environment layer. Booleans are 1/true/0/false (any
// case); anything else is an error, never a silent default.
func FromEnv(getenv func(string) string) (Layer, error) {
	l := Layer{Source: SourceEnvironment}
	var errs []error
	boolean := func(name string) *bool {
		v := strings.TrimSpace(getenv(name))
		switch strings.ToLower(v) {
		case "":
			return nil
		case "1", "true":
			b := true
			return &b
		case "0", "false":
			b := false
			return &b
		}
		errs = append(errs, fmt.Errorf("%s must be 1, true, 0 or false", name))
		return nil
	}
	integer := func(name string) *int64 {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s must be an integer", name))
			return nil
		}
		return &n
	}
	l.AllowShell = boolean(EnvAllowShell)
	l.AllowProcess = boolean(EnvAllowProcess)
	l.AllowRemoteRead = boolean(EnvAllowRemoteRead)
	l.BashTimeoutMS = integer(EnvBashTimeoutMS)
	l.MaxOutputBytes = integer(EnvMaxOutputBytes)
	if v := getenv(EnvShellPath); v != "" {
		if !filepath.IsAbs(v) {
			errs = append(errs, fmt.Errorf("%s must be an absolute path", EnvShellPath))
		}
		l.ShellPath = &v
	}
	if err := checkLimits(l.BashTimeoutMS, nil); err != nil {
		errs = append(errs, fmt.Errorf("%s: %v", EnvBashTimeoutMS, err))
	}
	if err := checkLimits(nil, l.MaxOutputBytes); err != nil {
		errs = append(errs, fmt.Errorf("%s: %v", EnvMaxOutputBytes, err))
	}
	if err := errors.Join(errs...); err != nil {
		return l, fmt.Errorf("%w: environment: %v", ErrSettings, err)
	}
	return l, nil
}

// CheckLayer validates a layer built elsewhere (CLI flags, the Go API).
// Its source must be an operator's: config, environment or cli. The
// default layer is the policy's own, and host_request is the run's
// allow_file_mutation alone (CONTRACT §10), so an embedder's layer can
// claim neither.
func CheckLayer(l Layer) error {
	switch l.Source {
	case SourceConfig, SourceEnvironment, SourceCLI:
	default:
		return fmt.Errorf("%w: a policy layer's source must be config, environment or cli, not %q", ErrSettings, l.Source)
	}
	if err := checkLimits(l.BashTimeoutMS, l.MaxOutputBytes); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, l.Source, err)
	}
	if l.ShellPath != nil && !filepath.IsAbs(*l.ShellPath) {
		return fmt.Errorf("%w: %s: shell_path must be absolute", ErrSettings, l.Source)
	}
	return nil
}
