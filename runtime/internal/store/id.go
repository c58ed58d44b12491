package store

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"octet.dev/host/protocol"
)

// MaxIDLen is the longest valid session ID in bytes (CONTRACT §4).
const MaxIDLen = protocol.MaxIDBytes

// Suffixes of the files a session owns in its directory. Every name the store
// derives from an ID ends with one of them.
const (
	fileSuffix = ".jsonl"
	lockSuffix = ".lock" // appended to the session file name
	tmpSuffix  = ".tmp"  // appended to the session file name, used at creation
)

// maxReadableLen bounds the escaped (readable) form of a file name stem.
// An ID of 128 dots escapes to 384 bytes, past Linux's NAME_MAX of 255, so
// longer stems switch to the compact form (see FileName).
const maxReadableLen = 200

// compactPrefix starts the compact form of a stem. The readable form never
// contains "~b" ('~' is always followed by '2' or '3' there), so the two forms
// cannot collide.
const compactPrefix = "~b"

// compactEnc is unpadded lower-case base32: letters and digits only, so the
// compact form is also safe on case-insensitive file systems.
var compactEnc = sync.OnceValue(func() *base32.Encoding {
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
})

// ValidateID reports whether id is a valid session ID: 1..128 bytes of ASCII
// letters, digits, '-', '_', '.', ':' (CONTRACT §4). The error wraps
// ErrInvalidID.
func ValidateID(id string) error {
	if len(id) == 0 {
		return fmt.Errorf("%w: empty", ErrInvalidID)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidID, len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !protocol.IDByte(id[i]) {
			return fmt.Errorf("%w: byte %d is %q", ErrInvalidID, i, id[i])
		}
	}
	return nil
}

// FileName maps a session ID to the base name of its session file. The
// mapping is injective, the result never contains '/', is never "." or "..",
// and is at most 255 bytes even with the lock suffix, so an ID can neither
// escape the session directory nor select another session's file.
//
// The readable form keeps [A-Za-z0-9_-] and escapes '.' as "~2e" and ':' as
// "~3a" ('~' is not an ID byte, so it is a safe escape): "a.b" maps to
// "a~2eb.jsonl" and ".." to "~2e~2e.jsonl". When the escaped stem would be
// longer than 200 bytes, the stem is "~b" followed by the unpadded lower-case
// base32 of the ID instead.
func FileName(id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	n := len(id) + 2*(strings.Count(id, ".")+strings.Count(id, ":"))
	if n > maxReadableLen {
		return compactPrefix + compactEnc().EncodeToString([]byte(id)) + fileSuffix, nil
	}
	var b strings.Builder
	b.Grow(n + len(fileSuffix))
	for i := 0; i < len(id); i++ {
		switch c := id[i]; c {
		case '.':
			b.WriteString("~2e")
		case ':':
			b.WriteString("~3a")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(fileSuffix)
	return b.String(), nil
}

// idFromFileName inverts FileName. It exists to prove the mapping injective
// in tests; the store never needs to list sessions by file name.
func idFromFileName(name string) (string, error) {
	stem, ok := strings.CutSuffix(name, fileSuffix)
	if !ok {
		return "", fmt.Errorf("%w: no %s suffix", ErrInvalidID, fileSuffix)
	}
	var id string
	if enc, ok := strings.CutPrefix(stem, compactPrefix); ok {
		raw, err := compactEnc().DecodeString(enc)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidID, err)
		}
		id = string(raw)
	} else {
		var b strings.Builder
		for i := 0; i < len(stem); i++ {
			c := stem[i]
			if c != '~' {
				b.WriteByte(c)
				continue
			}
			switch {
			case strings.HasPrefix(stem[i:], "~2e"):
				b.WriteByte('.')
			case strings.HasPrefix(stem[i:], "~3a"):
				b.WriteByte(':')
			default:
				return "", fmt.Errorf("%w: bad escape at %d", ErrInvalidID, i)
			}
			i += 2
		}
		id = b.String()
	}
	if err := ValidateID(id); err != nil {
		return "", err
	}
	if again, _ := FileName(id); again != name {
		return "", fmt.Errorf("%w: %q is not canonical", ErrInvalidID, name)
	}
	return id, nil
}

// NewID returns a fresh random session ID for a run that named none: the
// creation time in milliseconds as 12 hex digits (so IDs sort by creation
// time), '-', and 16 random hex digits.
//
// The random digits come from math/rand/v2's global source: the runtime's
// per-thread ChaCha8 generator, seeded from the kernel's randomness when the
// process starts, so IDs differ between processes as within one. An ID names
// a file; it is not a secret, and crypto/rand would cost every `octet -p` a
// getrandom call and a timer on its first use (about 4% of its start to the
// answer, measured).
func NewID() string {
	var r [8]byte
	binary.BigEndian.PutUint64(r[:], rand.Uint64())
	ms := strconv.FormatInt(time.Now().UnixMilli(), 16)
	if len(ms) < 12 {
		ms = strings.Repeat("0", 12-len(ms)) + ms
	}
	return ms + "-" + hex.EncodeToString(r[:])
}
