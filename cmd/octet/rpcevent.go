package main

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/protocol/rpc"
	"octet.dev/host/runtime"
)

var encOpts = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(false))

// appendRPCEvent appends one run event as an RPC line (newline included):
// a flat object {"type", "runId", ...data members in camelCase}. The
// recovery events take the names and members of the RPC vocabulary
// (docs/cli.md).
func appendRPCEvent(dst []byte, runID string, ev runtime.Event) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst, _ = jsontext.AppendQuote(dst, rpc.EventType(ev.Type))
	dst = append(dst, `,"runId":`...)
	dst, _ = jsontext.AppendQuote(dst, runID)
	var data any
	switch d := ev.Data.(type) {
	case *protocol.ModelDelta:
		// The hot path: its members need no renaming.
		dst = append(dst, `,"step":`...)
		dst = strconv.AppendInt(dst, int64(d.Step), 10)
		dst = append(dst, `,"channel":`...)
		dst, _ = jsontext.AppendQuote(dst, d.Channel)
		dst = append(dst, `,"text":`...)
		dst, _ = jsontext.AppendQuote(dst, d.Text)
		return append(dst, "}\n"...), nil
	case *protocol.ProviderRetry:
		data = rpc.Retry{Attempt: d.Attempt, MaxAttempts: &d.MaxAttempts, DelayMs: d.DelayMS, ErrorMessage: d.Error}
	case *protocol.ProviderWaitingForNetwork:
		data = rpc.NetworkWait{Attempt: d.Attempt, DelayMs: d.DelayMS, ErrorMessage: d.Error}
	case *protocol.ProviderOperationRetry:
		data = rpc.OperationRetry{Operation: d.Operation, Attempt: d.Attempt, MaxAttempts: d.MaxAttempts, DelayMs: d.DelayMS, ErrorMessage: d.Error}
	case *protocol.OutputMedia:
		// Its "type" would collide with the line's own.
		data = rpc.OutputMedia{Step: d.Step, MediaType: d.Type, MimeType: d.MimeType, Path: d.Path, Bytes: d.Bytes, SHA256: d.SHA256}
	default:
		data = ev.Data
	}
	raw, err := json.Marshal(data, encOpts)
	if err != nil {
		return dst, err
	}
	body, err := camelize(raw, rpc.OpaqueMember(ev.Type)) // the model's own JSON keeps its names
	if err != nil {
		return dst, err
	}
	// body is an object: merge its members after type and runId.
	if len(body) > 2 {
		dst = append(dst, ',')
		dst = append(dst, body[1:]...)
	} else {
		dst = append(dst, '}')
	}
	return append(dst, '\n'), nil
}

// camelize re-encodes the JSON object src with every member name in
// camelCase (snake_case → snakeCase; names without '_' are kept), except
// the contents of the top-level member named opaque, which are copied as
// they are.
func camelize(src []byte, opaque string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(src), jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	out.Grow(len(src))
	enc := jsontext.NewEncoder(&out, jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(false))
	for {
		depth := dec.StackDepth()
		kind, n := dec.StackIndex(depth)
		name := kind == '{' && n%2 == 0 // the next token is a name or '}'
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if name && tok.Kind() == '"' {
			s := tok.String()
			if err := enc.WriteToken(jsontext.String(rpc.Camel(s))); err != nil {
				return nil, err
			}
			if depth == 1 && opaque != "" && s == opaque {
				v, err := dec.ReadValue()
				if err != nil {
					return nil, err
				}
				if err := enc.WriteValue(v); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}
