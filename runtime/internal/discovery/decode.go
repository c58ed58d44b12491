package discovery

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
)

// Bounds on what one list entry may contribute.
const (
	maxIDBytes      = 512
	maxOwnedByBytes = 128
	maxContextToken = math.MaxInt32
)

// unmarshalOpts is lenient where real servers are sloppy: a duplicated
// member or a stray invalid UTF-8 byte must not void a listing. Unknown
// members are ignored (v2's default).
var unmarshalOpts = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// entry is one usable model from a list.
type entry struct {
	id            string
	ownedBy       string
	contextWindow int
}

// rawEntry is the part of a list entry the decoder reads. Every member is
// kept raw, so that a member of an unexpected type costs that member only.
type rawEntry struct {
	ID      jsontext.Value `json:"id"`
	Model   jsontext.Value `json:"model"` // llama.cpp / Ollama "models" entries
	Name    jsontext.Value `json:"name"`
	OwnedBy jsontext.Value `json:"owned_by"`

	MaxModelLen      jsontext.Value `json:"max_model_len"`      // vLLM
	ContextLength    jsontext.Value `json:"context_length"`     // OpenRouter, Together
	ContextWindow    jsontext.Value `json:"context_window"`     // Groq
	MaxContextLength jsontext.Value `json:"max_context_length"` // LM Studio
	Meta             jsontext.Value `json:"meta"`               // llama.cpp: {"n_ctx_train": N, ...}
}

// parseList decodes a model list from r as it reads it, never holding
// more than one list entry's JSON: an object with a "data" array (OpenAI,
// Ollama, LM Studio, vLLM), a "models" array (llama.cpp adds one beside
// "data"), or both, or a bare array of model objects. Entries without a
// usable id are skipped; a list whose entries are all unusable is an error.
// Entries are kept in document order, at most maxEntries of them; omitted
// counts the usable entries past that. A read error of r is returned as
// is (wrapped), for the caller to tell from a malformed list.
func parseList(r io.Reader, maxEntries int) (out []entry, omitted int, err error) {
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	notJSON := errors.New("the body is not valid JSON")
	tok, err := dec.ReadToken()
	switch {
	case errors.Is(err, io.EOF):
		return nil, 0, errors.New("the body is empty")
	case err != nil:
		return nil, 0, notJSON
	}
	total := 0
	// readArray reads the elements of an array whose '[' was read.
	readArray := func() error {
		for dec.PeekKind() != ']' {
			raw, err := dec.ReadValue()
			if err != nil {
				return notJSON
			}
			total++
			e, ok := decodeEntry(raw)
			switch {
			case !ok:
			case len(out) < maxEntries:
				out = append(out, e)
			default:
				omitted++
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return notJSON
		}
		return nil
	}
	switch tok.Kind() {
	case '[':
		if err := readArray(); err != nil {
			return nil, 0, err
		}
	case '{':
		found := false
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, 0, notJSON
			}
			if n := name.String(); n != "data" && n != "models" {
				if dec.SkipValue() != nil {
					return nil, 0, notJSON
				}
				continue
			}
			switch dec.PeekKind() {
			case '[':
				found = true
				if _, err := dec.ReadToken(); err != nil {
					return nil, 0, notJSON
				}
				if err := readArray(); err != nil {
					return nil, 0, err
				}
			case 'n':
				if dec.SkipValue() != nil {
					return nil, 0, notJSON
				}
			case 0:
				return nil, 0, notJSON
			default:
				return nil, 0, errors.New(`"data" or "models" is not an array`)
			}
		}
		if _, err := dec.ReadToken(); err != nil { // the closing '}'
			return nil, 0, notJSON
		}
		if !found {
			return nil, 0, errors.New(`the body has no "data" array`)
		}
	default:
		return nil, 0, errors.New("the body is not a JSON object")
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, 0, notJSON // trailing data
	}
	if total > 0 && len(out) == 0 && omitted == 0 {
		return nil, 0, errors.New("no entry has a usable model id")
	}
	return out, omitted, nil
}

