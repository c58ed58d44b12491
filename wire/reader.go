package wire

import (
	"bufio"
	"errors"
	"io"

	"octet.dev/host/protocol"
)

// ErrFrameTooLarge is returned by LineReader.Next for a line longer than the
// bound. The rest of that line has been discarded; the next call reads the
// following line.
var ErrFrameTooLarge = errors.New("wire: frame exceeds 1048576 bytes including the newline")

// LineReader reads newline-terminated frames with a hard bound. It never
// buffers more than the bound: an overlong line is skipped to its newline in
// bounded chunks, so memory stays flat whatever the line's length.
//
// A LineReader is not safe for concurrent use.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader returns a reader with the protocol bound of protocol.MaxFrameBytes.
func NewLineReader(r io.Reader) *LineReader { return NewLineReaderSize(r, protocol.MaxFrameBytes) }

// NewLineReaderSize returns a reader whose frames may be at most max bytes
// including the newline. It exists for tests; the protocol uses
// NewLineReader.
func NewLineReaderSize(r io.Reader, max int) *LineReader {
	size := 64 << 10
	if max < size {
		size = max
	}
	if size < 16 {
		size = 16
	}
	return &LineReader{r: bufio.NewReaderSize(r, size), max: max}
}

// Next returns the next line without its "\n" (and without a "\r" just
// before it). The slice is valid until the next call. At end of input it
// returns io.EOF; a final line without a newline is returned as a line
// first. An overlong line yields ErrFrameTooLarge after it has been
// discarded.
func (l *LineReader) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(chunk) > l.max {
			l.buf = l.buf[:0]
			if err == nil { // the chunk ended the line
				return nil, ErrFrameTooLarge
			}
			return nil, l.discard(err)
		}
		l.buf = append(l.buf, chunk...)
		switch {
		case err == nil:
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 {
				return nil, io.EOF
			}
			if len(l.buf)+1 > l.max { // bounded as if it had its newline
				l.buf = l.buf[:0]
				return nil, ErrFrameTooLarge
			}
			return trimEOL(l.buf), nil
		default:
			return nil, err
		}
	}
}

// discard skips to the end of the current line. It reports ErrFrameTooLarge
// once the newline (or EOF) is reached, or the read error otherwise.
func (l *LineReader) discard(err error) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.r.ReadSlice('\n')
	}
	if err == nil || errors.Is(err, io.EOF) {
		return ErrFrameTooLarge
	}
	return err
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
