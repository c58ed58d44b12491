package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"unicode/utf8"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

// event is one event line a host wrote, parsed and checked against the
// envelope of protocol 1 (CONTRACT §5).
type event struct {
	raw       []byte
	RequestID *string
	Seq       int
	Type      string
	RunID     *string // nil when absent
	SessionID *string // nil when absent
	Data      map[string]json.RawMessage
}

// Terminal event types (CONTRACT §5): a request ends with exactly one.
var terminalTypes = []string{"hello", "models", "shutdown", "final_result", "protocol_error"}

func isTerminal(typ string) bool { return slices.Contains(terminalTypes, typ) }

func (e *event) frame() spec.Frame {
	return spec.Frame{RequestID: e.RequestID, Seq: e.Seq, Type: protocol.EventType(e.Type), Terminal: isTerminal(e.Type)}
}

func (e *event) String() string {
	s := string(e.raw)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// parseEvent checks that line is one UTF-8 JSON object with the event
// envelope: protocol_version 1, request_id a string or null, seq an integer
// ≥ 1, type a non-empty string, data an object, and run_id and session_id
// strings when present.
func parseEvent(line []byte) (*event, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("event line is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("event line is not a JSON object: %v", err)
	}
	if top == nil {
		return nil, errors.New("event line is null, not an object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("event line has data after its object")
	}
	e := &event{raw: line}
	var pv json.Number
	if err := strictField(top, "protocol_version", &pv); err != nil {
		return nil, err
	}
	if pv.String() != "1" {
		return nil, fmt.Errorf("event protocol_version is %s, not 1", pv)
	}
	rid, ok := top["request_id"]
	if !ok {
		return nil, errors.New("event has no request_id")
	}
	if string(rid) != "null" {
		var s string
		if err := json.Unmarshal(rid, &s); err != nil {
			return nil, fmt.Errorf("event request_id is neither a string nor null: %s", rid)
		}
		e.RequestID = &s
	}
	var seq json.Number
	if err := strictField(top, "seq", &seq); err != nil {
		return nil, err
	}
	n, err := seq.Int64()
	if err != nil || n < 1 || n > 1<<40 {
		return nil, fmt.Errorf("event seq %s is not an integer ≥ 1", seq)
	}
	e.Seq = int(n)
	if err := strictField(top, "type", &e.Type); err != nil {
		return nil, err
	}
	if e.Type == "" {
		return nil, errors.New("event type is empty")
	}
	if err := strictField(top, "data", &e.Data); err != nil {
		return nil, err
	}
	if e.Data == nil {
		return nil, errors.New("event data is null, not an object")
	}
	for name, dst := range map[string]**string{"run_id": &e.RunID, "session_id": &e.SessionID} {
		if raw, ok := top[name]; ok {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("event %s is not a string: %s", name, raw)
			}
			*dst = &s
		}
	}
	return e, nil
}

// strictField decodes the required member name of obj into dst.
func strictField(obj map[string]json.RawMessage, name string, dst any) error {
	raw, ok := obj[name]
	if !ok {
		return fmt.Errorf("missing member %q", name)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("member %q has the wrong type: %s", name, raw)
	}
	return nil
}

// field decodes data member name into dst, reporting a missing or
// mistyped member with the event's type.
func (e *event) field(name string, dst any) error {
	raw, ok := e.Data[name]
	if !ok {
		return fmt.Errorf("%s data has no %q", e.Type, name)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s data %q has the wrong type: %s", e.Type, name, raw)
	}
	return nil
}

// snakeCase is the shape of every error code (CONTRACT §5: stable
// snake_case strings).
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// errorObject checks a {code, message} error object (CONTRACT §5) and
// returns its code.
func errorObject(what string, raw json.RawMessage) (string, error) {
	var eo map[string]json.RawMessage
	if err := json.Unmarshal(raw, &eo); err != nil || eo == nil {
		return "", fmt.Errorf("%s is not an object: %s", what, raw)
	}
	var code, msg string
	if err := json.Unmarshal(eo["code"], &code); err != nil || !snakeCase.MatchString(code) {
		return "", fmt.Errorf("%s.code is not a snake_case string: %s", what, eo["code"])
	}
	if err := json.Unmarshal(eo["message"], &msg); err != nil {
		return "", fmt.Errorf("%s.message is not a string: %s", what, eo["message"])
	}
	if len(msg) > 1024 {
		return "", fmt.Errorf("%s.message is %d bytes, over the 1 KiB bound", what, len(msg))
	}
	return code, nil
}

// checkProtocolError checks protocol_error data and returns its code.
func checkProtocolError(e *event) (string, error) {
	return errorObject("protocol_error data", json.RawMessage(mustMarshal(e.Data)))
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkHello checks the hello answer's shape (CONTRACT §6, from the
// protocol source): protocol 1, 1 MiB frames, one run at a time, the four
// commands, boolean features with process-group abort and no in-band
// abort.
func checkHello(e *event) error {
	var sdk string
	var pv, mfb, mcr json.Number
	var cmds []string
	var feats map[string]json.RawMessage
	for _, f := range []struct {
		name string
		dst  any
	}{{"sdk_version", &sdk}, {"protocol_version", &pv}, {"max_frame_bytes", &mfb}, {"max_concurrent_runs", &mcr}, {"commands", &cmds}, {"features", &feats}} {
		if err := e.field(f.name, f.dst); err != nil {
			return err
		}
	}
	switch {
	case sdk == "":
		return errors.New("hello sdk_version is empty")
	case pv.String() != "1":
		return fmt.Errorf("hello protocol_version is %s, not 1", pv)
	case mfb.String() != "1048576":
		return fmt.Errorf("hello max_frame_bytes is %s, not 1048576", mfb)
	case mcr.String() != "1":
		return fmt.Errorf("hello max_concurrent_runs is %s, not 1", mcr)
	}
	want := []string{"hello", "models", "run", "shutdown"}
	got := slices.Clone(cmds)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("hello commands are %q, not %q", cmds, want)
	}
	for name, raw := range feats {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("hello feature %q is not a boolean: %s", name, raw)
		}
	}
	for name, want := range map[string]string{"process_group_abort": "true", "in_band_abort": "false"} {
		if got, ok := feats[name]; !ok || string(got) != want {
			return fmt.Errorf("hello feature %q is %s, not %s", name, orMissing(got), want)
		}
	}
	return nil
}

