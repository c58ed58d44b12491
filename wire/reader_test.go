package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

// readAll returns each line as a string, or "!"+error for errors, until EOF.
func readAll(t *testing.T, lr *LineReader) []string {
	t.Helper()
	var out []string
	for i := 0; i < 1000; i++ {
		line, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return out
		case err != nil:
			out = append(out, "!"+err.Error())
		default:
			out = append(out, string(line))
		}
	}
	t.Fatal("reader did not reach EOF")
	return nil
}

func TestLineReader(t *testing.T) {
	tooBig := "!" + ErrFrameTooLarge.Error()
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"empty input", "", 32, nil},
		{"one line", "abc\n", 32, []string{"abc"}},
		{"crlf tolerated", "abc\r\ndef\n", 32, []string{"abc", "def"}},
		{"lone cr kept", "a\rb\n", 32, []string{"a\rb"}},
		{"last line without newline", "abc\ndef", 32, []string{"abc", "def"}},
		{"blank lines are lines", "\n\n", 32, []string{"", ""}},
		{"exactly max with newline", strings.Repeat("x", 31) + "\nok\n", 32, []string{strings.Repeat("x", 31), "ok"}},
		{"one over max", strings.Repeat("x", 32) + "\nok\n", 32, []string{tooBig, "ok"}},
		{"far over max", strings.Repeat("x", 10000) + "\nok\n", 32, []string{tooBig, "ok"}},
		{"overlong at EOF", strings.Repeat("x", 100), 32, []string{tooBig}},
		{"two overlong", strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 100) + "\nz\n", 32, []string{tooBig, tooBig, "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAll(t, NewLineReaderSize(strings.NewReader(tt.in), tt.max))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLineReaderOneByteReads checks framing does not depend on how the
// input is split into reads.
func TestLineReaderOneByteReads(t *testing.T) {
	in := "a\r\n" + strings.Repeat("x", 50) + "\nbb\n"
	got := readAll(t, NewLineReaderSize(iotestOneByte{strings.NewReader(in)}, 16))
	want := []string{"a", "!" + ErrFrameTooLarge.Error(), "bb"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// TestLineReaderFlatMemory streams 64 MiB without a newline and checks the
// reader's buffer never grows past the bound.
func TestLineReaderFlatMemory(t *testing.T) {
	r := io.MultiReader(&repeatReader{n: 64 << 20}, strings.NewReader("\nnext\n"))
	lr := NewLineReader(r)
	if _, err := lr.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("first Next = %v, want ErrFrameTooLarge", err)
	}
	// One frame plus slack for append's growth, whatever the input's length.
	if limit := protocol.MaxFrameBytes + 128<<10; cap(lr.buf) > limit {
		t.Errorf("buffer grew to %d bytes, limit is %d", cap(lr.buf), limit)
	}
	line, err := lr.Next()
	if err != nil || string(line) != "next" {
		t.Fatalf("second Next = %q, %v", line, err)
	}
}

type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if len(p) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = 'x'
	}
	r.n -= len(p)
	return len(p), nil
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("ab"), errReader{boom}))
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("Next = %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
