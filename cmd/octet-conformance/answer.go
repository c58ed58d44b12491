package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"octet.dev/host/spec"
)

// checkAnswer checks the events that answered one request line against
// exp. The session invariants (seq, one terminal event, serial requests)
// were checked event by event; this checks what belongs to the request:
// its request_id on every event, the terminal event's type and shape, and
// for a run its lifecycle and recovery invariants.
func (k *kit) checkAnswer(exp expect, line []byte, evs []*event) error {
	term := evs[len(evs)-1]
	for _, e := range evs {
		if !sameID(e.RequestID, exp.id) {
			// The protocol source leaves open whether a malformed line's
			// error echoes its id; this project's contract says it does
			// when the line yielded a valid one, and only then (CONTRACT
			// §4). At level protocol, such an error may carry null, or an
			// id the line does contain.
			lenient := !k.contract() && exp.kind == "protocol_error" && len(evs) == 1 &&
				(e.RequestID == nil || bytes.Contains(line, []byte(`"`+*e.RequestID+`"`)))
			if !lenient {
				return fmt.Errorf("want %s; got request_id %s in %s", exp, idString(e.RequestID), e)
			}
		}
	}
	switch exp.kind {
	case "hello", "models", "shutdown", "protocol_error":
		if len(evs) != 1 || term.Type != exp.kind {
			return fmt.Errorf("want %s as the only event; got %s", exp, types(evs))
		}
	}
	switch exp.kind {
	case "hello":
		return checkHello(term)
	case "models":
		return checkModels(term)
	case "shutdown":
		return nil
	case "protocol_error":
		code, err := checkProtocolError(term)
		if err != nil {
			return err
		}
		return k.checkCode(exp, code, term)
	}
	// A run, refused or not.
	var req struct {
		RunID     *string `json:"run_id"`
		SessionID *string `json:"session_id"`
	}
	_ = json.Unmarshal(line, &req) // the line is a valid run request, or the case is wrong
	if req.RunID == nil {
		return fmt.Errorf("case error: the request line of a run expectation has no run_id")
	}
	for _, e := range evs {
		if e.Type == "protocol_error" {
			continue
		}
		if !sameID(e.RunID, req.RunID) {
			return fmt.Errorf("run event without run_id %q: %s", *req.RunID, e)
		}
		if req.SessionID != nil && !sameID(e.SessionID, req.SessionID) {
			return fmt.Errorf("run event does not echo session_id %q: %s", *req.SessionID, e)
		}
	}
	if term.Type != "final_result" {
		return fmt.Errorf("want %s; the run ended with %s", exp, term)
	}
	fr, err := checkFinalResult(term)
	if err != nil {
		return err
	}
	if exp.kind == "refused" {
		// CONTRACT §8, from the source: a well-formed run whose values
		// fail validation gets a single final_result, status error, and
		// no accepted.
		if len(evs) != 1 || fr.Status != "error" {
			return fmt.Errorf("want %s (a single final_result, status error); got %s ending in status %s", exp, types(evs), fr.Status)
		}
		return k.checkCode(exp, fr.ErrorCode, term)
	}
	lc, rec, err := runEvents(evs)
	if err != nil {
		return err
	}
	if err := spec.RunLifecycle(lc); err != nil {
		return fmt.Errorf("run lifecycle: %v (events %s)", err, types(evs))
	}
	if err := spec.RunComplete(lc); err != nil {
		return fmt.Errorf("run lifecycle: %v (events %s)", err, types(evs))
	}
	if err := spec.Recovery(rec); err != nil {
		return fmt.Errorf("recovery: %v (events %s)", err, types(evs))
	}
	if fr.Status != exp.status {
		return fmt.Errorf("want %s; got status %s (error %q; events %s)", exp, fr.Status, fr.ErrorCode, types(evs))
	}
	if exp.code != "" {
		if err := k.checkCode(exp, fr.ErrorCode, term); err != nil {
			return err
		}
	}
	if i := hasInOrder(evs, exp.has); i >= 0 {
		return fmt.Errorf("want events %s in this order; %s is missing from %s", strings.Join(exp.has, ","), exp.has[i], types(evs))
	}
	if exp.output != nil && fr.Output != *exp.output {
		return fmt.Errorf("final_result output %q, want %q", fr.Output, *exp.output)
	}
	return nil
}

// checkCode compares an error code with the expectation's: exactly at
// level contract; at level protocol any snake_case code passes (codes are
// this project's choice, CONTRACT §5), so only the shape was checked.
func (k *kit) checkCode(exp expect, code string, e *event) error {
	if k.contract() && code != exp.code {
		return fmt.Errorf("want %s; got code %s in %s", exp, code, e)
	}
	return nil
}

func sameID(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func idString(id *string) string {
	if id == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *id)
}

func types(evs []*event) string {
	ts := make([]string, 0, len(evs))
	for _, e := range evs {
		if n := len(ts); n > 0 && e.Type == "model_delta" && strings.HasSuffix(ts[n-1], "model_delta") {
			continue // runs of deltas collapse: how a provider splits text is its own
		}
		ts = append(ts, e.Type)
	}
	return strings.Join(ts, ",")
}

// hasInOrder returns -1 when want's types occur among evs in that order,
// else the index in want of the first one missing.
func hasInOrder(evs []*event, want []string) int {
	i := 0
	for _, e := range evs {
		if i < len(want) && e.Type == want[i] {
			i++
		}
	}
	if i == len(want) {
		return -1
	}
	return i
}
