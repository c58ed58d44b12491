package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// shape describes the expected structure of a JSON document, so that the
// file is checked before encoding/json decodes it: encoding/json accepts
// unknown keys in another letter case and duplicate keys, and its type errors
// do not say which map entry or array element is at fault.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // kindObject: the allowed keys, exactly spelled
	elem   *shape            // kindMap: every value; kindArray: every element
}

type shapeKind int

const (
	kindString shapeKind = iota
	kindInt
	kindNumber
	kindBool
	kindObject // fixed keys
	kindMap    // any keys, values of one shape
	kindArray
)

var (
	str     = &shape{kind: kindString}
	integer = &shape{kind: kindInt}
	number  = &shape{kind: kindNumber}
	boolean = &shape{kind: kindBool}
)

func objectOf(fields map[string]*shape) *shape { return &shape{kind: kindObject, fields: fields} }
func mapOf(elem *shape) *shape                 { return &shape{kind: kindMap, elem: elem} }
func arrayOf(elem *shape) *shape               { return &shape{kind: kindArray, elem: elem} }

// describe names what a shape expects.
func (s *shape) describe() string {
	switch s.kind {
	case kindString:
		return "a string"
	case kindInt:
		return "an integer"
	case kindNumber:
		return "a number"
	case kindBool:
		return "true or false"
	case kindArray:
		return "an array"
	}
	return "an object"
}

// checkShape walks data and reports the first syntax error, value of the
// wrong JSON type, unknown or wrongly cased key, duplicate key, or trailing
// data. JSON null is accepted for objects and arrays (meaning "absent") but
// not for strings, numbers or booleans.
func checkShape(data []byte, s *shape) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, s, ""); err != nil {
		return configError("", jsonError(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return configError("", jsonError(data, err))
		}
		return configError("", errors.New("invalid JSON: unexpected data after the top-level object"))
	}
	return nil
}

// jsonError describes a walk error, turning syntax errors into positions.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return describeJSONError(data, err)
	}
	return err
}

// walkValue consumes one JSON value from dec and checks it against s.
func walkValue(dec *json.Decoder, s *shape, path string) error {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	where := path
	if where == "" {
		where = "top level"
	}
	mismatch := func(found string) error {
		return fmt.Errorf("%s: expected %s, found %s", where, s.describe(), found)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			if s.kind != kindObject && s.kind != kindMap {
				return mismatch("an object")
			}
			return walkObject(dec, s, path)
		case '[':
			if s.kind != kindArray {
				return mismatch("an array")
			}
			for i := 0; dec.More(); i++ {
				if err := walkValue(dec, s.elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			return err
		}
		return fmt.Errorf("invalid JSON: unexpected %q", v)
	case nil:
		if s.kind == kindObject || s.kind == kindMap || s.kind == kindArray {
			return nil
		}
		return mismatch("null")
	case string:
		if s.kind != kindString {
			return mismatch("a string")
		}
	case bool:
		if s.kind != kindBool {
			return mismatch("true or false")
		}
	case json.Number:
		switch s.kind {
		case kindNumber:
			if _, err := v.Float64(); err != nil {
				return fmt.Errorf("%s: number %s is out of range", where, v)
			}
		case kindInt:
			n, err := strconv.ParseInt(v.String(), 10, 64)
			if err != nil || n != int64(int(n)) {
				return fmt.Errorf("%s: expected an integer, found %s", where, v)
			}
		default:
			return mismatch("a number")
		}
	}
	return nil
}

// walkObject consumes the members of an object whose '{' was just read.
func walkObject(dec *json.Decoder, s *shape, path string) error {
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("invalid JSON: object key is not a string")
		}
		where := joinPath(path, key)
		if seen[key] {
			if s.kind == kindMap && path == "providers" {
				return fmt.Errorf("duplicate provider %q", key)
			}
			return fmt.Errorf("%s: duplicate key", where)
		}
		seen[key] = true
		child := s.elem
		if s.kind == kindObject {
			c, known := s.fields[key]
			if !known {
				return fmt.Errorf("%s: unknown field", where)
			}
			child = c
		}
		if err := walkValue(dec, child, where); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// joinPath appends an object key to a dotted location.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
