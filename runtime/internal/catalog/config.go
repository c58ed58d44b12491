package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"octet.dev/host/runtime/internal/opfile"
)

// ConfigDisplayPath is how errors name the user model configuration file.
const ConfigDisplayPath = "~/.octet/models.json"

// maxConfigBytes bounds the size of models.json.
const maxConfigBytes = opfile.ModelsLimit

// Load builds the catalog from the built-in models and the optional file
// homeDir/.octet/models.json:
//
//	{"providers": {"NAME": {
//	    "base_url": "https://host/v1",
//	    "provider_mode": "openai-compatible" | "openai-responses" | "anthropic-messages",
//	    "api_key_env": "ENV_VAR",
//	    "lifecycle_events": false,
//	    "transport": "http" | "websocket",
//	    "reasoning_updates": false,
//	    "models": [{"id": "...", "name": "...", "transport": "http" | "websocket",
//	        "context_window_tokens": N, "max_output_tokens": N,
//	        "input_modalities": ["text", "image", "audio"],
//	        "output_modalities": ["text", "image" | "audio"],
//	        "supports_reasoning": false, "native_steering": false, "reasoning_updates": false, "reasoning_ultra": false,
//	        "cost": {"input": X, "output": X, "cache_read": X, "cache_write": X, "currency": "USD"}}]}}}
//
// The file is decoded strictly: an unknown field, a key in another letter
// case, a duplicate key (so a duplicate provider), a duplicate model id
// within a provider, a wrong JSON type or an invalid value is an error, and
// every error message names the file as ~/.octet/models.json. A missing file
// is not an error. An empty provider_mode means openai-compatible; name
// defaults to id. A configured model is listed under its bare id unless that
// would collide with a built-in ID or another configured model, or the id
// contains "/" or starts with "inline-"; then it is listed as "provider/id".
// The provider names "openai" and "anthropic" are reserved for the built-in
// catalog. lifecycle_events true opts the provider's routes into
// provider_lifecycle readiness telemetry (Model.LifecycleEvents).
// transport "websocket" sends the routes' calls over the Responses
// WebSocket mode (Model.Transport); a model's own transport overrides its
// provider's, and only openai-responses providers may ask for websocket.
// A route is qualified for reasoning changes during a run when both its
// model and its provider (the endpoint) declare reasoning_updates true
// (Model.ReasoningUpdates, Model.EndpointReasoningUpdates); a model's
// reasoning_ultra true declares the Ultra mode (Model.ReasoningUltra). A
// model's reasoning_updates needs supports_reasoning, and reasoning_ultra
// needs reasoning_updates.
func Load(homeDir string) (*Catalog, error) {
	if homeDir == "" {
		return nil, errors.New("catalog: home directory is not set")
	}
	path := filepath.Join(homeDir, ".octet", "models.json")
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newCatalog(nil), nil
	}
	if err != nil {
		return nil, configError("", err)
	}
	extra, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	return newCatalog(extra), nil
}

// readConfig reads models.json as every operator file is read
// (opfile.Read: a link followed, then a regular file of at most 1 MiB,
// opened non-blocking, so a FIFO or a device is an error, never a hang).
// Errors carry no path, so that messages name the file only by
// ConfigDisplayPath.
func readConfig(path string) ([]byte, error) {
	data, err := opfile.Read(path, "", maxConfigBytes, opfile.Follow)
	if err != nil {
		return nil, stripPath(err)
	}
	return data, nil
}

// stripPath removes the file path from an fs.PathError, keeping its cause.
func stripPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// configError prefixes err with the display path and an optional location
// inside the file.
func configError(where string, err error) error {
	if where == "" {
		return fmt.Errorf("%s: %w", ConfigDisplayPath, err)
	}
	return fmt.Errorf("%s: %s: %w", ConfigDisplayPath, where, err)
}

