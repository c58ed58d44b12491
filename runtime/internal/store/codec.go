package store

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The line codec. Every line is one compact JSON object ending in '\n'; the
// encoder escapes control characters, so a value can never contain a raw
// newline. Decoding is strict about syntax (duplicate names and invalid
// UTF-8 are errors, names are case-sensitive) and tolerant of unknown
// members, so that additive fields written by newer builds still load.

// encodeOpts mangles invalid UTF-8 (for example in tool output) to U+FFFD
// instead of failing the append: a record is always stored as valid JSON.
var encodeOpts = jsontext.AllowInvalidUTF8(true)

// envelope is the wire form of a record: "type" and "ts" first, then the
// body's members embedded.
type envelope[T any] struct {
	Type string    `json:"type"`
	TS   time.Time `json:"ts"`
	Body T         `json:",embed"`
}

// uncertaintyBody nests UsageUncertainty under "record" (CONTRACT §12).
type uncertaintyBody struct {
	Record UsageUncertainty `json:"record"`
}

// headerLine is the wire form of Header. SchemaVersion is a pointer so that
// a missing member is told apart from 0.
type headerLine struct {
	Type          string    `json:"type"`
	SchemaVersion *int      `json:"schema_version"`
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
}

func appendHeader(dst []byte, h Header) ([]byte, error) {
	v := h.SchemaVersion
	return appendLine(dst, headerLine{Type: TypeSession, SchemaVersion: &v, ID: h.ID, CreatedAt: h.CreatedAt})
}

// appendRecord appends r's line, newline included, to dst.
func appendRecord(dst []byte, r Record) ([]byte, error) {
	switch b := r.Body.(type) {
	case Message:
		return appendLine(dst, envelope[Message]{TypeMessage, r.TS, b})
	case ModelChange:
		return appendLine(dst, envelope[ModelChange]{TypeModelChange, r.TS, b})
	case Usage:
		return appendLine(dst, envelope[Usage]{TypeUsage, r.TS, b})
	case UsageUncertainty:
		return appendLine(dst, envelope[uncertaintyBody]{TypeUsageUncertainty, r.TS, uncertaintyBody{b}})
	case ReasoningChange:
		return appendLine(dst, envelope[ReasoningChange]{TypeReasoningChange, r.TS, b})
	case Compaction:
		return appendLine(dst, envelope[Compaction]{TypeCompaction, r.TS, b})
	case RunStart:
		return appendLine(dst, envelope[RunStart]{TypeRunStart, r.TS, b})
	case RunEnd:
		return appendLine(dst, envelope[RunEnd]{TypeRunEnd, r.TS, b})
	case Checkout:
		return appendLine(dst, envelope[Checkout]{TypeCheckout, r.TS, b})
	case Fork:
		return appendLine(dst, envelope[Fork]{TypeFork, r.TS, b})
	case NativeSteering:
		return appendLine(dst, envelope[NativeSteering]{TypeNativeSteering, r.TS, b})
	case nil:
		return dst, fmt.Errorf("%w: nil body", ErrInvalidRecord)
	default:
		return dst, fmt.Errorf("%w: cannot append a %T record", ErrInvalidRecord, r.Body)
	}
}

func appendLine(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v, encodeOpts)
	if err != nil {
		return dst, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	dst = append(dst, b...)
	return append(dst, '\n'), nil
}

// decodeHeader parses line 1 (without its newline).
func decodeHeader(line []byte, id string) (Header, error) {
	var h headerLine
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, err
	}
	switch {
	case h.Type != TypeSession:
		return Header{}, fmt.Errorf("header type is %q, want %q", h.Type, TypeSession)
	case h.SchemaVersion == nil:
		return Header{}, errors.New("header has no schema_version")
	case *h.SchemaVersion != SchemaVersion:
		return Header{}, fmt.Errorf("%w: %d (this build reads %d)", ErrUnsupportedSchema, *h.SchemaVersion, SchemaVersion)
	case h.ID != id:
		return Header{}, fmt.Errorf("header id %q does not match session id %q", h.ID, id)
	}
	return Header{SchemaVersion: *h.SchemaVersion, ID: h.ID, CreatedAt: h.CreatedAt}, nil
}

// decodeRecord parses one record line (without its newline).
func decodeRecord(line []byte) (Record, error) {
	typ, ok := sniffType(line)
	if !ok {
		var t struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(line, &t); err != nil {
			return Record{}, err
		}
		if t.Type == nil {
			return Record{}, errors.New("record has no type")
		}
		typ = *t.Type
	}
	switch typ {
	case TypeMessage:
		return decodeAs[Message](line)
	case TypeModelChange:
		return decodeAs[ModelChange](line)
	case TypeUsage:
		return decodeAs[Usage](line)
	case TypeUsageUncertainty:
		ts, b, err := decodeEnvelope[uncertaintyBody](line)
		if err != nil {
			return Record{}, err
		}
		return Record{TS: ts, Body: b.Record}, nil
	case TypeReasoningChange:
		return decodeAs[ReasoningChange](line)
	case TypeCompaction:
		return decodeAs[Compaction](line)
	case TypeRunStart:
		return decodeAs[RunStart](line)
	case TypeRunEnd:
		return decodeAs[RunEnd](line)
	case TypeCheckout:
		return decodeAs[Checkout](line)
	case TypeFork:
		return decodeAs[Fork](line)
	case TypeNativeSteering:
		return decodeAs[NativeSteering](line)
	case TypeSession:
		return Record{}, errors.New("second session header")
	case "":
		return Record{}, errors.New("record has an empty type")
	}
	return decodeUnknown(line)
}

