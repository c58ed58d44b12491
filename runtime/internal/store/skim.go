package store

import (
	"errors"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Skimming. Loading a file checks every line as strictly as a full decode
// (decodeRecord) but keeps only the index and the session's aggregates, so
// the records whose bulk is text (messages, checkpoints, run starts) are
// decoded with skimOpts: the JSON is read and validated exactly as before,
// but a string longer than skimMax bytes, as encoded, is not unquoted or
// copied; it decodes as skimmed, and a long raw JSON value (a native
// checkpoint's items) as an empty one of the same kind. A skimmed body
// never leaves the loader. The verdict is the full decode's: a line that
// fails to skim is decoded fully for the error it reports, and a record
// whose skimmed strings the index would need (a run ID, a reasoning
// update, a media reference that validate checks, a checkpoint's route) is
// decoded fully instead.

// skimMax is the longest encoded string, quotes included, that skimming
// still decodes.
const skimMax = 128

// skimmed is what a longer string decodes to. No line can hold it: the
// encoder escapes NUL.
const skimmed = "\x00skimmed"

// skimOpts is built on first use, not at package init.
var skimOpts = sync.OnceValue(func() json.Options {
	return json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(skimString),
		json.UnmarshalFromFunc(skimValue),
	))
})

// skimString decodes a JSON string into s, or skimmed when it is long.
// Any other kind (null, or a kind a string cannot take) goes to the
// default decoding, which gives the same result or error as without
// skimming.
func skimString(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' {
		return errors.ErrUnsupported
	}
	v, err := dec.ReadValue() // validates the string, escapes and UTF-8
	if err != nil {
		return err
	}
	if len(v) > skimMax {
		*s = skimmed
		return nil
	}
	var buf [skimMax]byte
	b, err := jsontext.AppendUnquote(buf[:0], v)
	if err != nil {
		return err
	}
	*s = string(b)
	return nil
}

// skimValue decodes a raw JSON value, keeping only the kind of a long
// array, object or string (validate checks the kind of a native
// checkpoint's items). Other kinds go to the default decoding.
func skimValue(dec *jsontext.Decoder, v *jsontext.Value) error {
	k := dec.PeekKind()
	if k != '[' && k != '{' && k != '"' {
		return errors.ErrUnsupported
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if len(raw) > skimMax {
		switch k {
		case '[':
			raw = jsontext.Value("[]")
		case '{':
			raw = jsontext.Value("{}")
		default:
			raw = jsontext.Value(`""`)
		}
	}
	*v = append((*v)[:0], raw...)
	return nil
}

// skimAs decodes line as a T record with skimOpts.
func skimAs[T Body](line []byte) (Record, error) {
	var env envelope[T]
	if err := json.Unmarshal(line, &env, skimOpts()); err != nil {
		return Record{}, err
	}
	if env.TS.IsZero() {
		return Record{}, errors.New("zero ts") // decodeRecord gives the error
	}
	return Record{TS: env.TS, Body: env.Body}, nil
}

// decodeSkim is decodeRecord for loading: the same verdict, from the fast
// path (fastTypes) when the line is canonical, else with the bulk of
// messages, checkpoints and run starts skimmed.
func decodeSkim(line []byte) (Record, error) {
	typ, _ := sniffType(line)
	if f := fastTypes()[typ]; f != nil {
		if r, ok := f.decode(line); ok {
			return r, nil
		}
	}
	var r Record
	var err error
	switch typ {
	case TypeMessage:
		if r, err = skimAs[Message](line); err == nil && !skimmedMessage(r.Body.(Message)) {
			return r, nil
		}
	case TypeCompaction:
		if r, err = skimAs[Compaction](line); err == nil && r.Body.(Compaction).Route != skimmed {
			return r, nil
		}
	case TypeRunStart:
		if r, err = skimAs[RunStart](line); err == nil && r.Body.(RunStart).RunID != skimmed {
			return r, nil
		}
	}
	return decodeRecord(line)
}

// skimmedMessage reports whether m lost to skimming a string that the index
// keeps or validate checks. The role is among them: the index compares it
// (observe). No role this build writes is long enough to be skimmed, but a
// line written by hand may carry one, and its record must then be the full
// decode's, not a placeholder.
func skimmedMessage(m Message) bool {
	if m.RunID == skimmed || m.Message.Role == skimmed || m.Message.ReasoningEffort == skimmed {
		return true
	}
	for _, list := range [][]MediaV1{m.Message.Media, m.Message.OutputMedia} {
		for _, x := range list {
			if x.Type == skimmed || x.MIMEType == skimmed || x.SHA256 == skimmed {
				return true
			}
		}
	}
	return false
}
