package responses

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// frameReader reads the server's messages straight off the upgraded
// connection (RFC 6455 §5), in place of the library's NextReader, which
// allocates a reader for every message: a message here costs nothing but
// its bytes, so a delta over WebSocket costs what it costs over SSE. The
// library keeps the handshake and every write; the reader answers a ping
// and a close through the library's WriteControl, which may run beside
// the writer (writeText).
//
// It reads what the library would: text and binary messages, fragmented
// or not, with control frames between their fragments; no extension
// (compression is never negotiated: clientConn refuses an answer that
// turns one on), so a frame with a reserved bit set is a protocol error,
// as is a masked frame from the server, a continuation that continues
// nothing, a new message inside a fragmented one, or a control frame that
// is fragmented or longer than 125 bytes. A message longer than limit is
// ErrReadLimit (the library's), after a close frame 1009 to the server; a
// close from the server is answered and read as a *websocket.CloseError
// with its code and reason. An error is sticky: every later read returns
// it.
//
// One frameReader belongs to one socket and is used by one call at a time
// (the socket's reader); it is itself the reader of the current message.
type frameReader struct {
	br    *bufio.Reader
	conn  *websocket.Conn // for the control frames it answers
	limit int64           // the longest message, in bytes (0: no bound; socket.setReadLimit)

	left   int64 // payload bytes of the current frame not read yet
	final  bool  // the current frame is its message's last
	inMsg  bool  // a message is being read: its next frame is a continuation
	length int64 // the current message's length so far
	err    error

	hdr [8]byte   // a frame header's bytes
	ctl [125]byte // a control frame's payload
}

// newFrameReader reads the messages of conn, whose upgraded connection is
// rw (the library has read nothing of it past the handshake).
func newFrameReader(rw io.Reader, conn *websocket.Conn) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(rw, 4<<10), conn: conn}
}

// WebSocket opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// controlWait bounds the write of a control frame the reader answers with.
const controlWait = time.Second

// next skips what is left of the current message and advances to the next
// one, returning its type (websocket.TextMessage or BinaryMessage). The
// frameReader then reads that message's payload, io.EOF at its end.
func (f *frameReader) next() (int, error) {
	for f.err == nil {
		if f.left > 0 {
			n, err := f.br.Discard(int(min(f.left, 1<<30)))
			f.left -= int64(n)
			if err != nil {
				f.fail(unexpected(err))
			}
			continue
		}
		op, err := f.frame()
		if err != nil {
			break
		}
		switch op {
		case opText:
			return websocket.TextMessage, nil
		case opBinary:
			return websocket.BinaryMessage, nil
		}
		// A continuation of a message nobody reads any more: skipped.
	}
	return 0, f.err
}