// The decoded form of models.json.
type (
	fileConfig struct {
		Providers map[string]fileProvider `json:"providers"`
	}
	fileProvider struct {
		BaseURL      string      `json:"base_url"`
		ProviderMode string      `json:"provider_mode"`
		APIKeyEnv    string      `json:"api_key_env"`
		Lifecycle    bool        `json:"lifecycle_events"`
		Transport    string      `json:"transport"`
		Native       bool        `json:"native_compaction"`
		Reasoning    bool        `json:"reasoning_updates"`
		Models       []fileModel `json:"models"`
	}
	fileModel struct {
		ID                  string    `json:"id"`
		Name                string    `json:"name"`
		ContextWindowTokens int       `json:"context_window_tokens"`
		MaxOutputTokens     int       `json:"max_output_tokens"`
		InputModalities     []string  `json:"input_modalities"`
		OutputModalities    []string  `json:"output_modalities"`
		SupportsReasoning   bool      `json:"supports_reasoning"`
		NativeSteering      bool      `json:"native_steering"`
		ReasoningUpdates    bool      `json:"reasoning_updates"`
		ReasoningUltra      bool      `json:"reasoning_ultra"`
		Transport           string    `json:"transport"`
		Native              *bool     `json:"native_compaction"`
		Cost                *fileCost `json:"cost"`
	}
	fileCost struct {
		Input      *float64 `json:"input"`
		Output     *float64 `json:"output"`
		CacheRead  *float64 `json:"cache_read"`
		CacheWrite *float64 `json:"cache_write"`
		Currency   string   `json:"currency"`
	}
)

// memberNativeCompaction is models.json's member of a provider and of a
// model (the json tags above): the file's vocabulary, not a protocol code
// (the operation of that name is protocol.OperationNativeCompaction).
const memberNativeCompaction = "native_compaction"

// The shape of models.json, checked before encoding/json decodes the file.
var configShape = sync.OnceValue(func() *shape {
	return objectOf(map[string]*shape{
		"providers": mapOf(objectOf(map[string]*shape{
			"base_url":             str,
			"provider_mode":        str,
			"api_key_env":          str,
			"lifecycle_events":     boolean,
			"transport":            str,
			memberNativeCompaction: boolean,
			"reasoning_updates":    boolean,
			"models": arrayOf(objectOf(map[string]*shape{
				"id":                    str,
				"name":                  str,
				"context_window_tokens": integer,
				"max_output_tokens":     integer,
				"input_modalities":      arrayOf(str),
				"output_modalities":     arrayOf(str),
				"supports_reasoning":    boolean,
				"native_steering":       boolean,
				"reasoning_updates":     boolean,
				"reasoning_ultra":       boolean,
				"transport":             str,
				memberNativeCompaction:  boolean,
				"cost": objectOf(map[string]*shape{
					"input":       number,
					"output":      number,
					"cache_read":  number,
					"cache_write": number,
					"currency":    str,
				}),
			})),
		})),
	})
})

// parseConfig decodes and validates models.json and returns its models with
// their catalog IDs assigned.
func parseConfig(data []byte) ([]Model, error) {
	if err := checkShape(data, configShape()); err != nil {
		return nil, err
	}
	var cfg fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, configError("", describeJSONError(data, err))
	}

	names := make([]string, 0, len(cfg.Providers))
	for name := range cfg.Providers {
		names = append(names, name)
	}
	sort.Strings(names)

	var out []Model
	for _, name := range names {
		ms, err := buildProvider(name, cfg.Providers[name])
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	assignIDs(out)
	return out, nil
}

