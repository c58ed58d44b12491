package soak

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

// maxFrame is the protocol's frame bound, newline included (CONTRACT §3).
const maxFrame = 1 << 20

// frame is the envelope of one event, as read off the host's stdout.
type frame struct {
	ProtocolVersion *int               `json:"protocol_version"`
	RequestID       *string            `json:"request_id"`
	Seq             int                `json:"seq"`
	Type            protocol.EventType `json:"type"`
	RunID           string             `json:"run_id"`
	SessionID       string             `json:"session_id"`
	Data            json.RawMessage    `json:"data"`
}

// readFrames passes each stdout line to the loop; a line longer than the
// frame bound is passed cut (and reported by the loop).
func (d *driver) readFrames(r io.Reader) {
	br := bufio.NewReaderSize(r, maxFrame+1)
	pass := func(line []byte) bool {
		select {
		case d.frames <- append([]byte(nil), line...):
			return true
		case <-d.quit:
			return false
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Oversized: no newline within the bound. The rest of the
			// line is skipped.
			if !pass(line) {
				return
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 && !pass(line) {
			return
		}
		if err != nil {
			d.readErr <- err
			return
		}
	}
}

// frame checks one line of the host's stdout and files it under its
// request.
func (d *driver) frame(line []byte) {
	d.rep.Frames++
	if len(line) > maxFrame || !bytes.HasSuffix(line, []byte("\n")) {
		d.rep.problem("frame of %d bytes without a newline within the %d-byte bound", len(line), maxFrame)
		return
	}
	if !utf8.Valid(line) {
		d.rep.problem("frame is not valid UTF-8: %.200q", line)
		return
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		d.rep.problem("frame is not a JSON event (%v): %.200s", err, line)
		return
	}
	if f.ProtocolVersion == nil || *f.ProtocolVersion != 1 {
		d.rep.problem("frame without protocol_version 1: %.200s", line)
	}
	if len(d.queue) == 0 {
		d.rep.problem("frame with no request outstanding: %.200s", line)
		return
	}
	p := d.queue[0]
	if f.RequestID == nil || *f.RequestID != p.requestID {
		// Requests are served one at a time in arrival order: every
		// frame belongs to the oldest outstanding request.
		got := "null"
		if f.RequestID != nil {
			got = strconv.Quote(*f.RequestID)
		}
		d.rep.problem("frame of request %s while %s is outstanding (seq %d, type %s)", got, p.requestID, f.Seq, f.Type)
		return
	}
	terminal := f.Type == "final_result" || f.Type == "protocol_error" ||
		(p.command != "run" && string(f.Type) == p.command)
	if f.Seq != len(p.frames)+1 {
		d.rep.problem("%s: seq %d after %d (type %s)", p.requestID, f.Seq, len(p.frames), f.Type)
	}
	p.frames = append(p.frames, spec.Frame{RequestID: f.RequestID, Seq: f.Seq, Type: f.Type, Terminal: terminal})
	if p.plan != nil {
		d.runFrame(p, &f)
	}
	if terminal {
		d.end(p, &f)
	}
}

// runFrame checks a run event's envelope and keeps what the end checks.
func (d *driver) runFrame(p *pending, f *frame) {
	if want := fmt.Sprintf("run-%d", p.plan.index); f.RunID != want {
		d.rep.problem("%s: %s with run_id %q, want %q", p.requestID, f.Type, f.RunID, want)
	}
	if f.SessionID != p.sessionID && f.Type != "protocol_error" {
		d.rep.problem("%s: %s with session_id %q, want %q", p.requestID, f.Type, f.SessionID, p.sessionID)
	}
	ev := spec.RunEvent{Type: f.Type}
	var data struct {
		Status string `json:"status"`
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(f.Data, &data); err != nil {
		d.rep.problem("%s: %s data is not an object: %v", p.requestID, f.Type, err)
	}
	switch f.Type {
	case protocol.TypeSettled, protocol.TypeFinalResult:
		ev.Status = data.Status
	case "provider_retry":
		d.rep.Retries++
	case "tool_start":
		d.rep.ToolCalls++
		if p.openTools[data.CallID] {
			d.rep.problem("%s: tool_start %q twice", p.requestID, data.CallID)
		}
		p.openTools[data.CallID] = true
	case "tool_finish":
		if !p.openTools[data.CallID] {
			d.rep.problem("%s: tool_finish %q without its tool_start", p.requestID, data.CallID)
		}
		delete(p.openTools, data.CallID)
	}
	if f.Type != "protocol_error" {
		p.events = append(p.events, ev)
	}
}

// end checks a request whose terminal event arrived and retires it.
func (d *driver) end(p *pending, f *frame) {
	d.queue = d.queue[1:]
	if err := errors.Join(spec.All(p.frames), spec.Complete(p.frames)); err != nil {
		d.rep.problem("%s: %v", p.requestID, err)
	}
	if p.plan == nil {
		if string(f.Type) != p.command {
			d.rep.problem("%s: answered with %s: %.300s", p.requestID, f.Type, f.Data)
		}
		return
	}
	d.rep.Ended++
	if f.Type == "protocol_error" {
		d.rep.ProtocolErr++
		d.rep.problem("%s: protocol_error %.300s", p.requestID, f.Data)
	} else {
		if err := errors.Join(spec.RunLifecycle(p.events), spec.RunComplete(p.events)); err != nil {
			d.rep.problem("%s: %v", p.requestID, err)
		}
		d.result(p, f)
	}
	if len(p.openTools) > 0 {
		d.rep.problem("%s: %d tool calls started and never finished", p.requestID, len(p.openTools))
	}
	if d.rep.Ended%d.cfg.ReportEvery == 0 || d.rep.Ended == d.cfg.Runs {
		s := d.sample()
		d.rep.Samples = append(d.rep.Samples, s)
		if d.rep.Ended == d.cfg.Runs {
			d.rep.End = s
		}
		if d.cfg.Progress != nil {
			d.cfg.Progress(s, d.rep)
		}
	}
	if p.plan.index == p.batch.last {
		d.closeBatches(p.plan.index / batchRuns)
	}
}

// result checks a run's final_result and counts its status.
func (d *driver) result(p *pending, f *frame) {
	var fr struct {
		Status string `json:"status"`
		Output string `json:"output"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(f.Data, &fr); err != nil {
		d.rep.problem("%s: final_result data: %v", p.requestID, err)
		return
	}
	switch fr.Status {
	case "completed":
		d.rep.Completed++
		// The answer is one of its batch's scripted answers (a run that
		// failed leaves its turns to the next), whole, and given once: a
		// retried attempt's provisional text must not be part of it.
		switch {
		case !p.batch.answers[fr.Output]:
			d.rep.problem("%s: completed with an output that is no scripted answer: %.200q", p.requestID, fr.Output)
		case p.batch.used[fr.Output]:
			d.rep.problem("%s: completed with an answer another run already gave: %.200q", p.requestID, fr.Output)
		default:
			p.batch.used[fr.Output] = true
		}
	case "error":
		d.rep.Errored++
		code := "(none)"
		if fr.Error != nil {
			code = fr.Error.Code
		}
		d.rep.ErrorCodes[code]++
	case "blocked":
		d.rep.Blocked++
		code := "(none)"
		if fr.Error != nil {
			code = fr.Error.Code
		}
		d.rep.ErrorCodes["blocked:"+code]++
	default:
		d.rep.problem("%s: final_result status %q", p.requestID, fr.Status)
	}
}
