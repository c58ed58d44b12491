package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
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
// on. msgs is the number of message records before r and prior the records
// before it, in file order.
func validate(r Record, msgs int, prior func(entry int) Body, n int) error {
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
		if b.Entry > 0 && !isEntry(prior(b.Entry)) {
			return fmt.Errorf("checkout entry %d is a %s record, not a message or compaction", b.Entry, prior(b.Entry).RecordType())
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

// loaded is the result of parsing a session file.
type loaded struct {
	header Header
	recs   []Record
	// good is the offset just past the last good line; the file is
	// truncated to it before the next append when torn > 0.
	good int64
	// torn is the number of bytes of the torn tail after good.
	torn int64
}

// parse loads a whole session file. A last line without '\n', or a last
// line that does not decode, is a torn tail: it is reported, not returned.
// Anything invalid before the last line is an error wrapping ErrCorrupt with
// its line number; a header of another schema version wraps
// ErrUnsupportedSchema. parse never modifies data.
func parse(data []byte, path, id string) (loaded, error) {
	return parseWith(data, path, id, runtime.GOMAXPROCS(0))
}

// parallelMinLines is the number of record lines from which parse decodes
// on several goroutines; below it the goroutines cost more than they save.
const parallelMinLines = 512

// parseWith is parse with at most workers decoding goroutines. The result
// does not depend on workers: lines decode independently, and everything
// that depends on order (validation, torn tail or corruption) is decided
// afterwards in one pass.
func parseWith(data []byte, path, id string, workers int) (loaded, error) {
	corrupt := func(line int, err error) (loaded, error) {
		return loaded{}, &CorruptError{Path: path, Line: line, Err: err}
	}
	if len(data) == 0 {
		return corrupt(1, errors.New("empty file, no header"))
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return corrupt(1, errors.New("header line has no newline"))
	}
	h, err := decodeHeader(data[:nl], id)
	if errors.Is(err, ErrUnsupportedSchema) {
		if path != "" {
			return loaded{}, fmt.Errorf("%w: %s", err, path)
		}
		return loaded{}, err
	}
	if err != nil {
		return corrupt(1, err)
	}

	// Split the complete lines after the header; tail is what follows the
	// last '\n'.
	body := data[nl+1:]
	lines := make([]span, 0, bytes.Count(body, []byte{'\n'}))
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '\n')
		if i < 0 {
			break
		}
		lines = append(lines, span{pos, pos + i})
		pos += i + 1
	}
	tail := len(body)
	if len(lines) > 0 {
		tail -= lines[len(lines)-1].end + 1
	}

	recs := make([]Record, len(lines))
	bad, badErr := decodeLines(body, lines, recs, workers)
	msgs := 0
	for i := range bad {
		if err := validate(recs[i], msgs, func(e int) Body { return recs[e-1].Body }, i); err != nil {
			bad, badErr = i, err
			break
		}
		if _, ok := recs[i].Body.(Message); ok {
			msgs++
		}
	}
	l := loaded{header: h, recs: recs[:bad], good: int64(len(data) - tail), torn: int64(tail)}
	if bad < len(lines) {
		if bad < len(lines)-1 || tail > 0 {
			return corrupt(bad+2, badErr) // +1 for the header, +1 for 1-based
		}
		// The last line is complete but invalid: a torn tail too.
		l.good = int64(nl + 1 + lines[bad].start)
		l.torn = int64(len(data)) - l.good
	}
	return l, nil
}

// span is one line of a buffer, without its newline.
type span struct{ start, end int }

// decodeLines decodes each line into recs. It returns the index of the
// first line that fails to decode, with its error, or len(lines) and nil.
// With workers > 1 and enough lines, contiguous chunks decode on their own
// goroutines, all finished before it returns.
func decodeLines(buf []byte, lines []span, recs []Record, workers int) (int, error) {
	decodeChunk := func(lo, hi int) (int, error) {
		for i := lo; i < hi; i++ {
			r, err := decodeRecord(buf[lines[i].start:lines[i].end])
			if err != nil {
				return i, err
			}
			recs[i] = r
		}
		return hi, nil
	}
	workers = min(workers, len(lines)/(parallelMinLines/2))
	if workers <= 1 || len(lines) < parallelMinLines {
		return decodeChunk(0, len(lines))
	}
	type result struct {
		bad int
		err error
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(lines)/workers, (w+1)*len(lines)/workers
		wg.Go(func() {
			bad, err := decodeChunk(lo, hi)
			results[w] = result{bad, err}
		})
	}
	wg.Wait()
	for _, r := range results { // chunks are in line order
		if r.err != nil {
			return r.bad, r.err
		}
	}
	return len(lines), nil
}
