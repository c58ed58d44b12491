package edge

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Lenient are the json options of every wire mode: lenient where real
// servers are sloppy, so that a duplicated member or a stray invalid UTF-8
// byte does not end a run. Unknown members are ignored (v2's default),
// since servers keep adding members.
var Lenient = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// FlexString takes any JSON value: a string as its text, null as "", and
// anything else as its JSON text, as sent.
type FlexString string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *FlexString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*s = FlexString(tok.String())
	case 'n':
		_, err := dec.ReadToken()
		*s = ""
		return err
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*s = FlexString(v)
	}
	return nil
}

// TextOnly keeps a JSON string and ignores any other value, for members
// whose shape servers disagree on when only the plain-text form matters.
type TextOnly string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *TextOnly) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '"' {
		*s = ""
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*s = TextOnly(tok.String())
	return nil
}

// ArgText is a tool call's arguments: normally a JSON string holding JSON
// text, but some servers send the arguments object itself.
type ArgText string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *ArgText) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var f FlexString
	err := f.UnmarshalJSONFrom(dec)
	*s = ArgText(f)
	return err
}

// ErrorObject is an error object as both API families send it: OpenAI's
// {"message","type","code"} and Anthropic's {"type","message"} (gateways in
// front of it may add a code). Servers also send a bare string, and a code
// may be a string, a number or null.
type ErrorObject struct {
	Message FlexString `json:"message"`
	Type    FlexString `json:"type"`
	Code    FlexString `json:"code"`
}

// UnmarshalJSONFrom accepts an object or a bare message string.
func (e *ErrorObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '{' {
		type plain ErrorObject // drop the method to avoid recursion
		return json.UnmarshalDecode(dec, (*plain)(e))
	}
	return e.Message.UnmarshalJSONFrom(dec)
}

// CodeOrType returns the code, else the type: OpenAI's precedence, where
// the code is the specific one (e.g. "insufficient_quota").
func (e *ErrorObject) CodeOrType() string {
	if e.Code != "" {
		return string(e.Code)
	}
	return string(e.Type)
}

// TypeOrCode returns the type, else the code: Anthropic's precedence, where
// the type is the code (e.g. "overloaded_error").
func (e *ErrorObject) TypeOrCode() string {
	if e.Type != "" {
		return string(e.Type)
	}
	return string(e.Code)
}

// ErrorEnvelope is an error body: the error object under "error", or, from
// some compatible servers, its fields at the top level.
type ErrorEnvelope struct {
	Error   *ErrorObject `json:"error"`
	Message FlexString   `json:"message"`
	Type    FlexString   `json:"type"`
	Code    FlexString   `json:"code"`
}

// OpenAIErrorFields reads an OpenAI-style envelope, the one Chat
// Completions and Responses servers send: the code (else the type) and the
// message of the nested object, else of the top-level fields.
func OpenAIErrorFields(env *ErrorEnvelope) (code, msg string) {
	if e := env.Error; e != nil {
		return e.CodeOrType(), string(e.Message)
	}
	w := ErrorObject{Message: env.Message, Type: env.Type, Code: env.Code}
	return w.CodeOrType(), string(w.Message)
}

// ErrorFields reads the code and message of an envelope; each mode has its
// own precedence of code and type.
type ErrorFields func(env *ErrorEnvelope) (code, msg string)

// parseErrorBody extracts (code, message) from an error body with fields.
// When the body is not a known envelope, or one that yields neither, the
// message is the body text itself.
func parseErrorBody(body []byte, fields ErrorFields) (code, msg string) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		// Some gateways wrap the envelope in an array.
		var list []ErrorEnvelope
		if json.Unmarshal(body, &list, Lenient) == nil && len(list) > 0 {
			return fields(&list[0])
		}
	}
	var env ErrorEnvelope
	if json.Unmarshal(body, &env, Lenient) == nil {
		if code, msg := fields(&env); code != "" || msg != "" {
			return code, msg
		}
	}
	return "", string(body)
}

// parseErrorEnvelope reads a body that must be an envelope with a nested
// error object (what a streaming call answered with application/json
// carries when it is an error), reporting false for anything else.
func parseErrorEnvelope(body []byte, fields ErrorFields) (code, msg string, ok bool) {
	var env ErrorEnvelope
	if err := json.Unmarshal(body, &env, Lenient); err != nil || env.Error == nil {
		return "", "", false
	}
	code, msg = fields(&env)
	return code, msg, true
}
