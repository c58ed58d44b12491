package wire

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
)

// MaxMessageBytes bounds every error message the host writes (CONTRACT §5).
const MaxMessageBytes = 1024

// DecodeError is a request line that is malformed as protocol. It becomes a
// terminal protocol_error. RequestID is the request's ID when the line
// yielded a valid one, else "" (written as null).
type DecodeError struct {
	Code      protocol.Code
	Message   string
	RequestID string
}

func (e *DecodeError) Error() string { return string(e.Code) + ": " + e.Message }

// field describes one member a command accepts: where it goes and how to
// name its type in an error message.
type field[T any] struct {
	dst  func(*T) any
	kind string
}

// member is one top-level member of the request object, in input order.
type member struct {
	name string
	raw  jsontext.Value
}

// envelopeMembers are the members of every request's envelope.
var envelopeMembers = [...]string{"protocol_version", "request_id", "command"}

// isEnvelope reports whether name is a member of the envelope.
func isEnvelope(name string) bool {
	return name == "protocol_version" || name == "request_id" || name == "command"
}

// modelsFields, runFields and runNestedRequired are built when a models or
// run request is first decoded, not at package init (a hello needs none).
var modelsFields = sync.OnceValue(func() map[string]field[protocol.ModelsRequest] {
	return map[string]field[protocol.ModelsRequest]{
		"offline": {func(r *protocol.ModelsRequest) any { return &r.Offline }, "a boolean"},
	}
})

var runFields = sync.OnceValue(func() map[string]field[protocol.RunRequest] {
	return map[string]field[protocol.RunRequest]{
		"run_id":                {func(r *protocol.RunRequest) any { return &r.RunID }, "a string"},
		"workspace":             {func(r *protocol.RunRequest) any { return &r.Workspace }, "a string"},
		"model":                 {func(r *protocol.RunRequest) any { return &r.Model }, "a string"},
		"prompt":                {func(r *protocol.RunRequest) any { return &r.Prompt }, "a string"},
		"session_id":            {func(r *protocol.RunRequest) any { return &r.SessionID }, "a string"},
		"session_dir":           {func(r *protocol.RunRequest) any { return &r.SessionDir }, "a string"},
		"system_prompt":         {func(r *protocol.RunRequest) any { return &r.SystemPrompt }, "a string"},
		"tools":                 {func(r *protocol.RunRequest) any { return &r.Tools }, "an array of strings"},
		"allow_file_mutation":   {func(r *protocol.RunRequest) any { return &r.AllowFileMutation }, "a boolean"},
		"display_text":          {func(r *protocol.RunRequest) any { return &r.DisplayText }, "a string"},
		"media":                 {func(r *protocol.RunRequest) any { return &r.Media }, `an array of {"type","path"} objects`},
		"provider":              {func(r *protocol.RunRequest) any { return &r.Provider }, "a string"},
		"base_url":              {func(r *protocol.RunRequest) any { return &r.BaseURL }, "a string"},
		"api_key":               {func(r *protocol.RunRequest) any { return &r.APIKey }, "a string"},
		"custom_headers":        {func(r *protocol.RunRequest) any { return &r.CustomHeaders }, "an object of string values"},
		"provider_mode":         {func(r *protocol.RunRequest) any { return &r.ProviderMode }, "a string"},
		"context_window_tokens": {func(r *protocol.RunRequest) any { return &r.ContextWindowTokens }, "an integer"},
		"max_output_tokens":     {func(r *protocol.RunRequest) any { return &r.MaxOutputTokens }, "an integer"},
		"input_modalities":      {func(r *protocol.RunRequest) any { return &r.InputModalities }, "an array of strings"},
		"vision":                {func(r *protocol.RunRequest) any { return &r.Vision }, "a boolean"},
		"supports_reasoning":    {func(r *protocol.RunRequest) any { return &r.SupportsReasoning }, "a boolean"},
		"history":               {func(r *protocol.RunRequest) any { return &r.History }, `an array of {"role","content"} objects`},
		"max_steps":             {func(r *protocol.RunRequest) any { return &r.MaxSteps }, "an integer"},
		"reasoning":             {func(r *protocol.RunRequest) any { return &r.Reasoning }, `an object {"effort"}`},
	}
})