func decodeAs[T Body](line []byte) (Record, error) {
	ts, b, err := decodeEnvelope[T](line)
	if err != nil {
		return Record{}, err
	}
	return Record{TS: ts, Body: b}, nil
}

func decodeEnvelope[T any](line []byte) (time.Time, T, error) {
	var env envelope[T]
	if err := json.Unmarshal(line, &env); err != nil {
		return time.Time{}, env.Body, err
	}
	if env.TS.IsZero() {
		return time.Time{}, env.Body, fmt.Errorf("%s record has no ts", env.Type)
	}
	return env.TS, env.Body, nil
}

// decodeUnknown keeps a record of a type this build does not know. The line
// must still be a JSON object with a string type; its ts is taken when it
// parses as a time, since newer builds owe this one nothing more.
func decodeUnknown(line []byte) (Record, error) {
	var u struct {
		Type string         `json:"type"`
		TS   jsontext.Value `json:"ts"`
	}
	if err := json.Unmarshal(line, &u); err != nil {
		return Record{}, err
	}
	var ts time.Time
	if len(u.TS) > 0 && json.Unmarshal(u.TS, &ts) != nil {
		ts = time.Time{}
	}
	return Record{TS: ts, Body: Unknown{Type: u.Type, Raw: jsontext.Value(bytes.Clone(line))}}, nil
}

// sniffType reads the type of a line this package wrote, whose first member
// is a plain "type" string. It returns false for any other shape, and the
// caller then finds the type with a full decode.
func sniffType(line []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// validate checks what the JSON types cannot: the invariants loading relies
// on. msgs is the number of message records before r, n the number of
// records before it, and prior returns the type of the earlier record
// entry (1-based).
func validate(r Record, msgs int, prior func(entry int) string, n int) error {
	if _, ok := r.Body.(Unknown); ok {
		return nil // owes this build nothing beyond being a typed object
	}
	if r.TS.IsZero() {
		return errors.New("zero ts")
	}
	switch b := r.Body.(type) {
	case Message:
		if b.Message.Role == "" {
			return errors.New("message has no role")
		}
		for i, m := range b.Message.Media {
			if (m.Type != "image" && m.Type != "audio") || !validDigest(m.SHA256) || m.Bytes < 0 || m.MIMEType == "" {
				return fmt.Errorf("message media[%d] is not a valid reference", i)
			}
		}
		for i, m := range b.Message.OutputMedia {
			if (m.Type != "image" && m.Type != "audio") || !validDigest(m.SHA256) || m.Bytes < 0 || m.MIMEType == "" {
				return fmt.Errorf("message output_media[%d] is not a valid reference", i)
			}
		}
	case ModelChange:
		if b.Model == "" {
			return errors.New("model_change has no model")
		}
	case Usage:
		if b.Step < 0 {
			return fmt.Errorf("usage step %d is negative", b.Step)
		}
	case Compaction:
		if b.FirstKept < 0 || b.FirstKept > msgs {
			return fmt.Errorf("compaction first_kept %d is outside [0, %d]", b.FirstKept, msgs)
		}
		if b.Items != nil && (b.Route == "" || b.Items.Kind() != '[') {
			return errors.New("a native compaction needs its route and a JSON array of items")
		}
	case RunStart:
		if b.RunID == "" {
			return errors.New("run_start has no run_id")
		}
	case RunEnd:
		if b.RunID == "" || b.Status == "" {
			return errors.New("run_end needs run_id and status")
		}
	case Checkout:
		if b.Entry < 0 || b.Entry > n {
			return fmt.Errorf("checkout entry %d is outside [0, %d]", b.Entry, n)
		}
		if b.Entry > 0 {
			if t := prior(b.Entry); !isEntryType(t) {
				return fmt.Errorf("checkout entry %d is a %s record, not a message or compaction", b.Entry, t)
			}
		}
	case Fork:
		if n > 0 {
			return errors.New("fork is not the first record")
		}
		if ValidateID(b.ParentID) != nil || b.ParentEntry < 0 {
			return errors.New("fork needs a valid parent_id and a parent_entry >= 0")
		}
	}
	return nil
}

// isEntry reports whether b is an entry a checkout may target: a message or
// a compaction checkpoint.
func isEntry(b Body) bool {
	switch b.(type) {
	case Message, Compaction:
		return true
	}
	return false
}

// isEntryType is isEntry for a record type.
func isEntryType(t string) bool { return t == TypeMessage || t == TypeCompaction }
