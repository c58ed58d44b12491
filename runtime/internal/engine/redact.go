package engine

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/provider"
)

// Redaction of echoed credentials. The host knows every
// credential it sends a provider: the route's API key (or Codex token) and
// each custom header value. A provider that streams one of them back (in
// text, reasoning or tool-call arguments), or a tool whose output holds
// one, must not get it into an event, a log line or the session file. Each
// verbatim occurrence is replaced by RedactedMarker where that text is
// produced, before it reaches events and the session store, so every copy
// downstream (model_delta, tool_start, tool_progress, tool_finish,
// final_result.output, recovered_output, the session's messages) agrees.
// Tool calls run with their redacted arguments: a provider cannot make a
// tool write or send a credential either.

// RedactedMarker replaces each occurrence of a credential in a run's
// output.
const RedactedMarker = "[redacted]"

// MinRedactedBytes is the length under which a credential value is not
// redacted: a short custom header value ("1", "json", "beta") is a setting
// rather than a secret, and replacing every occurrence of it would mangle
// ordinary output.
const MinRedactedBytes = 8

// redactor knows a run's credentials. It is used by the run's driver
// goroutine only.
type redactor struct {
	secrets []string // longest first, each at least MinRedactedBytes, no duplicates
}

// newRedactor returns the redactor of a route's credential and headers.
func newRedactor(key string, headers map[string]string) *redactor {
	r := &redactor{}
	r.add(key)
	for _, v := range headers {
		r.add(v)
	}
	return r
}

// add learns one more credential (a refreshed Codex token).
func (r *redactor) add(secret string) {
	secret = strings.TrimSpace(secret)
	if len(secret) < MinRedactedBytes || slices.Contains(r.secrets, secret) {
		return
	}
	r.secrets = append(r.secrets, secret)
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// none reports whether there is nothing to redact.
func (r *redactor) none() bool { return r == nil || len(r.secrets) == 0 }

// String returns s with every credential replaced by RedactedMarker; s
// itself (no copy) when it holds none.
func (r *redactor) String(s string) string {
	if r.none() {
		return s
	}
	out, _ := r.replace(s)
	return out
}

// replace redacts s scanning left to right, the earliest occurrence first
// (the longest secret among those starting there), and returns the result
// and where in it the text after the last marker begins.
func (r *redactor) replace(s string) (string, int) {
	var b strings.Builder
	from, i := 0, 0 // s[from:] is not copied yet; search from i
	for {
		at, n := -1, 0
		for _, sec := range r.secrets {
			if j := strings.Index(s[i:], sec); j >= 0 && (at < 0 || i+j < at) {
				at, n = i+j, len(sec) // longest first: a tie keeps the longer
			}
		}
		if at < 0 {
			break
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[from:at])
		b.WriteString(RedactedMarker)
		from, i = at+n, at+n
	}
	if from == 0 {
		return s, 0
	}
	tail := b.Len()
	b.WriteString(s[from:])
	return b.String(), tail
}

// heldLen is the length of the longest suffix of s that is a proper prefix
// of a credential: text that may be the start of one the next delta ends.
func (r *redactor) heldLen(s string) int {
	best := 0
	for _, sec := range r.secrets {
		start := max(0, len(s)-len(sec)+1)
		if len(s)-start <= best {
			continue
		}
		c := sec[0]
		for i := start; i < len(s)-best; {
			j := strings.IndexByte(s[i:len(s)-best], c)
			if j < 0 {
				break
			}
			i += j
			if strings.HasPrefix(sec, s[i:]) {
				best = len(s) - i
				break // the earliest start is the longest suffix
			}
			i++
		}
	}
	return best
}

// stream is the redactor of one stream of deltas (a step's text, its
// reasoning, a command's stdout): it holds back only the longest end of
// the text so far that could begin a credential, so that a credential
// split across deltas is redacted whole, and Flush gives the held text
// back at the end of the stream.
type stream struct {
	r    *redactor
	held string
}

// Push takes the next delta and returns the text that can be emitted now
// (possibly empty). With no credential it returns delta itself, without
// allocating.
func (s *stream) Push(delta string) string {
	if s.r.none() {
		return delta
	}
	buf := delta
	if s.held != "" {
		buf = s.held + delta
		s.held = ""
	}
	out, tail := s.r.replace(buf)
	if h := s.r.heldLen(out[tail:]); h > 0 {
		s.held = out[len(out)-h:]
		out = out[:len(out)-h]
	}
	return out
}

// Flush ends the stream and returns the held text, which no credential
// completed.
func (s *stream) Flush() string {
	h := s.held
	s.held = ""
	return h
}

// call returns c with its id, name and arguments redacted. Arguments that
// spell a credential with JSON escapes ("\u0073k-…") are redacted too:
// they are re-encoded token by token, which unescapes what needs no
// escape, whenever a decoded string holds a credential.
func (r *redactor) call(c provider.ToolCall) provider.ToolCall {
	if r.none() {
		return c
	}
	c.ID, c.Name, c.Arguments = r.String(c.ID), r.String(c.Name), r.String(c.Arguments)
	if strings.IndexByte(c.Arguments, '\\') >= 0 {
		if a, ok := r.json(c.Arguments); ok {
			c.Arguments = a
		}
	}
	return c
}

// json re-encodes the JSON text raw with every string token redacted and
// reports whether anything changed (false too when raw is not JSON).
func (r *redactor) json(raw string) (string, bool) {
	dec := jsontext.NewDecoder(strings.NewReader(raw))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	changed := false
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		if tok.Kind() == '"' {
			if s := tok.String(); r.String(s) != s {
				tok, changed = jsontext.String(r.String(s)), true
			}
		}
		if err := enc.WriteToken(tok); err != nil {
			return "", false
		}
	}
	if !changed {
		return "", false
	}
	return strings.TrimSuffix(out.String(), "\n"), true
}

// blocks returns bs with each block's reasoning text redacted; bs itself
// when none holds a credential. A signed block whose text changed no
// longer matches its signature: the provider may refuse it when it goes
// back, which ends that run with provider_error rather than storing the
// credential.
func (r *redactor) blocks(bs []provider.ReasoningBlock) []provider.ReasoningBlock {
	if r.none() {
		return bs
	}
	var out []provider.ReasoningBlock
	for i, b := range bs {
		if t := r.String(b.Text); t != b.Text {
			if out == nil {
				out = slices.Clone(bs)
			}
			out[i].Text = t
		}
	}
	if out == nil {
		return bs
	}
	return out
}