// buildProvider validates one configured provider and returns its models.
func buildProvider(name string, p fileProvider) ([]Model, error) {
	where := "providers." + name
	if err := validateProviderName(name); err != nil {
		return nil, configError(where, err)
	}
	if name == ProviderOpenAI || name == ProviderAnthropic {
		return nil, configError(where, fmt.Errorf("provider name %q is reserved for the built-in catalog", name))
	}
	if err := ValidateBaseURL(p.BaseURL); err != nil {
		return nil, configError(where, err)
	}
	mode := ModeOpenAICompatible
	if p.ProviderMode != "" {
		m, err := ParseMode(p.ProviderMode)
		if err != nil {
			return nil, configError(where, err)
		}
		mode = m
	}
	if p.APIKeyEnv != "" && !isEnvName(p.APIKeyEnv) {
		return nil, configError(where, errors.New("api_key_env must be an environment variable name (letters, digits and '_', not starting with a digit)"))
	}
	if err := checkTransport(p.Transport, mode); err != nil {
		return nil, configError(where, err)
	}
	if p.Native && mode != ModeOpenAIResponses {
		return nil, configError(where, fmt.Errorf("native_compaction needs provider_mode %q", ModeOpenAIResponses))
	}
	base := strings.TrimRight(p.BaseURL, "/")
	seen := make(map[string]bool, len(p.Models))
	out := make([]Model, 0, len(p.Models))
	for i, fm := range p.Models {
		mwhere := fmt.Sprintf("%s.models[%d]", where, i)
		if err := validateModelName(fm.ID); err != nil {
			return nil, configError(mwhere, fmt.Errorf("id: %w", err))
		}
		if seen[fm.ID] {
			return nil, configError(mwhere, fmt.Errorf("duplicate model id %q", fm.ID))
		}
		seen[fm.ID] = true
		displayName := fm.Name
		if displayName == "" {
			displayName = fm.ID
		} else if err := validateModelName(displayName); err != nil {
			return nil, configError(mwhere, fmt.Errorf("name: %w", err))
		}
		window, output, err := tokenLimits(fm.ContextWindowTokens, fm.MaxOutputTokens)
		if err != nil {
			return nil, configError(mwhere, err)
		}
		modalities, err := normalizeModalities(fm.InputModalities, nil)
		if err != nil {
			return nil, configError(mwhere, err)
		}
		outputs, err := outputModalities(fm.OutputModalities, mode)
		if err != nil {
			return nil, configError(mwhere, err)
		}
		transport := p.Transport
		if fm.Transport != "" {
			if err := checkTransport(fm.Transport, mode); err != nil {
				return nil, configError(mwhere, err)
			}
			transport = fm.Transport
		}
		if fm.NativeSteering && mode != ModeOpenAIResponses {
			return nil, configError(mwhere, fmt.Errorf("native_steering needs provider_mode %q", ModeOpenAIResponses))
		}
		cost, err := buildCost(fm.Cost)
		if err != nil {
			return nil, configError(mwhere+".cost", err)
		}
		native := p.Native
		if fm.Native != nil {
			if *fm.Native && mode != ModeOpenAIResponses {
				return nil, configError(mwhere, fmt.Errorf("native_compaction needs provider_mode %q", ModeOpenAIResponses))
			}
			native = *fm.Native
		}
		if fm.ReasoningUpdates && !fm.SupportsReasoning {
			return nil, configError(mwhere, errors.New("reasoning_updates needs supports_reasoning"))
		}
		if fm.ReasoningUltra && !fm.ReasoningUpdates {
			return nil, configError(mwhere, errors.New("reasoning_ultra needs reasoning_updates"))
		}
		out = append(out, Model{
			ID:                  fm.ID,
			Provider:            name,
			Name:                displayName,
			APIModel:            fm.ID,
			Mode:                mode,
			ContextWindowTokens: window,
			MaxOutputTokens:     output,
			InputModalities:     modalities,
			OutputModalities:    outputs,
			SupportsReasoning:   fm.SupportsReasoning,
			NativeSteering:      fm.NativeSteering,
			ReasoningUpdates:    fm.ReasoningUpdates,
			ReasoningUltra:      fm.ReasoningUltra,
			Cost:                cost,
			BaseURL:             base,
			CredentialEnv:       p.APIKeyEnv,
			LifecycleEvents:     p.Lifecycle,
			Transport:           transport,
			NativeCompaction:    native,

			EndpointReasoningUpdates: p.Reasoning, // the provider's declaration
		})
	}
	return out, nil
}