var runRequired = []string{"run_id", "workspace", "model", "prompt"}

// runNestedRequired lists the required members of the objects inside run
// members: every element of an array member, or the object itself.
var runNestedRequired = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"media":     {"type", "path"},
		"history":   {"role", "content"},
		"reasoning": {"effort"},
	}
})

// Decode parses one request line (without its newline) strictly: exact-case
// member names, no duplicates, no unknown members, exact JSON types, no
// null, required members present (CONTRACT §3–§5). It never fills a default.
func Decode(line []byte) (*Request, *DecodeError) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, &DecodeError{Code: protocol.CodeInvalidJSON, Message: "empty line: expected one JSON object"}
	}
	if !utf8.Valid(line) {
		return nil, &DecodeError{Code: protocol.CodeInvalidUTF8, Message: "the line is not valid UTF-8"}
	}
	members, derr := scanObject(line)
	if derr != nil {
		derr.RequestID = lenientRequestID(line)
		return nil, derr
	}
	return decodeMembers(members)
}

// scanObject reads the top-level object's members in one validating pass.
func scanObject(line []byte) ([]member, *DecodeError) {
	// A *bytes.Buffer lets the decoder parse the line in place.
	dec := jsontext.NewDecoder(bytes.NewBuffer(line))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok.Kind() != '{' {
		if validJSON(line) {
			return nil, &DecodeError{Code: protocol.CodeNotAnObject, Message: "a request must be a JSON object, got " + KindName(tok.Kind())}
		}
		return nil, &DecodeError{Code: protocol.CodeInvalidJSON, Message: "invalid JSON"}
	}
	members := make([]member, 0, 8)
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, syntaxError(err)
		}
		name := tok.String() // read before the next call voids the token
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, syntaxError(err)
		}
		// The decoder's Value is valid only until its next call; keep the
		// same bytes as a slice of the line instead (no copy).
		end := dec.InputOffset()
		members = append(members, member{name: name, raw: jsontext.Value(line[end-int64(len(raw)) : end])})
	}
	if _, err := dec.ReadToken(); err != nil { // the closing '}'
		return nil, syntaxError(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, &DecodeError{Code: protocol.CodeInvalidJSON, Message: "trailing data after the request object"}
	}
	return members, nil
}

func validJSON(line []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(line))
	if _, err := dec.ReadValue(); err != nil {
		return false
	}
	_, err := dec.ReadToken()
	return errors.Is(err, io.EOF)
}

func syntaxError(err error) *DecodeError {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return &DecodeError{Code: protocol.CodeDuplicateField, Message: "duplicate member " + quoteName(lastToken(string(se.JSONPointer)))}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &DecodeError{Code: protocol.CodeInvalidJSON, Message: "invalid JSON: unexpected end of line"}
	}
	if se != nil {
		return &DecodeError{Code: protocol.CodeInvalidJSON, Message: bound("invalid JSON at byte " + strconv.FormatInt(se.ByteOffset, 10) + ": " + se.Err.Error())}
	}
	return &DecodeError{Code: protocol.CodeInvalidJSON, Message: "invalid JSON"}
}

func lastToken(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		ptr = ptr[i+1:]
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(ptr)
}

// lenientRequestID recovers request_id from a line that failed strict
// decoding, so the protocol_error can echo it. It answers only for
// syntactically valid objects with exactly one valid request_id.
func lenientRequestID(line []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	id, n := "", 0
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		isID := tok.String() == "request_id"
		raw, err := dec.ReadValue()
		if err != nil {
			return ""
		}
		if isID {
			n++
			if raw.Kind() == '"' {
				var s string
				if json.Unmarshal(raw, &s) == nil && ValidID(s) {
					id = s
				}
			}
		}
	}
	if n != 1 {
		return ""
	}
	if _, err := dec.ReadToken(); err != nil {
		return ""
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return ""
	}
	return id
}

func find(members []member, name string) (jsontext.Value, bool) {
	for _, m := range members {
		if m.name == name {
			return m.raw, true
		}
	}
	return nil, false
}

