package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// obj is a JSON object whose members keep their order: alternating keys
// (strings) and values. Real providers write "type" and "id" first; keeping
// that order makes the fake's streams read like recordings.
type obj []any

// arr is a JSON array of values obj understands.
type arr []any

// raw is JSON text inserted as is.
type raw []byte

// encode returns the compact JSON text of v. Strings are escaped the way
// the providers do it: no HTML escaping of <, > and &.
func encode(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case obj:
		if len(v)%2 != 0 {
			panic("fakeprovider: obj with an odd number of elements")
		}
		b.WriteByte('{')
		for i := 0; i < len(v); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, v[i].(string))
			b.WriteByte(':')
			writeJSON(b, v[i+1])
		}
		b.WriteByte('}')
	case arr:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case raw:
		b.Write(v)
	case string:
		writeString(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	default:
		panic(fmt.Sprintf("fakeprovider: cannot encode %T", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
