package media

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"

	"octet.dev/host/runtime/provider"
)

// Output media (CONTRACT §9 output_media): what a model produces is decoded
// from base64 as it arrives into a temporary file, hashed and sniffed on the
// way, so that no buffer ever holds a whole image or clip, let alone twice.

// Caps of one output media object, decoded. A generated image travels in
// one SSE line of at most edge.MaxLongDataBytes (32 MiB) of base64, so it
// is at most 24 MiB; an audio response arrives in many small chunks and is
// capped at 64 MiB (about 23 minutes of 24 kHz 16-bit mono PCM).
const (
	MaxOutputImageBytes = 24 << 20
	MaxOutputAudioBytes = 64 << 20
)

// MaxOutputImages bounds the generated images one model call may spool
// (16 × 24 MiB on disk at most): a response with more fails as
// undecodable, so a hostile server cannot fill the disk image by image.
const MaxOutputImages = 16

// ErrOutputTooLarge reports output media over its cap; ErrOutputInvalid
// base64 that does not decode.
var (
	ErrOutputTooLarge = errors.New("output media too large")
	ErrOutputInvalid  = errors.New("output media is not valid base64")
)

// OctetStream is the MIME type of output media whose bytes are of no
// recognized format of its type.
const OctetStream = "application/octet-stream"

// spoolPattern names the temporary files (store's AdoptMedia accepts only
// files with this prefix).
const spoolPattern = ".tmp-out-*"

// encChunk is how many base64 characters are decoded at a time: a multiple
// of 4.
const encChunk = 64 << 10

// Spool decodes base64 written to it in pieces into a temporary file. A
// discarding Spool (Discard) decodes nothing and keeps nothing: partial
// images and the duplicates a terminal event repeats go there. A Spool is
// used by one goroutine.
type Spool struct {
	typ  string
	pcm  bool // signatureless audio may be PCM16 (see OutputMIME)
	f    *os.File
	w    *bufio.Writer
	h    hash.Hash
	n    int64 // decoded bytes
	max  int64
	head []byte // the first sniffWindow decoded bytes
	enc  []byte // pending base64 characters
	dec  []byte
	pad  bool // a chunk ended in padding: nothing may follow
	err  error
}

// sniffWindow is how many leading bytes OutputMIME looks at.
const sniffWindow = 512