func decodeMembers(members []member) (*Request, *DecodeError) {
	// An envelope name in another letter case is an unknown member, even
	// when the exact name is absent ("Request_ID" alone is not a missing
	// request_id but a wrong name).
	for _, m := range members {
		if isEnvelope(m.name) {
			continue
		}
		for _, known := range envelopeMembers {
			if strings.EqualFold(known, m.name) {
				e := unknown[struct{}](m.name, nil)
				if raw, ok := find(members, "request_id"); ok {
					var id string
					if raw.Kind() == '"' && json.Unmarshal(raw, &id) == nil && ValidID(id) {
						e.RequestID = id
					}
				}
				return nil, e
			}
		}
	}
	// request_id first, so every later error can echo it.
	raw, ok := find(members, "request_id")
	if !ok {
		return nil, missing("request_id")
	}
	var id string
	if raw.Kind() != '"' || json.Unmarshal(raw, &id) != nil {
		return nil, wrongType("request_id", "a string", raw)
	}
	if !ValidID(id) {
		return nil, &DecodeError{Code: protocol.CodeInvalidID, Message: "request_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'"}
	}
	fail := func(e *DecodeError) (*Request, *DecodeError) {
		e.RequestID = id
		return nil, e
	}

	raw, ok = find(members, "protocol_version")
	if !ok {
		return fail(missing("protocol_version"))
	}
	if raw.Kind() != '0' {
		return fail(wrongType("protocol_version", "the number 1", raw))
	}
	if string(raw) != "1" {
		num := string(raw) // a JSON number: ASCII, so any cut is clean
		if len(num) > 32 {
			num = num[:32] + "…" // never echo a huge number
		}
		return fail(&DecodeError{Code: protocol.CodeUnsupportedProtocolVersion, Message: "protocol_version " + num + " is not supported; this host speaks protocol 1"})
	}

	raw, ok = find(members, "command")
	if !ok {
		return fail(missing("command"))
	}
	var cmd string
	if raw.Kind() != '"' || json.Unmarshal(raw, &cmd) != nil {
		return fail(wrongType("command", "a string", raw))
	}
	req := &Request{RequestID: id, Command: cmd}
	var derr *DecodeError
	switch cmd {
	case protocol.CommandHello, protocol.CommandShutdown:
		derr = decodeFields[struct{}](members, nil, nil, nil)
	case protocol.CommandModels:
		req.Models = new(protocol.ModelsRequest)
		derr = decodeFields(members, req.Models, modelsFields(), nil)
	case protocol.CommandRun:
		req.Run = new(protocol.RunRequest)
		derr = decodeFields(members, req.Run, runFields(), runRequired)
		if derr == nil {
			derr = checkNested(members, runNestedRequired())
		}
		if derr == nil {
			derr = checkRunValues(req.Run)
		}
	default:
		return fail(&DecodeError{Code: protocol.CodeUnknownCommand, Message: "unknown command " + quoteName(cmd) + "; protocol 1 has hello, models, run, shutdown"})
	}
	if derr != nil {
		return fail(derr)
	}
	return req, nil
}

// decodeFields checks every non-envelope member against the command's
// fields and decodes it into dst. Unknown members are reported before type
// errors, and missing required members last, each in input order.
func decodeFields[T any](members []member, dst *T, fields map[string]field[T], required []string) *DecodeError {
	for _, m := range members {
		if isEnvelope(m.name) {
			continue
		}
		if _, ok := fields[m.name]; !ok {
			return unknown(m.name, fields)
		}
	}
	for _, m := range members {
		f, ok := fields[m.name]
		if !ok {
			continue
		}
		if containsNull(m.raw) {
			return &DecodeError{Code: protocol.CodeInvalidField, Message: bound(quoteName(m.name) + " must be " + f.kind + "; null is not accepted")}
		}
		if err := json.Unmarshal(m.raw, f.dst(dst), json.RejectUnknownMembers(true)); err != nil {
			return fieldError(m.name, f.kind, err)
		}
	}
	for _, name := range required {
		if _, ok := find(members, name); !ok {
			return missing(name)
		}
	}
	return nil
}

