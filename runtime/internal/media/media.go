package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/provider"
)

// Caps (CONTRACT §8).
const (
	MaxImageBytes      = 5 << 20  // one image
	MaxImageTotalBytes = 20 << 20 // all images of a run
	MaxAudioBytes      = 20 << 20 // one clip
	MaxAudioTotalBytes = 40 << 20 // all clips of a run
)

// Error categories; every error Load returns wraps one of them.
var (
	// ErrInvalid: an unknown type, a path outside the workspace, through a
	// link, missing or not a regular file, or bytes of no recognized format
	// or of the other type.
	ErrInvalid = errors.New("media invalid")
	// ErrTooLarge: a file over its cap.
	ErrTooLarge = errors.New("media too large")
)

// Ref is one requested input.
type Ref struct {
	Type string // provider.MediaImage or provider.MediaAudio
	Path string // absolute inside the workspace, or relative to it
}

// format is a recognized file format.
type format struct {
	typ, name, mime string
}

// Sniff recognizes the format of b. name (the file's base name) matters only
// for raw PCM16, which has no signature and is recognized by a ".pcm"
// extension when nothing else matches.
func Sniff(b []byte, name string) (typ, formatName, mime string, ok bool) {
	f, ok := sniff(b, name)
	return f.typ, f.name, f.mime, ok
}

func sniff(b []byte, name string) (format, bool) {
	has := func(off int, sig string) bool {
		return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return format{provider.MediaImage, "png", "image/png"}, true
	case has(0, "\xff\xd8\xff"):
		return format{provider.MediaImage, "jpeg", "image/jpeg"}, true
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return format{provider.MediaImage, "gif", "image/gif"}, true
	case has(0, "RIFF") && has(8, "WEBP"):
		return format{provider.MediaImage, "webp", "image/webp"}, true
	case has(0, "RIFF") && has(8, "WAVE"):
		return format{provider.MediaAudio, "wav", "audio/wav"}, true
	case has(0, "fLaC"):
		return format{provider.MediaAudio, "flac", "audio/flac"}, true
	case has(0, "OggS") && bytes.Contains(b[:min(len(b), 128)], []byte("OpusHead")):
		return format{provider.MediaAudio, "opus", "audio/opus"}, true
	case has(0, "ID3"):
		return format{provider.MediaAudio, "mp3", "audio/mpeg"}, true
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xf6 == 0xf0:
		// ADTS sync word with layer 0: AAC.
		return format{provider.MediaAudio, "aac", "audio/aac"}, true
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 != 0:
		// MPEG audio frame sync with a layer set: MP3 without an ID3 tag.
		return format{provider.MediaAudio, "mp3", "audio/mpeg"}, true
	case strings.EqualFold(path.Ext(name), ".pcm") && len(b) > 0 && len(b)%2 == 0:
		return format{provider.MediaAudio, "pcm16", "audio/pcm"}, true
	}
	return format{}, false
}

// Load reads one input. The error message names the input by its index and
// its workspace-relative path, never a host path outside the workspace.
func Load(root *confine.Root, i int, ref Ref) (provider.Media, error) {
	limit := int64(MaxImageBytes)
	switch ref.Type {
	case provider.MediaImage:
	case provider.MediaAudio:
		limit = MaxAudioBytes
	default:
		return provider.Media{}, fmt.Errorf("%w: media[%d].type must be \"image\" or \"audio\"", ErrInvalid, i)
	}
	rel, err := root.Rel(ref.Path)
	if err != nil {
		return provider.Media{}, fmt.Errorf("%w: media[%d].path is outside the workspace", ErrInvalid, i)
	}
	f, info, err := root.OpenRegular(rel)
	if err != nil {
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q: %s", ErrInvalid, i, rel, reason(err))
	}
	defer f.Close()
	if info.Size() > limit {
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q is %d bytes; an %s may have at most %d", ErrTooLarge, i, rel, info.Size(), article(ref.Type), limit)
	}
	// Read from the checked descriptor, one byte past the cap in case the
	// file grew after fstat.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q cannot be read", ErrInvalid, i, rel)
	}
	if int64(len(data)) > limit {
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q grew past %d bytes while read", ErrTooLarge, i, rel, limit)
	}
	fm, ok := sniff(data, path.Base(rel))
	switch {
	case !ok:
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q is not a PNG, JPEG, GIF or WebP image nor a WAV, MP3, FLAC, Opus, AAC or PCM16 clip", ErrInvalid, i, rel)
	case fm.typ != ref.Type:
		return provider.Media{}, fmt.Errorf("%w: media[%d] %q is declared %s but holds %s (%s)", ErrInvalid, i, rel, ref.Type, fm.typ, fm.name)
	}
	sum := sha256.Sum256(data)
	return provider.Media{Type: fm.typ, MIMEType: fm.mime, Format: fm.name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data)), Data: data}, nil
}

func article(typ string) string {
	if typ == provider.MediaAudio {
		return "audio clip"
	}
	return "image"
}

// reason says in a few words why a file could not be opened.
func reason(err error) string {
	switch {
	case errors.Is(err, confine.ErrSymlink):
		return "a symbolic link is in the path"
	case errors.Is(err, confine.ErrIsDir):
		return "is a directory"
	case errors.Is(err, confine.ErrNotRegular):
		return "is not a regular file"
	case errors.Is(err, confine.ErrNotFound):
		return "does not exist"
	case errors.Is(err, confine.ErrEscape):
		return "is outside the workspace"
	}
	return "cannot be opened"
}
