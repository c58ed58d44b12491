package tools

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"octet.dev/host/internal/textutil"
)

// sniffBytes is how much of a file the binary check looks at.
const sniffBytes = 8 << 10

// isBinary reports whether head, the first bytes of a file, marks it as
// binary: a NUL byte, or invalid UTF-8. atEOF says head is the whole file;
// otherwise an incomplete character at the end of head is not held against
// it.
func isBinary(head []byte, atEOF bool) bool {
	if len(head) > sniffBytes {
		head, atEOF = head[:sniffBytes], false
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !atEOF {
		// Drop a trailing partial character (at most utf8.UTFMax-1 bytes).
		head = head[:textutil.CompleteLen(head)]
	}
	return !utf8.Valid(head)
}

// output accumulates a tool's output up to a byte bound while counting the
// full size, so a huge result costs no more memory than the bound.
type output struct {
	buf   []byte
	max   int
	total int
	// atLeast means total is a lower bound: the output was cut before
	// all of it was produced (see truncationMarker).
	atLeast bool
}

func newOutput(max int) *output { return &output{max: max} }

func (o *output) WriteString(s string) {
	o.total += len(s)
	// Keep a little beyond max so result can tell whether a line ended
	// within the bound.
	if room := o.max + 1 - len(o.buf); room > 0 {
		o.buf = append(o.buf, s[:min(len(s), room)]...)
	}
}

func (o *output) Printf(format string, a ...any) { o.WriteString(fmt.Sprintf(format, a...)) }

// result returns the output without its final newline, cut if it exceeds
// the bound (see bound).
func (o *output) result() (string, bool) {
	if o.total <= o.max && len(o.buf) > 0 && o.buf[len(o.buf)-1] == '\n' {
		o.buf, o.total = o.buf[:len(o.buf)-1], o.total-1
	}
	if o.atLeast && o.total <= o.max {
		// Cut before all of it was produced, yet within the bound.
		o.total = o.max + 1
	}
	return bound(o.buf, o.total, o.max, o.atLeast)
}

// truncationMarker is the line that ends a cut output (CONTRACT §9
// tool_finish "output (bounded), truncated"): "[output truncated: N of M
// bytes shown]", or "N of at least M" when atLeast says the tool stopped
// producing the output at the bound, so that M is a lower bound.
func truncationMarker(shown, total int, atLeast bool) string {
	if atLeast {
		return fmt.Sprintf("[output truncated: %d of at least %d bytes shown]", shown, total)
	}
	return fmt.Sprintf("[output truncated: %d of %d bytes shown]", shown, total)
}

// bound returns text (the first bytes of an output of total bytes) whole
// when total ≤ max. Otherwise it cuts text so that the kept part, a newline
// and the truncation marker fit in max bytes: at the last line end when
// that keeps at least half of the room, else at a UTF-8 boundary.
func bound(text []byte, total, max int, atLeast bool) (string, bool) {
	if total <= max {
		return string(text), false
	}
	room := max - len(truncationMarker(total, total, atLeast)) - 1
	if room < 0 {
		room = 0
	}
	cut := textutil.CutLen(text, room)
	if i := bytes.LastIndexByte(text[:cut], '\n'); i >= 0 && i+1 >= room/2 {
		cut = i + 1
	}
	kept := text[:cut]
	var b strings.Builder
	b.Write(kept)
	if len(kept) > 0 && kept[len(kept)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(truncationMarker(len(kept), total, atLeast))
	return b.String(), true
}

// cleanLine prepares file text for output: a trailing CR is dropped,
// invalid UTF-8 becomes U+FFFD, and a line longer than max bytes is cut
// with a marker.
func cleanLine(line []byte, max int) string {
	line = bytes.TrimSuffix(line, []byte("\r"))
	cut := false
	if max > 0 && len(line) > max {
		line, cut = line[:textutil.CutLen(line, max)], true
	}
	s := string(line)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if cut {
		s += " [… line truncated]"
	}
	return s
}

// noun returns one when n is 1, else many.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func quote(s string) string { return strconv.Quote(s) }

// plural returns "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
