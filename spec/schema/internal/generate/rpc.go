package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/protocol/rpc"
)

// RPCSchemaID is the $id of the RPC mode's schema document.
const RPCSchemaID = "https://octet.dev/host/spec/schema/rpc.schema.json"

// GenerateRPC returns the JSON Schema of the octet CLI's RPC mode (package
// protocol/rpc): a command line (#/$defs/Command) and an output line
// (#/$defs/Line: a response or an event). It is derived from protocol 1's
// schema (Generate), so that the payloads, their descriptions, enumerations
// and nullable members are stated once: each run event's payload is
// flattened beside "type" and "runId", with every member name in camelCase
// (rpc.Camel) below it, except the events whose payloads package rpc
// defines. Keys are sorted: the document is deterministic.
func GenerateRPC(protocolDir string) ([]byte, error) {
	base, err := Generate(protocolDir)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(base, &doc); err != nil {
		return nil, err
	}
	defs := map[string]any{}
	// The payload definitions, renamed: everything but the frames of
	// protocol 1 (its envelopes, requests and event frames).
	for name, d := range doc.Defs {
		if strings.HasSuffix(name, "Request") || strings.HasSuffix(name, "Event") || name == "EventEnvelope" || name == "ProtocolError" {
			continue
		}
		defs[name] = camelize(d)
	}
	for _, t := range []reflect.Type{reflect.TypeFor[rpc.State](), reflect.TypeFor[rpc.Stats](), reflect.TypeFor[rpc.Tokens](),
		reflect.TypeFor[rpc.Retry](), reflect.TypeFor[rpc.OutputMedia](), reflect.TypeFor[rpc.NetworkWait](), reflect.TypeFor[rpc.OperationRetry]()} {
		defs["Rpc"+t.Name()] = structSchema(t)
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

	// A command line: closed, as the mode decodes it.
	cmd := map[string]any{
		"type":        "object",
		"description": "One command line of octet --mode rpc. prompt, steer and follow_up need a non-empty message; the other commands take none.",
		"properties": map[string]any{
			"id":      str("Echoed in the command's response."),
			"type":    map[string]any{"enum": rpc.Commands()},
			"message": map[string]any{"type": "string", "minLength": 1, "description": "The text of prompt, steer and follow_up."},
		},
		"required":             []string{"type"},
		"additionalProperties": false,
	}
	var allOf []any
	for _, c := range rpc.Commands() {
		then := map[string]any{"not": map[string]any{"required": []string{"message"}}}
		if rpc.TakesMessage(c) {
			then = map[string]any{"required": []string{"message"}}
		}
		allOf = append(allOf, map[string]any{"if": map[string]any{"properties": map[string]any{"type": map[string]any{"const": c}}, "required": []string{"type"}}, "then": then})
	}
	cmd["allOf"] = allOf
	defs["Command"] = cmd

	defs["Response"] = map[string]any{
		"type":        "object",
		"description": "The one response to a command line (command parse for a line that is no command).",
		"properties": map[string]any{
			"type":    map[string]any{"const": rpc.TypeResponse},
			"id":      str("The command's id, when it had one that could be read."),
			"command": map[string]any{"type": "string", "description": "The command answered: one of the commands, the unknown name a line gave, or parse."},
			"success": map[string]any{"type": "boolean"},
			"data":    map[string]any{"description": "RpcState for get_state, RpcStats for get_session_stats."},
			"error":   str("Why the command failed."),
		},
		"required": []string{"type", "command", "success"},
		"allOf": []any{
			map[string]any{"if": map[string]any{"properties": map[string]any{"command": map[string]any{"const": rpc.CommandGetState}, "success": map[string]any{"const": true}}, "required": []string{"command", "success"}},
				"then": map[string]any{"properties": map[string]any{"data": map[string]any{"$ref": "#/$defs/RpcState"}}, "required": []string{"data"}}},
			map[string]any{"if": map[string]any{"properties": map[string]any{"command": map[string]any{"const": rpc.CommandGetSessionStats}, "success": map[string]any{"const": true}}, "required": []string{"command", "success"}},
				"then": map[string]any{"properties": map[string]any{"data": map[string]any{"$ref": "#/$defs/RpcStats"}}, "required": []string{"data"}}},
		},
	}

	// One definition per run event: the payload's members beside type and
	// runId, in one object.
	var names []any
	var events []any
	for _, e := range protocol.Events() {
		if e.Kind != protocol.KindLifecycle && e.Kind != protocol.KindStreaming {
			continue
		}
		name := rpc.EventType(e.Type)
		payload := e.Payload.Name()
		if own := rpc.Payload(e.Type); own != nil {
			payload = "Rpc" + reflect.TypeOf(own).Elem().Name()
		}
		p, ok := defs[payload].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("event %s: no definition %s", e.Type, payload)
		}
		props := map[string]any{
			"type":  map[string]any{"const": name},
			"runId": map[string]any{"type": "string", "pattern": IDPattern, "description": "The run's ID."},
		}
		req := []string{"type", "runId"}
		if pp, ok := p["properties"].(map[string]any); ok {
			for k, v := range pp {
				if _, dup := props[k]; dup {
					return nil, fmt.Errorf("event %s: payload member %s collides with the line's own", e.Type, k)
				}
				props[k] = v
			}
		}
		if pr, ok := p["required"].([]any); ok {
			for _, r := range pr {
				req = append(req, r.(string))
			}
		}
		desc := fmt.Sprintf("The run event %s", name)
		if name != string(e.Type) {
			desc += " (protocol 1's " + string(e.Type) + ")"
		}
		if d, ok := p["description"].(string); ok {
			desc += ": " + d
		} else {
			desc += "."
		}
		def := camelType(name) + "Event"
		defs[def] = map[string]any{"type": "object", "description": desc, "properties": props, "required": req}
		names = append(names, name)
		events = append(events, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"const": name}}, "required": []string{"type"}},
			"then": map[string]any{"$ref": "#/$defs/" + def},
		})
	}
	defs["Event"] = map[string]any{
		"description": "One event line of a run: its type selects its members.",
		"type":        "object",
		"properties":  map[string]any{"type": map[string]any{"enum": names}},
		"required":    []string{"type", "runId"},
		"allOf":       events,
	}
	defs["Line"] = map[string]any{
		"description": "One output line: a response or an event.",
		"anyOf":       []any{map[string]any{"$ref": "#/$defs/Response"}, map[string]any{"$ref": "#/$defs/Event"}},
	}
	prune(defs, "Command", "Line")
	root := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         RPCSchemaID,
		"title":       "octet --mode rpc",
		"description": "Every line of the octet CLI's RPC mode: a command (#/$defs/Command) on stdin; a response or an event (#/$defs/Line) on stdout. Generated from the Go packages octet.dev/host/protocol and octet.dev/host/protocol/rpc by go generate ./spec/schema: do not edit.",
		"anyOf":       []any{map[string]any{"$ref": "#/$defs/Command"}, map[string]any{"$ref": "#/$defs/Line"}},
		"$defs":       defs,
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// camelize renames the member names of every "properties" object and
// "required" list below v with rpc.Camel, as the mode renames the lines.
func camelize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch k {
			case "properties":
				if m, ok := x.(map[string]any); ok {
					pm := make(map[string]any, len(m))
					for name, s := range m {
						pm[rpc.Camel(name)] = camelize(s)
					}
					out[k] = pm
					continue
				}
			case "required":
				if l, ok := x.([]any); ok {
					rl := make([]any, len(l))
					for i, n := range l {
						rl[i] = rpc.Camel(n.(string))
					}
					out[k] = rl
					continue
				}
			}
			out[k] = camelize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = camelize(x)
		}
		return out
	}
	return v
}

