package edge

import (
	"strconv"

	"octet.dev/host/runtime/provider"
)

// MaxDroppedArgBytes bounds the tool-call argument bytes one response may
// send past provider.MaxToolArgBytes. They take no memory (they are
// dropped), but a stream that never ends must still end: past this many,
// the call fails as over its output limit.
const MaxDroppedArgBytes = 256 << 20

// Args assembles one tool call's arguments within provider.MaxToolArgBytes.
// The zero value is empty. A decoder fills it through its Queue
// (AppendArgs, SetArgs), which keeps the response's output budget.
type Args struct {
	b       []byte
	dropped int // total size once over the limit; 0 while kept
}

// Len is the size of the arguments received so far, kept or dropped.
func (a *Args) Len() int {
	if a.dropped > 0 {
		return a.dropped
	}
	return len(a.b)
}

// Bytes returns the kept arguments (nil once dropped).
func (a *Args) Bytes() []byte { return a.b }

// ToolCall returns the call with these arguments: their text or, when they
// were dropped, "{}" (so the call can be replayed in the next request on
// every wire) with ArgumentsDropped set.
func (a *Args) ToolCall(id, name string) provider.ToolCall {
	if a.dropped > 0 {
		return provider.ToolCall{ID: id, Name: name, Arguments: "{}", ArgumentsDropped: a.dropped}
	}
	return provider.ToolCall{ID: id, Name: name, Arguments: string(a.b)}
}

// AppendArgs adds a piece of a tool call's arguments, charging the kept
// bytes to the output budget and the dropped ones to MaxDroppedArgBytes.
func (q *Queue) AppendArgs(a *Args, p string) {
	switch {
	case a.dropped > 0:
		a.dropped += len(p)
		q.dropped += len(p)
	case len(a.b)+len(p) > provider.MaxToolArgBytes:
		a.dropped = len(a.b) + len(p)
		q.used -= len(a.b) // released
		q.dropped += a.dropped
		a.b = nil
	default:
		a.b = append(a.b, p...)
		q.used += len(p)
	}
	q.check()
}

// SetArgs replaces a tool call's arguments with the whole of them (an
// event that repeats the complete arguments after their deltas).
func (q *Queue) SetArgs(a *Args, p string) {
	if a.dropped == 0 {
		q.used -= len(a.b)
	}
	a.b, a.dropped = a.b[:0], 0
	q.AppendArgs(a, p)
}

// SetOutputLimit sets the response's output budget: the bytes of text,
// reasoning and kept tool-call arguments it may produce (zero: none).
func (q *Queue) SetOutputLimit(n int) { q.limit = n }

// Used returns the bytes charged to the output budget so far.
func (q *Queue) Used() int { return q.used }

func (q *Queue) check() {
	if q.limit > 0 && q.used > q.limit || q.dropped > MaxDroppedArgBytes {
		q.over = true
	}
}

// limitCode is the provider.Error code of a response past its output
// budget, in the place of a provider's error type: the decoders' own
// vocabulary, not a protocol code (recovery ends such a run with
// provider_error).
const limitCode = "output_too_large"

// LimitErr returns the failure of a response past its output budget, nil
// within it. A decoder checks it before decoding more.
func (q *Queue) LimitErr() error {
	if !q.over {
		return nil
	}
	if q.dropped > MaxDroppedArgBytes {
		return Failure(provider.FailDecode, limitCode, "the response sent more than "+strconv.Itoa(MaxDroppedArgBytes)+
			" bytes of tool-call arguments over the "+strconv.Itoa(provider.MaxToolArgBytes)+"-byte limit of a call", nil)
	}
	return Failure(provider.FailDecode, limitCode, "the response produced more than "+strconv.Itoa(q.limit)+
		" bytes of text, reasoning and tool-call arguments, the limit of one model call (16 bytes per max_output_tokens, at least 1 MiB)", nil)
}