// outputModalities validates a configured model's output modalities:
// "text", "audio" (openai-compatible providers only: Chat audio output) and
// "image" (openai-responses only: the image_generation tool). Text only is
// nil.
func outputModalities(declared []string, mode Mode) ([]string, error) {
	var image, audio bool
	seen := make(map[string]bool, len(declared))
	for _, d := range declared {
		if seen[d] {
			return nil, fmt.Errorf("output_modalities lists %q twice", d)
		}
		seen[d] = true
		switch d {
		case ModalityText:
		case ModalityAudio:
			if mode != ModeOpenAICompatible {
				return nil, fmt.Errorf("output_modalities: audio output needs provider_mode %q", ModeOpenAICompatible)
			}
			audio = true
		case ModalityImage:
			if mode != ModeOpenAIResponses {
				return nil, fmt.Errorf("output_modalities: image output needs provider_mode %q", ModeOpenAIResponses)
			}
			image = true
		default:
			return nil, fmt.Errorf("output_modalities: unknown modality %q (allowed: text, image, audio)", d)
		}
	}
	out := []string{ModalityText}
	if image {
		out = append(out, ModalityImage)
	}
	if audio {
		out = append(out, ModalityAudio)
	}
	if len(out) == 1 {
		return nil, nil
	}
	return out, nil
}

// checkTransport validates a configured transport for a provider of mode.
func checkTransport(t string, mode Mode) error {
	switch t {
	case "", TransportHTTP:
		return nil
	case TransportWebSocket:
		if mode != ModeOpenAIResponses {
			return fmt.Errorf("transport %q needs provider_mode %q", t, ModeOpenAIResponses)
		}
		return nil
	}
	return fmt.Errorf("transport must be %q or %q, not %q", TransportHTTP, TransportWebSocket, t)
}

// buildCost validates a configured price; input and output are required.
func buildCost(fc *fileCost) (*Cost, error) {
	if fc == nil {
		return nil, nil
	}
	if fc.Input == nil || fc.Output == nil {
		return nil, errors.New("input and output prices are required")
	}
	if fc.Currency != "" && fc.Currency != CurrencyUSD {
		return nil, fmt.Errorf("currency must be %q", CurrencyUSD)
	}
	c := &Cost{Input: *fc.Input, Output: *fc.Output, Currency: CurrencyUSD}
	if fc.CacheRead != nil {
		c.CacheRead = *fc.CacheRead
	}
	if fc.CacheWrite != nil {
		c.CacheWrite = *fc.CacheWrite
	}
	for _, v := range []float64{c.Input, c.Output, c.CacheRead, c.CacheWrite} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("prices must be finite and not negative")
		}
	}
	return c, nil
}

// assignIDs gives each configured model its catalog ID: the bare id when it
// is unambiguous, else "provider/id". Provider names contain no "/", so the
// qualified form is unique, and it never starts with "inline-" because
// provider names may not.
func assignIDs(ms []Model) {
	builtin := make(map[string]bool, len(builtinModels()))
	for _, m := range builtinModels() {
		builtin[m.ID] = true
	}
	count := make(map[string]int, len(ms))
	for _, m := range ms {
		count[m.APIModel]++
	}
	for i := range ms {
		id := ms[i].APIModel
		if builtin[id] || count[id] > 1 || strings.Contains(id, "/") || strings.HasPrefix(id, InlineIDPrefix) {
			ms[i].ID = ms[i].Provider + "/" + id
		} else {
			ms[i].ID = id
		}
	}
}

// isEnvName reports whether s is a portable environment variable name.
func isEnvName(s string) bool {
	if s == "" || len(s) > 128 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// describeJSONError turns an encoding/json error into a message that names
// the position or field at fault.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "top level"
		}
		return fmt.Errorf("%s: expected %s, found JSON %s", field, jsonTypeName(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid JSON: unexpected end of file")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// jsonTypeName names a Go kind the way a configuration author thinks of it.
func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int64", "int32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return kind
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
