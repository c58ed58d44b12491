package schematest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"octet.dev/host/spec/schema"
)

type compiled struct {
	request, event, eventOpen *jsonschema.Schema
	err                       error
}

var load = sync.OnceValue(func() *compiled {
	c := &compiled{}
	c.request, c.eventOpen, c.err = compile(schema.JSON(), false)
	if c.err == nil {
		_, c.event, c.err = compile(schema.JSON(), true)
	}
	return c
})

// compile compiles the document's Request and Event definitions; strict
// closes every object schema that lists properties (see the package doc).
func compile(doc []byte, strict bool) (request, event *jsonschema.Schema, err error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errors.New("schema: not an object")
	}
	id, _ := root["$id"].(string)
	if id == "" {
		return nil, nil, errors.New("schema: no $id")
	}
	if strict {
		for _, d := range root["$defs"].(map[string]any) {
			closeObjects(d)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(id, root); err != nil {
		return nil, nil, err
	}
	if request, err = c.Compile(id + "#/$defs/Request"); err != nil {
		return nil, nil, err
	}
	if event, err = c.Compile(id + "#/$defs/Event"); err != nil {
		return nil, nil, err
	}
	return request, event, nil
}

// closeObjects adds unevaluatedProperties: false to every schema below v
// that declares type object with properties and says nothing about other
// members. if-schemas carry no type, so they stay open.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["type"] == "object" && v["properties"] != nil && v["additionalProperties"] == nil {
			v["unevaluatedProperties"] = false
		}
		for _, c := range v {
			closeObjects(c)
		}
	case []any:
		for _, c := range v {
			closeObjects(c)
		}
	}
}

func validate(s func(*compiled) *jsonschema.Schema, line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not one JSON value: %w", err)
	}
	return s(c).Validate(v)
}

// Event validates one event line strictly.
func Event(line []byte) error {
	return validate(func(c *compiled) *jsonschema.Schema { return c.event }, line)
}

// EventOpen validates one event line against the published schema as is.
func EventOpen(line []byte) error {
	return validate(func(c *compiled) *jsonschema.Schema { return c.eventOpen }, line)
}

// Request validates one request line.
func Request(line []byte) error {
	return validate(func(c *compiled) *jsonschema.Schema { return c.request }, line)
}

// CheckEvent fails t when line is not a valid event.
func CheckEvent(t testing.TB, line []byte) {
	t.Helper()
	if err := Event(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
		t.Errorf("event breaks the JSON Schema: %s\n%v", bytes.TrimSpace(line), err)
	}
}

// CheckRequest fails t when line is not a valid request.
func CheckRequest(t testing.TB, line []byte) {
	t.Helper()
	if err := Request(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
		t.Errorf("request breaks the JSON Schema: %s\n%v", bytes.TrimSpace(line), err)
	}
}

// Detectable are the protocol error codes whose refusal the schema states
// too: a line the host refused with one of them must break the schema.
// The others are beyond a schema: invalid_json and invalid_utf8 (no JSON
// value), duplicate_field (a JSON parser keeps one), frame_too_large,
// duplicate_request_id (state), output_too_large (not about the line), and
// unsupported_protocol_version (1.0 equals the schema's const 1, the host
// wants the token 1).
var Detectable = map[string]bool{
	"not_an_object": true, "unknown_field": true, "invalid_field": true,
	"missing_field": true, "unknown_command": true, "invalid_id": true,
}

// Session pairs the request lines a test sends with the events the host
// answers, so that each request is judged by the host's verdict: a line
// whose first event is not a protocol_error must be a valid request, and
// one refused with a Detectable code must break the schema. Every event is
// validated. Lines pair with first events (seq 1) by request_id, in order;
// lines with no valid request_id are not paired (their protocol_error has
// a null request_id). A Session is safe for concurrent use.
type Session struct {
	mu      sync.Mutex
	pending map[string][][]byte
}

// Sent records the request lines in text (one or more, newline-separated).
func (s *Session) Sent(text []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range bytes.Split(text, []byte("\n")) {
		// Exact names (encoding/json matches struct fields in any case)
		// and one request_id: the host echoes no other.
		var env map[string]any
		if json.Unmarshal(line, &env) != nil || bytes.Count(line, []byte(`"request_id"`)) != 1 {
			continue
		}
		id, ok := env["request_id"].(string)
		if !ok {
			continue
		}
		if s.pending == nil {
			s.pending = map[string][][]byte{}
		}
		s.pending[id] = append(s.pending[id], bytes.Clone(line))
	}
}

// Got validates an event line and judges the request it answers first.
func (s *Session) Got(t testing.TB, line []byte) {
	t.Helper()
	CheckEvent(t, line)
	var ev struct {
		RequestID *string `json:"request_id"`
		Seq       int     `json:"seq"`
		Type      string  `json:"type"`
		Data      struct {
			Code string `json:"code"`
		} `json:"data"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.RequestID == nil || ev.Seq != 1 {
		return
	}
	s.mu.Lock()
	q := s.pending[*ev.RequestID]
	var req []byte
	if len(q) > 0 {
		req, s.pending[*ev.RequestID] = q[0], q[1:]
	}
	s.mu.Unlock()
	if req == nil {
		return
	}
	switch {
	case ev.Type != "protocol_error":
		CheckRequest(t, req)
	case Detectable[ev.Data.Code]:
		if Request(req) == nil {
			t.Errorf("the JSON Schema accepts a request the host refused with %s: %s", ev.Data.Code, req)
		}
	}
}

// The RPC mode's schema (spec/schema.RPCJSON), compiled once: output lines
// strictly (every object with properties closed, as for events), command
// lines as published (they are closed already).
type compiledRPC struct {
	line, command *jsonschema.Schema
	err           error
}

var loadRPC = sync.OnceValue(func() *compiledRPC {
	c := &compiledRPC{}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.RPCJSON()))
	if err != nil {
		c.err = fmt.Errorf("rpc schema: %w", err)
		return c
	}
	root := v.(map[string]any)
	id, _ := root["$id"].(string)
	for _, d := range root["$defs"].(map[string]any) {
		closeObjects(d)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	if c.err = comp.AddResource(id, root); c.err != nil {
		return c
	}
	if c.line, c.err = comp.Compile(id + "#/$defs/Line"); c.err != nil {
		return c
	}
	c.command, c.err = comp.Compile(id + "#/$defs/Command")
	return c
})

func validateRPC(command bool, line []byte) error {
	c := loadRPC()
	if c.err != nil {
		return c.err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.TrimSuffix(line, []byte("\n"))))
	if err != nil {
		return fmt.Errorf("not one JSON value: %w", err)
	}
	if command {
		return c.command.Validate(v)
	}
	return c.line.Validate(v)
}

// RPCLine validates one output line of octet --mode rpc (a response or an
// event) strictly.
func RPCLine(line []byte) error { return validateRPC(false, line) }

// RPCCommand validates one command line of octet --mode rpc.
func RPCCommand(line []byte) error { return validateRPC(true, line) }

// CheckRPCLine fails t when line is not a valid RPC output line.
func CheckRPCLine(t testing.TB, line []byte) {
	t.Helper()
	if err := RPCLine(line); err != nil {
		t.Errorf("RPC line breaks the RPC schema: %s\n%v", bytes.TrimSpace(line), err)
	}
}
