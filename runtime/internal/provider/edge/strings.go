package edge

import "unsafe"

// Strings makes the short strings of a stream (a delta's text) out of
// shared chunks, so that a delta costs no allocation of its own: a chunk of
// stringChunk bytes is allocated once and each string is a view of the
// bytes appended to it. A chunk is never written again where a string
// views it (appends only go past its length, and a full chunk is replaced,
// never reused), so the strings are as immutable as any other; a chunk
// lives as long as one of its strings does. A string longer than
// stringOwn gets an allocation of its own, so that one long string never
// pins a mostly empty chunk. The zero value is ready to use; a Strings
// belongs to one decoder (not safe for concurrent use).
type Strings struct {
	buf     []byte
	scratch []byte // an unescaping buffer the owner may reuse (StringOrNullIn)
}

const (
	stringChunk = 8 << 10
	stringOwn   = 1 << 10
)

// Make returns b as a string. A nil Strings makes an ordinary string.
func (a *Strings) Make(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if a == nil || len(b) > stringOwn {
		return string(b)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, stringChunk)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], len(b))
}