// Read reads the current message's payload; io.EOF ends the message.
func (f *frameReader) Read(p []byte) (int, error) {
	for f.left == 0 {
		if f.err != nil {
			return 0, f.err
		}
		if f.final || !f.inMsg {
			return 0, io.EOF
		}
		op, err := f.frame()
		if err != nil {
			return 0, err
		}
		if op != opContinuation {
			return 0, f.protocolError("a new message inside a fragmented one")
		}
	}
	if f.err != nil {
		return 0, f.err
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.br.Read(p)
	f.left -= int64(n)
	if err != nil {
		f.fail(unexpected(err))
		if n == 0 {
			return 0, f.err
		}
	}
	return n, nil
}

// frame reads frame headers up to the next data frame, answering the
// control frames on the way, and returns its opcode; the payload is left
// to read (f.left).
func (f *frameReader) frame() (int, error) {
	for {
		h := f.hdr[:2] // a field: a local array would escape through io.ReadFull
		if _, err := io.ReadFull(f.br, h); err != nil {
			return 0, f.fail(unexpected(err))
		}
		fin, op := h[0]&0x80 != 0, int(h[0]&0x0f)
		n := int64(h[1] & 0x7f)
		// The header's faults, before its length is read.
		switch {
		case h[0]&0x70 != 0:
			return 0, f.protocolError("a reserved bit is set, and no extension was negotiated")
		case op >= opClose && op <= opPong && (!fin || n > int64(len(f.ctl))):
			return 0, f.protocolError("a control frame is fragmented or longer than 125 bytes")
		case (op == opText || op == opBinary) && f.inMsg:
			return 0, f.protocolError("a new message inside a fragmented one")
		case op == opContinuation && !f.inMsg:
			return 0, f.protocolError("a continuation frame continues no message")
		case op != opContinuation && op != opText && op != opBinary && (op < opClose || op > opPong):
			return 0, f.protocolError("an unknown opcode")
		case h[1]&0x80 != 0:
			return 0, f.protocolError("a frame from the server is masked")
		}
		switch n {
		case 126:
			b := f.hdr[:2]
			if _, err := io.ReadFull(f.br, b); err != nil {
				return 0, f.fail(unexpected(err))
			}
			n = int64(binary.BigEndian.Uint16(b))
		case 127:
			b := f.hdr[:8]
			if _, err := io.ReadFull(f.br, b); err != nil {
				return 0, f.fail(unexpected(err))
			}
			u := binary.BigEndian.Uint64(b)
			if u>>63 != 0 {
				// Longer than any bound (the library reads it so).
				return 0, f.overLimit()
			}
			n = int64(u)
		}
		switch op {
		case opContinuation, opText, opBinary:
			if op != opContinuation {
				f.length = 0
			}
			f.length += n
			if f.limit > 0 && f.length > f.limit {
				return 0, f.overLimit()
			}
			f.left, f.final, f.inMsg = n, fin, !fin
			return op, nil
		default: // close, ping, pong
			payload := f.ctl[:n]
			if _, err := io.ReadFull(f.br, payload); err != nil {
				return 0, f.fail(unexpected(err))
			}
			switch op {
			case opPing:
				// Answered at once; a write that fails shows on the next
				// read.
				_ = f.conn.WriteControl(websocket.PongMessage, payload, time.Now().Add(controlWait))
			case opClose:
				return 0, f.closed(payload)
			}
		}
	}
}

// closed answers the server's close frame and returns its error.
func (f *frameReader) closed(payload []byte) error {
	code, text := websocket.CloseNoStatusReceived, ""
	if len(payload) >= 2 { // one byte reads as no status, as the library reads it
		code, text = int(binary.BigEndian.Uint16(payload)), string(payload[2:])
		if !validCloseCode(code) {
			return f.protocolError("a close frame carries an invalid status code")
		}
		if !utf8.ValidString(text) {
			return f.protocolError("a close frame's reason is not UTF-8")
		}
	}
	// The same code back; none (an empty close) when none came.
	_ = f.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(controlWait))
	return f.fail(&websocket.CloseError{Code: code, Text: text})
}

// validCloseCode reports whether a close frame may carry code (RFC 6455
// §7.4): a defined code that may be sent, or one of the ranges left to
// libraries, applications and private use.
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1013, code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// overLimit fails a message longer than the limit: a close frame 1009 to
// the server, then ErrReadLimit.
func (f *frameReader) overLimit() error {
	_ = f.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseMessageTooBig, ""), time.Now().Add(controlWait))
	return f.fail(websocket.ErrReadLimit)
}

// protocolError fails the connection (RFC 6455 §7.1.7): a close frame
// 1002 to the server, with what was wrong as its reason, then the error.
func (f *frameReader) protocolError(what string) error {
	_ = f.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseProtocolError, what), time.Now().Add(controlWait))
	return f.fail(errors.New("websocket: protocol error: " + what))
}

// fail makes err the reader's sticky error, unless it has one.
func (f *frameReader) fail(err error) error {
	if f.err == nil {
		f.err = err
	}
	f.left = 0
	return f.err
}

// unexpected is the error of a read that met the connection's end: the
// library's (an abnormal closure, 1006, whose text says so), so that a
// cut reads the same whichever reader met it. Other errors stay as they
// are.
func unexpected(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &websocket.CloseError{Code: websocket.CloseAbnormalClosure, Text: io.ErrUnexpectedEOF.Error()}
	}
	return err
}

// libraryReader makes new sockets read through the library's NextReader:
// the tests that hold frameReader to the library's reading set it.
var libraryReader = false

// setReadLimit bounds a message's length, in bytes.
func (s *socket) setReadLimit(n int64) {
	s.conn.SetReadLimit(n)
	if s.frames != nil {
		s.frames.limit = n
	}
}