// checkNested reports the first missing required member of a nested
// object, named by its path as the other nested errors are ("media/1/path"). The members were already
// decoded, so their shapes are known to be right.
func checkNested(members []member, required map[string][]string) *DecodeError {
	for _, m := range members {
		keys, ok := required[m.name]
		if !ok {
			continue
		}
		check := func(path string, obj map[string]jsontext.Value) *DecodeError {
			for _, k := range keys {
				if _, ok := obj[k]; !ok {
					return missing(path + "/" + k)
				}
			}
			return nil
		}
		if m.raw.Kind() == '[' {
			var elems []map[string]jsontext.Value
			if json.Unmarshal(m.raw, &elems) != nil {
				continue // decoded before: cannot happen
			}
			for i, obj := range elems {
				if e := check(m.name+"/"+strconv.Itoa(i), obj); e != nil {
					return e
				}
			}
			continue
		}
		var obj map[string]jsontext.Value
		if json.Unmarshal(m.raw, &obj) == nil {
			if e := check(m.name, obj); e != nil {
				return e
			}
		}
	}
	return nil
}

func checkRunValues(r *protocol.RunRequest) *DecodeError {
	if !ValidID(r.RunID) {
		return &DecodeError{Code: protocol.CodeInvalidID, Message: "run_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'"}
	}
	if r.SessionID != nil && !ValidID(*r.SessionID) {
		return &DecodeError{Code: protocol.CodeInvalidID, Message: "session_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'"}
	}
	// An empty session_dir would silently mean the default directory:
	// the default is asked for by omitting the member.
	if r.SessionDir != nil && *r.SessionDir == "" {
		return &DecodeError{Code: protocol.CodeInvalidField, Message: `"session_dir" must be a non-empty absolute path; omit it for the default`}
	}
	return nil
}

// containsNull reports whether a JSON value is or contains null. Strings
// and numbers are answered without scanning.
func containsNull(v jsontext.Value) bool {
	switch v.Kind() {
	case 'n':
		return true
	case '[', '{':
		return bytes.Contains(v, []byte("null")) && scanNull(v)
	}
	return false
}

func scanNull(v jsontext.Value) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == 'n' {
			return true
		}
	}
}

func fieldError(name, kind string, err error) *DecodeError {
	var se *json.SemanticError
	if errors.As(err, &se) {
		p := string(se.JSONPointer)
		if errors.Is(se.Err, json.ErrUnknownName) {
			return &DecodeError{Code: protocol.CodeUnknownField, Message: bound("unknown member " + quoteName(name+p))}
		}
		if p != "" {
			return &DecodeError{Code: protocol.CodeInvalidField, Message: bound("wrong type at " + quoteName(name+p) + "; " + quoteName(name) + " must be " + kind)}
		}
	}
	return &DecodeError{Code: protocol.CodeInvalidField, Message: bound(quoteName(name) + " must be " + kind)}
}

func missing(name string) *DecodeError {
	return &DecodeError{Code: protocol.CodeMissingField, Message: "missing required member " + quoteName(name)}
}

func wrongType(name, want string, raw jsontext.Value) *DecodeError {
	return &DecodeError{Code: protocol.CodeInvalidField, Message: quoteName(name) + " must be " + want + ", got " + KindName(raw.Kind())}
}

func unknown[T any](name string, fields map[string]field[T]) *DecodeError {
	msg := "unknown member " + quoteName(name)
	for _, known := range envelopeMembers {
		if strings.EqualFold(known, name) {
			return &DecodeError{Code: protocol.CodeUnknownField, Message: msg + " (names are case-sensitive: did you mean " + strconv.Quote(known) + "?)"}
		}
	}
	for known := range fields {
		if strings.EqualFold(known, name) {
			return &DecodeError{Code: protocol.CodeUnknownField, Message: msg + " (names are case-sensitive: did you mean " + strconv.Quote(known) + "?)"}
		}
	}
	return &DecodeError{Code: protocol.CodeUnknownField, Message: msg}
}

// KindName names a JSON kind for an error message ("a string", "an object"…).
func KindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an invalid value"
}

// quoteName quotes a member name for a message, cut to 64 bytes so an
// enormous name is never echoed.
func quoteName(s string) string {
	const max = 64
	if len(s) > max {
		return strconv.Quote(textutil.Cut(s, max)) + textutil.Ellipsis
	}
	return strconv.Quote(s)
}

// bound cuts a message to MaxMessageBytes at a rune boundary.
func bound(s string) string { return textutil.Fit(s, MaxMessageBytes) }

// Bound cuts an error message to the wire's 1 KiB bound (CONTRACT §5).
func Bound(s string) string { return bound(s) }