// structSchema states an rpc payload struct of plain members: every member
// present, a pointer one nullable.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var req []any
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		var s map[string]any
		ft := f.Type
		nullable := ft.Kind() == reflect.Pointer
		if nullable {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.String:
			s = map[string]any{"type": "string"}
		case reflect.Bool:
			s = map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int64:
			s = map[string]any{"type": "integer"}
		case reflect.Float64:
			s = map[string]any{"type": "number"}
		case reflect.Struct:
			s = map[string]any{"$ref": "#/$defs/Rpc" + ft.Name()}
		default:
			panic("rpc schema: member " + t.Name() + "." + f.Name + " of an unhandled kind")
		}
		if nullable {
			s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		props[name] = s
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			req = append(req, name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": req}
}

// camelType is CamelCase of an RPC event name (auto_retry_start →
// AutoRetryStart).
func camelType(s string) string { return camel(s) }

// prune drops the definitions no root reaches (protocol 1's hello, models
// and request bodies, the payloads this mode replaces).
func prune(defs map[string]any, roots ...string) {
	reached := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if r, ok := x.(string); ok && k == "$ref" {
					name := strings.TrimPrefix(r, "#/$defs/")
					if !reached[name] {
						reached[name] = true
						walk(defs[name])
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, r := range roots {
		reached[r] = true
		walk(defs[r])
	}
	for name := range defs {
		if !reached[name] {
			delete(defs, name)
		}
	}
}