// decodeEntry reads one list entry. ok is false when the entry is not an
// object or has no usable id.
func decodeEntry(raw jsontext.Value) (entry, bool) {
	if raw.Kind() != '{' {
		return entry{}, false
	}
	var r rawEntry
	if json.Unmarshal(raw, &r, unmarshalOpts) != nil {
		return entry{}, false
	}
	var e entry
	for _, v := range []jsontext.Value{r.ID, r.Model, r.Name} {
		if id, ok := stringValue(v); ok && validID(id) {
			e.id = id
			break
		}
	}
	if e.id == "" {
		return entry{}, false
	}
	if owner, ok := stringValue(r.OwnedBy); ok {
		e.ownedBy = textutil.Fit(clean(owner), maxOwnedByBytes)
	}
	var nCtxTrain jsontext.Value
	if r.Meta.Kind() == '{' {
		var meta struct {
			NCtxTrain jsontext.Value `json:"n_ctx_train"`
		}
		if json.Unmarshal(r.Meta, &meta, unmarshalOpts) == nil {
			nCtxTrain = meta.NCtxTrain
		}
	}
	for _, v := range []jsontext.Value{r.MaxModelLen, r.ContextLength, r.ContextWindow, r.MaxContextLength, nCtxTrain} {
		if n, ok := tokenCount(v); ok {
			e.contextWindow = n
			break
		}
	}
	return e, true
}

// stringValue returns v's string when v is a JSON string.
func stringValue(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s, unmarshalOpts) != nil {
		return "", false
	}
	return s, true
}

// validID reports whether id can be listed and sent back as a model name:
// non-empty, at most maxIDBytes, valid UTF-8 (no replacement character, which
// would stand for bytes the server sent), no control characters, and not
// blank.
func validID(id string) bool {
	return id != "" && len(id) <= maxIDBytes &&
		strings.TrimSpace(id) != "" &&
		!strings.ContainsRune(id, '\uFFFD') &&
		!strings.ContainsFunc(id, isControl)
}

// tokenCount returns v as a positive token count: a JSON number or a numeric
// string holding an integer in [1, maxContextToken].
func tokenCount(v jsontext.Value) (int, bool) {
	var text string
	switch v.Kind() {
	case '0':
		text = string(v)
	case '"':
		s, ok := stringValue(v)
		if !ok {
			return 0, false
		}
		text = strings.TrimSpace(s)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > maxContextToken {
		return 0, false
	}
	return int(f), true
}

// errorDetail extracts a human-readable reason from a non-2xx body: the
// message of an OpenAI-style {"error": {"message": ...}} or {"error": "..."}
// envelope, a top-level "message" or "detail" (FastAPI), or else the body
// text itself unless it looks like HTML. The result is not yet sanitized.
func errorDetail(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var top jsontext.Value
	if json.Unmarshal(body, &top, unmarshalOpts) == nil {
		if top.Kind() == '[' {
			// Some gateways wrap the envelope in an array.
			var list []jsontext.Value
			if json.Unmarshal(top, &list, unmarshalOpts) == nil && len(list) > 0 {
				top = list[0]
			}
		}
		if top.Kind() == '{' {
			if msg := envelopeMessage(top); msg != "" {
				return msg
			}
		}
		return string(body)
	}
	if body[0] == '<' {
		return "" // an HTML error page says nothing the status does not
	}
	return string(body)
}

// envelopeMessage returns the message of an error envelope object, or "".
func envelopeMessage(obj jsontext.Value) string {
	var env struct {
		Error   jsontext.Value `json:"error"`
		Message jsontext.Value `json:"message"`
		Detail  jsontext.Value `json:"detail"`
	}
	if json.Unmarshal(obj, &env, unmarshalOpts) != nil {
		return ""
	}
	if s, ok := stringValue(env.Error); ok && s != "" {
		return s
	}
	if env.Error.Kind() == '{' {
		var inner struct {
			Message jsontext.Value `json:"message"`
		}
		if json.Unmarshal(env.Error, &inner, unmarshalOpts) == nil {
			if s, ok := stringValue(inner.Message); ok && s != "" {
				return s
			}
		}
	}
	for _, v := range []jsontext.Value{env.Message, env.Detail} {
		if s, ok := stringValue(v); ok && s != "" {
			return s
		}
	}
	return ""
}
