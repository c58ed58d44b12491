package shell

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"octet.dev/host/internal/textutil"
)

// splitReader returns its data in reads of the given sizes (the last size
// repeats).
type splitReader struct {
	data  []byte
	sizes []int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := r.sizes[0]
	if len(r.sizes) > 1 {
		r.sizes = r.sizes[1:]
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// The collector streams everything in valid chunks of at most ChunkBytes,
// whatever the read boundaries, and bounds its result.
func TestCollectorProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 3000).Draw(t, "max")
		var text strings.Builder
		for _, s := range rapid.SliceOfN(rapid.String(), 0, 40).Draw(t, "parts") {
			text.WriteString(s)
			if rapid.Bool().Draw(t, "long") {
				text.WriteString(strings.Repeat(s+"\n", rapid.IntRange(1, 500).Draw(t, "repeat")))
			}
		}
		full := text.String()
		sizes := rapid.SliceOfN(rapid.IntRange(1, 2*ChunkBytes), 1, 20).Draw(t, "sizes")

		var streamed strings.Builder
		c := newCollector(max, func(stream, chunk string) {
			if stream != Stdout || chunk == "" || len(chunk) > ChunkBytes || !utf8.ValidString(chunk) {
				t.Fatalf("bad chunk %q on %s", chunk, stream)
			}
			streamed.WriteString(chunk)
		})
		c.read(&splitReader{[]byte(full), sizes}, Stdout)
		if streamed.String() != full {
			t.Fatalf("streamed %d bytes, want %d", streamed.Len(), len(full))
		}

		out, cut := c.result()
		if !utf8.ValidString(out) {
			t.Fatal("result is not valid UTF-8")
		}
		if len(full) <= max {
			if cut || out != full {
				t.Fatalf("result %q, cut %v; want the whole %q", out, cut, full)
			}
			return
		}
		if !cut {
			t.Fatal("not reported as cut")
		}
		marker := truncationMarker(len(full), len(full))
		if max >= len(marker)+2 && len(out) > max {
			t.Fatalf("result is %d bytes, bound %d", len(out), max)
		}
		i := strings.Index(out, "[output truncated: ")
		if i < 0 {
			t.Fatalf("no marker in %q", out)
		}
		head, rest := out[:i], out[i:]
		line, tail, _ := strings.Cut(rest, "\n")
		var shown, total int
		if _, err := fmt.Sscanf(line, "[output truncated: %d of %d bytes shown]", &shown, &total); err != nil {
			t.Fatalf("marker %q: %v", line, err)
		}
		// The newline before the marker is either the output's own or one
		// added because the head did not end a line.
		kept := len(head)
		if !strings.HasPrefix(full, head) || shown != kept+len(tail) {
			kept--
		}
		if kept < 0 || !strings.HasPrefix(full, head[:kept]) || !strings.HasSuffix(full, tail) {
			t.Fatalf("head %q or tail %q not from the output", head, tail)
		}
		if total != len(full) || shown != kept+len(tail) {
			t.Fatalf("marker says %d of %d; head %d, tail %d, total %d", shown, total, kept, len(tail), len(full))
		}
	})
}

// The head and tail of a large output are each cut at a line end when
// that keeps most of them.
func TestCollectorCutsAtLines(t *testing.T) {
	t.Parallel()
	c := newCollector(500, nil)
	var full strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&full, "line %d\n", i)
	}
	c.add(Stdout, []byte(full.String()))
	out, cut := c.result()
	if !cut || !strings.HasPrefix(out, "line 0\n") || !strings.HasSuffix(out, "line 999\n") {
		t.Fatalf("result %q", out)
	}
	for l := range strings.Lines(out) {
		if !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[output truncated: ") {
			t.Errorf("partial line %q in %q", l, out)
		}
	}
}

func TestCompleteCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xc3", 1}, {"a\xc3\xa9", 3}, {"\xe2\x82", 0},
		{"a\xf0\x9d\x84", 1}, {"a\xf0\x9d\x84\x9e", 5}, {"a\xff", 2}, {"a\x80", 2},
	} {
		if got := textutil.CompleteLen([]byte(tc.in)); got != tc.want {
			t.Errorf("CompleteLen(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