// NewSpool returns a Spool of media of typ (provider.MediaImage or
// MediaAudio) decoding into a new temporary file in dir (os.TempDir when
// empty), which is created (mode 0700) when missing. pcm says the route
// asked for PCM16 audio, which has no signature (OutputMIME).
func NewSpool(dir, typ string, pcm bool) (*Spool, error) {
	if dir != "" {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("media: output spool: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, spoolPattern)
	if err != nil {
		return nil, fmt.Errorf("media: output spool: %w", err)
	}
	s := &Spool{typ: typ, pcm: pcm, f: f, w: bufio.NewWriterSize(f, 64<<10), h: sha256.New(), max: capOf(typ)}
	s.head = make([]byte, 0, sniffWindow)
	return s, nil
}

// Discard returns a Spool that only checks the size of what it is given.
func Discard(typ string) *Spool { return &Spool{typ: typ, max: capOf(typ)} }

func capOf(typ string) int64 {
	if typ == provider.MediaAudio {
		return MaxOutputAudioBytes
	}
	return MaxOutputImageBytes
}

// Discarding reports whether s keeps nothing.
func (s *Spool) Discarding() bool { return s.f == nil }

// Write takes the next base64 characters (line breaks are ignored). It
// implements io.Writer; after an error every call returns it.
func (s *Spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.f == nil {
		// Three bytes per four characters, whatever they are.
		s.n += int64(len(p)) / 4 * 3
		if s.n > s.max {
			s.err = s.tooLarge()
		}
		return len(p), s.err
	}
	for _, c := range p {
		if c == '\n' || c == '\r' {
			continue
		}
		s.enc = append(s.enc, c)
		if len(s.enc) == encChunk {
			if s.flush(false); s.err != nil {
				return 0, s.err
			}
		}
	}
	return len(p), nil
}

func (s *Spool) tooLarge() error {
	return fmt.Errorf("%w: over %d bytes", ErrOutputTooLarge, s.max)
}

// flush decodes the pending characters; final pads an unpadded tail.
func (s *Spool) flush(final bool) {
	if len(s.enc) == 0 {
		return
	}
	if s.pad {
		s.err = fmt.Errorf("%w: data after the padding", ErrOutputInvalid)
		return
	}
	if final {
		switch len(s.enc) % 4 {
		case 1:
			s.err = fmt.Errorf("%w: truncated", ErrOutputInvalid)
			return
		case 2:
			s.enc = append(s.enc, '=', '=')
		case 3:
			s.enc = append(s.enc, '=')
		}
	}
	need := base64.StdEncoding.DecodedLen(len(s.enc))
	if cap(s.dec) < need {
		s.dec = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(s.dec[:need], s.enc)
	if err != nil {
		s.err = fmt.Errorf("%w: %v", ErrOutputInvalid, err)
		return
	}
	s.pad = s.enc[len(s.enc)-1] == '='
	s.enc = s.enc[:0]
	out := s.dec[:n]
	if s.n+int64(n) > s.max {
		s.err = s.tooLarge()
		return
	}
	s.n += int64(n)
	if room := sniffWindow - len(s.head); room > 0 {
		s.head = append(s.head, out[:min(room, len(out))]...)
	}
	s.h.Write(out)
	if _, err := s.w.Write(out); err != nil {
		s.err = fmt.Errorf("media: output spool: %w", err)
	}
}

// Finish decodes what is left and closes the file. It returns the media
// (nil for a discarding Spool, or for no bytes at all, whose file is
// removed). On error the file is removed.
func (s *Spool) Finish() (*provider.OutputMedia, error) {
	if s.f == nil {
		return nil, s.err
	}
	if s.err == nil {
		s.flush(true)
	}
	if s.err == nil {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("media: output spool: %w", err)
		}
	}
	name := s.f.Name()
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("media: output spool: %w", err)
	}
	s.f = nil
	if s.err != nil || s.n == 0 {
		_ = os.Remove(name)
		return nil, s.err
	}
	mime, format := OutputMIME(s.typ, s.head, s.pcm && s.n%2 == 0)
	return &provider.OutputMedia{
		Type: s.typ, MIMEType: mime, Format: format,
		SHA256: hex.EncodeToString(s.h.Sum(nil)), Bytes: s.n, Spool: name,
	}, nil
}

// Abort closes and removes the file; a finished or discarding Spool is
// left alone.
func (s *Spool) Abort() {
	if s.f == nil {
		return
	}
	name := s.f.Name()
	_ = s.f.Close()
	_ = os.Remove(name)
	s.f = nil
	if s.err == nil {
		s.err = errors.New("media: output spool aborted")
	}
}

// OutputMIME returns the MIME type of output media of typ whose first bytes
// are head: the sniffed type when the bytes are of a recognized format of
// typ, whatever the wire declared (a response's output_format may say png
// for a JPEG). Bytes of no recognized format are application/octet-stream,
// except audio of a route that asked for PCM16 (pcm): raw PCM has no
// signature to sniff, so signatureless audio there is audio/pcm (the
// caller checks the length is even).
// The format is the sniffed format's short name (png, wav, pcm16, …), ""
// with application/octet-stream.
func OutputMIME(typ string, head []byte, pcm bool) (mime, format string) {
	f, ok := sniff(head, "")
	if !ok && pcm && typ == provider.MediaAudio {
		f, ok = sniff(head, "out.pcm")
	}
	if !ok || f.typ != typ {
		return OctetStream, ""
	}
	return f.mime, f.name
}
