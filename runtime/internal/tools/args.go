package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
)

// kind is the JSON type of a tool parameter.
type kind int

const (
	kindString kind = iota
	kindInteger
	kindBoolean
)

func (k kind) schemaType() string {
	switch k {
	case kindInteger:
		return "integer"
	case kindBoolean:
		return "boolean"
	}
	return "string"
}

func (k kind) article() string {
	switch k {
	case kindInteger:
		return "an integer"
	case kindBoolean:
		return "a boolean"
	}
	return "a string"
}

// param describes one tool parameter. The same table drives the JSON
// Schema sent to the model and the strict decoder, so they cannot drift.
type param struct {
	name     string
	kind     kind
	required bool
	// min is the smallest accepted integer (kindInteger only).
	min      int
	nonEmpty bool // kindString: "" is rejected
	// path marks a workspace path (kindString), which Gate checks before
	// the call is announced; an absent one means the workspace root.
	path        bool
	description string
}

// args are the decoded arguments of one call, keyed by parameter name.
// Only members present in the call are set.
type args struct {
	str  map[string]string
	num  map[string]int
	flag map[string]bool
}

func (a *args) string(name, def string) string {
	if v, ok := a.str[name]; ok {
		return v
	}
	return def
}

func (a *args) int(name string, def int) int {
	if v, ok := a.num[name]; ok {
		return v
	}
	return def
}

func (a *args) bool(name string) bool { return a.flag[name] }

// maxInt bounds integer arguments so that arithmetic on them cannot
// overflow.
const maxInt = math.MaxInt32

// decodeArgs decodes raw as a JSON object holding only the members params
// describes: exact-case names, no duplicates, no unknown members, exact
// JSON types (null is never accepted), every required member present, and
// nothing after the object. Any violation is an invalid_arguments *Error
// whose message names the member.
func decodeArgs(raw []byte, params []param) (*args, error) {
	a := &args{str: map[string]string{}, num: map[string]int{}, flag: map[string]bool{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, invalidArgs("arguments must be a JSON object, not empty")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if k := dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := dec.ReadToken()
			return nil, invalidArgs("arguments are not valid JSON: %s", jsonErrText(err))
		}
		return nil, invalidArgs("arguments must be a JSON object, not %s", kindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, invalidArgs("arguments are not valid JSON: %s", jsonErrText(err))
	}
	seen := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, decodeErr(err)
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, decodeErr(err)
		}
		p, ok := lookup(params, name)
		if !ok {
			return nil, unknownArg(name, params)
		}
		seen[name] = true
		if err := p.decode(a, val); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, decodeErr(err)
	}
	if _, err := dec.ReadToken(); err == nil || !isEOF(err) {
		return nil, invalidArgs("arguments have data after the JSON object")
	}
	for _, p := range params {
		if p.required && !seen[p.name] {
			return nil, invalidArgs("missing required argument %q", p.name)
		}
	}
	return a, nil
}

func lookup(params []param, name string) (param, bool) {
	for _, p := range params {
		if p.name == name {
			return p, true
		}
	}
	return param{}, false
}

func (p param) decode(a *args, val jsontext.Value) error {
	k := val.Kind()
	if k == 'n' {
		return invalidArgs("argument %q must be %s, not null", p.name, p.kind.article())
	}
	switch p.kind {
	case kindString:
		if k != '"' {
			break
		}
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return invalidArgs("argument %q: %s", p.name, jsonErrText(err))
		}
		if p.nonEmpty && s == "" {
			return invalidArgs("argument %q must not be empty", p.name)
		}
		a.str[p.name] = s
		return nil
	case kindInteger:
		if k != '0' {
			break
		}
		n, ok := parseInteger(string(val))
		if !ok {
			return invalidArgs("argument %q must be an integer, not %s", p.name, textutil.Truncate(string(val), 40))
		}
		if n < int64(p.min) {
			return invalidArgs("argument %q must be at least %d, not %d", p.name, p.min, n)
		}
		if n > maxInt {
			return invalidArgs("argument %q must be at most %d", p.name, maxInt)
		}
		a.num[p.name] = int(n)
		return nil
	case kindBoolean:
		if k != 't' && k != 'f' {
			break
		}
		a.flag[p.name] = k == 't'
		return nil
	}
	return invalidArgs("argument %q must be %s, not %s", p.name, p.kind.article(), kindName(k))
}

// parseInteger accepts a JSON number with an integral value, including
// forms such as 2.0 and 1e3 (JSON Schema's "integer" admits them).
func parseInteger(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func unknownArg(name string, params []param) error {
	var names []string
	for _, p := range params {
		if strings.EqualFold(p.name, name) {
			return invalidArgs("unknown argument %q (names are case-sensitive: did you mean %q?)", textutil.Truncate(name, 64), p.name)
		}
		names = append(names, p.name)
	}
	return invalidArgs("unknown argument %q; accepted: %s", textutil.Truncate(name, 64), strings.Join(names, ", "))
}

func decodeErr(err error) error {
	if errors.Is(err, jsontext.ErrDuplicateName) {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			return invalidArgs("duplicate argument %q", textutil.Truncate(se.JSONPointer.LastToken(), 64))
		}
		return invalidArgs("duplicate argument")
	}
	return invalidArgs("arguments are not valid JSON: %s", jsonErrText(err))
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// jsonErrText is err's message without the package prefix.
func jsonErrText(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "jsontext: ")
	s = strings.TrimPrefix(s, "json: ")
	return textutil.Truncate(s, 200)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "invalid JSON"
}

func invalidArgs(format string, a ...any) error {
	return &Error{Code: CodeInvalidArguments, Message: fmt.Sprintf(format, a...)}
}