func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

// checkModels checks the models answer's shape (CONTRACT §7): every model
// has its id, provider, name, token limits, input modalities including
// text, and the vision, audio and supports_reasoning booleans.
func checkModels(e *event) error {
	var models []map[string]json.RawMessage
	if err := e.field("models", &models); err != nil {
		return err
	}
	for i, m := range models {
		me := &event{Type: fmt.Sprintf("models.models[%d]", i), Data: m}
		var id, provider, name string
		var ctx, out json.Number
		var mods []string
		var vision, audio, reasoning bool
		for _, f := range []struct {
			name string
			dst  any
		}{{"id", &id}, {"provider", &provider}, {"name", &name}, {"context_window_tokens", &ctx}, {"max_output_tokens", &out},
			{"input_modalities", &mods}, {"vision", &vision}, {"audio", &audio}, {"supports_reasoning", &reasoning}} {
			if err := me.field(f.name, f.dst); err != nil {
				return err
			}
		}
		if id == "" {
			return fmt.Errorf("models.models[%d] has an empty id", i)
		}
		if !slices.Contains(mods, "text") {
			return fmt.Errorf("models.models[%d] (%s) input_modalities %q lack \"text\"", i, id, mods)
		}
	}
	return nil
}

// finalResult is what the kit reads of final_result data.
type finalResult struct {
	Status    string
	Output    string
	ErrorCode string // "" when error is null
	ToolCalls int
}

var runStatuses = []string{"completed", "blocked", "error"}

// checkFinalResult checks final_result data (the protocol source: status,
// output, error, filesChanged, toolCalls, steps, sessionFile).
func checkFinalResult(e *event) (finalResult, error) {
	var fr finalResult
	var files []string
	var steps json.Number
	var tc json.Number
	var sessionFile *string
	for _, f := range []struct {
		name string
		dst  any
	}{{"status", &fr.Status}, {"output", &fr.Output}, {"filesChanged", &files}, {"toolCalls", &tc}, {"steps", &steps}, {"sessionFile", &sessionFile}} {
		if err := e.field(f.name, f.dst); err != nil {
			return fr, err
		}
	}
	if !slices.Contains(runStatuses, fr.Status) {
		return fr, fmt.Errorf("final_result status %q is not one of %q", fr.Status, runStatuses)
	}
	n, err := tc.Int64()
	if err != nil || n < 0 {
		return fr, fmt.Errorf("final_result toolCalls %s is not a count", tc)
	}
	fr.ToolCalls = int(n)
	if n, err := steps.Int64(); err != nil || n < 0 {
		return fr, fmt.Errorf("final_result steps %s is not a count", steps)
	}
	raw, ok := e.Data["error"]
	if !ok {
		return fr, errors.New("final_result data has no \"error\"")
	}
	if string(raw) != "null" {
		if fr.ErrorCode, err = errorObject("final_result error", raw); err != nil {
			return fr, err
		}
	}
	if fr.Status == "error" && fr.ErrorCode == "" {
		return fr, errors.New("final_result status is error, but error is null")
	}
	if fr.Status == "completed" && fr.ErrorCode != "" {
		return fr, fmt.Errorf("final_result status is completed, but error is %s", raw)
	}
	return fr, nil
}

// runEvents reduces a run's events to what the spec's run and recovery
// predicates read. A terminal protocol_error (a run cut short as protocol,
// e.g. output_too_large) is left out: it is not a lifecycle event.
func runEvents(evs []*event) ([]spec.RunEvent, []spec.RecoveryEvent, error) {
	var lc []spec.RunEvent
	var rec []spec.RecoveryEvent
	for _, e := range evs {
		if e.Type == "protocol_error" {
			continue
		}
		re := spec.RunEvent{Type: protocol.EventType(e.Type)}
		if e.Type == "settled" || e.Type == "final_result" {
			if err := e.field("status", &re.Status); err != nil {
				return nil, nil, err
			}
		}
		lc = append(lc, re)
		ce := spec.RecoveryEvent{Type: protocol.EventType(e.Type)}
		switch e.Type {
		case "provider_retry", "provider_waiting_for_network":
			var d struct {
				Attempt     int   `json:"attempt"`
				MaxAttempts *int  `json:"max_attempts"`
				DelayMS     int64 `json:"delay_ms"`
			}
			if err := json.Unmarshal(mustMarshal(e.Data), &d); err != nil {
				return nil, nil, fmt.Errorf("%s data: %v", e.Type, err)
			}
			ce.Attempt, ce.MaxAttempts, ce.DelayMS = d.Attempt, d.MaxAttempts, d.DelayMS
		case "model_step":
			if raw, ok := e.Data["usage_uncertain"]; ok {
				if err := json.Unmarshal(raw, &ce.UsageUncertain); err != nil {
					return nil, nil, fmt.Errorf("model_step usage_uncertain is not a boolean: %s", raw)
				}
			}
		}
		rec = append(rec, ce)
	}
	return lc, rec, nil
}
