package shell

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"octet.dev/host/internal/textutil"
)

// ChunkBytes bounds each chunk passed to Spec.OnOutput.
const ChunkBytes = 4 << 10

// readBytes is the size of one read from a pipe; a read is passed on in
// chunks of at most ChunkBytes.
const readBytes = 32 << 10

// Streams named in OnOutput calls.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// collector gathers a command's output from its two pipes: it streams
// every chunk to onOutput and keeps the interleaved output in bounded
// memory, the first 40% of max bytes and the last bytes (at least 60% of
// max), while counting the full size.
type collector struct {
	mu       sync.Mutex // serializes add, so onOutput runs on one goroutine at a time
	onOutput func(stream, chunk string)
	max      int
	head     []byte
	headCap  int
	// tail holds the output after head; it is cut back to its last tailCap
	// bytes whenever it grows past twice that, so appending is amortized
	// O(1) and memory stays below 2·tailCap + readBytes.
	tail    []byte
	tailCap int
	total   int
}

func newCollector(max int, onOutput func(stream, chunk string)) *collector {
	headCap := max * 2 / 5
	return &collector{onOutput: onOutput, max: max, headCap: headCap, tailCap: max - headCap}
}

// read copies r to the collector as stream until EOF or an error (a read
// deadline set to stop it). Chunks end at character boundaries: an
// incomplete UTF-8 sequence at the end of a read waits for the next one.
func (c *collector) read(r io.Reader, stream string) {
	buf := make([]byte, readBytes)
	carry := 0
	for {
		n, err := r.Read(buf[carry:])
		data := buf[:carry+n]
		cut := len(data)
		if err == nil {
			cut = textutil.CompleteLen(data)
		}
		if cut > 0 {
			c.add(stream, data[:cut])
		}
		if err != nil {
			return
		}
		carry = copy(buf, data[cut:])
	}
}

// add records b, read from stream, and passes it to onOutput in chunks of
// at most ChunkBytes. Invalid UTF-8 is replaced by U+FFFD first, so the
// recorded output and every chunk are valid UTF-8.
func (c *collector) add(stream string, b []byte) {
	if !utf8.Valid(b) {
		b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(b) > 0 {
		n := len(b)
		if n > ChunkBytes {
			n = textutil.CutLen(b, ChunkBytes)
		}
		c.keep(b[:n])
		if c.onOutput != nil {
			c.onOutput(stream, string(b[:n]))
		}
		b = b[n:]
	}
}

// keep appends b to the bounded record.
func (c *collector) keep(b []byte) {
	c.total += len(b)
	if room := c.headCap - len(c.head); room > 0 {
		n := min(room, len(b))
		c.head = append(c.head, b[:n]...)
		b = b[n:]
	}
	if len(b) == 0 {
		return
	}
	if len(b) >= c.tailCap {
		c.tail = append(c.tail[:0], b[len(b)-c.tailCap:]...)
		return
	}
	c.tail = append(c.tail, b...)
	if len(c.tail) > 2*c.tailCap {
		c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-c.tailCap:])]
	}
}

// result returns the recorded output, whole when it fits in max bytes.
// Otherwise it keeps a head (40% of the room) and a tail (60%) cut at
// character boundaries, at line boundaries when that keeps at least half
// of each part, joined by the line "[output truncated: N of M bytes
// shown]"; the result is then at most max bytes long unless max is too
// small to hold the marker itself.
func (c *collector) result() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total <= c.max {
		return string(c.head) + string(c.tail), false
	}
	room := max(c.max-len(truncationMarker(c.total, c.total))-2, 0)
	headRoom := room * 2 / 5
	tailRoom := room - headRoom

	h := c.head[:textutil.CutLen(c.head, headRoom)]
	if i := bytes.LastIndexByte(h, '\n'); i >= 0 && i+1 >= headRoom/2 {
		h = h[:i+1]
	}
	t := c.tail
	if len(t) > tailRoom {
		t = t[len(t)-tailRoom:]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	if i := bytes.IndexByte(t, '\n'); i >= 0 && len(t)-(i+1) >= tailRoom/2 {
		t = t[i+1:]
	}

	marker := truncationMarker(len(h)+len(t), c.total)
	var b strings.Builder
	b.Grow(len(h) + len(marker) + len(t) + 2)
	b.Write(h)
	if len(h) > 0 && h[len(h)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(marker)
	b.WriteByte('\n')
	b.Write(t)
	return b.String(), true
}

// truncationMarker is the line that marks a cut output (CONTRACT §9
// tool_finish "output (bounded), truncated"); the workspace tools use the
// same words.
func truncationMarker(shown, total int) string {
	return fmt.Sprintf("[output truncated: %d of %d bytes shown]", shown, total)
}
