package store

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The fast path of loading. Almost every line of a session file is exactly
// what this package's encoder wrote: one compact object, members in field
// order, strings escaped the encoder's way. fastDecode recognizes such a
// line by a schema derived from the record's Go type and decodes it without
// the JSON library's per-value machinery; it declines (ok false) anything
// outside a strict subset that decodeRecord certainly accepts the same way:
// whitespace, null, an unknown or repeated or escaped member name, a
// string with a surrogate escape or a control character, a number of
// another form, a time not in the encoder's UTC form, invalid UTF-8. A
// declined line goes to the skimming decoder and then, when needed, the full
// one, so the verdict on every line is still decodeRecord's.
//
// Of a message it decodes only what loading keeps or checks (run ID,
// origin, role, reasoning update, media references) and of a run start its
// run ID; the rest is checked, not kept. The other types it handles are
// decoded whole.

// fastKind is the JSON shape of a schema node.
type fastKind uint8

const (
	fastString fastKind = iota
	fastBool
	fastInt
	fastFloat
	fastTime
	fastStruct
	fastSlice
)

// fastNode is a schema node: the Go type a JSON value decodes into.
type fastNode struct {
	kind   fastKind
	bits   int         // fastInt, fastFloat: the Go type's size
	fields []fastField // fastStruct
	elem   *fastNode   // fastSlice
	typ    reflect.Type
}

// fastField is a member of a struct node.
type fastField struct {
	name  string
	index []int // in the Go struct, through embedded ones
	node  *fastNode
	keep  bool // decode the value; else only check it
}

// keeps reports whether some member below n is kept.
func (n *fastNode) keeps() bool {
	switch n.kind {
	case fastStruct:
		for _, f := range n.fields {
			if f.keep {
				return true
			}
		}
	case fastSlice:
		return n.elem.keeps()
	}
	return false
}

// fastType is the fast path of one record type.
type fastType struct {
	root   *fastNode
	decode func(line []byte) (Record, bool)
}

var (
	timeType         = reflect.TypeFor[time.Time]()
	unmarshalerTypes = []reflect.Type{
		reflect.TypeFor[json.UnmarshalerFrom](),
		reflect.TypeFor[json.Unmarshaler](),
		reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// fastSchema builds the schema of t; keep reports, for a member's path of
// JSON names joined by '.', whether its value is decoded (a kept member's
// members all are). A type the fast path does not support (a pointer, a map,
// an interface, a custom unmarshaler, a tag option other than omitempty,
// omitzero and embed) is an error: that record type then always takes the
// general path.
func fastSchema(t reflect.Type, keep func(path string) bool) (*fastNode, error) {
	return buildFast(t, "", keep)
}

func buildFast(t reflect.Type, path string, keep func(string) bool) (*fastNode, error) {
	if t == timeType {
		return &fastNode{kind: fastTime, typ: t}, nil
	}
	for _, u := range unmarshalerTypes {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return nil, fmt.Errorf("%s has its own unmarshaling", t)
		}
	}
	switch t.Kind() {
	case reflect.String:
		return &fastNode{kind: fastString, typ: t}, nil
	case reflect.Bool:
		return &fastNode{kind: fastBool, typ: t}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &fastNode{kind: fastInt, bits: t.Bits(), typ: t}, nil
	case reflect.Float64:
		return &fastNode{kind: fastFloat, bits: 64, typ: t}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("%s is encoded as base64", t)
		}
		elem, err := buildFast(t.Elem(), path, keep)
		if err != nil {
			return nil, err
		}
		return &fastNode{kind: fastSlice, elem: elem, typ: t}, nil
	case reflect.Struct:
		n := &fastNode{kind: fastStruct, typ: t}
		if err := addFastFields(n, t, nil, path, keep); err != nil {
			return nil, err
		}
		if len(n.fields) > 64 {
			return nil, fmt.Errorf("%s has more than 64 members", t)
		}
		return n, nil
	}
	return nil, fmt.Errorf("%s: kind %s is not supported", t, t.Kind())
}

func addFastFields(n *fastNode, t reflect.Type, index []int, path string, keep func(string) bool) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		if !sf.IsExported() {
			if hasTag || sf.Anonymous {
				return fmt.Errorf("%s.%s: unexported field with a tag or embedded", t, sf.Name)
			}
			continue
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		embed := false
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "", "omitempty", "omitzero":
			case "embed", "inline":
				embed = true
			default:
				return fmt.Errorf("%s.%s: tag option %q is not supported", t, sf.Name, opt)
			}
		}
		idx := append(append([]int(nil), index...), i)
		if embed {
			if name != "" || sf.Type.Kind() != reflect.Struct {
				return fmt.Errorf("%s.%s: unsupported embedding", t, sf.Name)
			}
			if err := addFastFields(n, sf.Type, idx, path, keep); err != nil {
				return err
			}
			continue
		}
		if name == "" || sf.Anonymous {
			return fmt.Errorf("%s.%s: a member needs a name", t, sf.Name)
		}
		sub := name
		if path != "" {
			sub = path + "." + name
		}
		child, err := buildFast(sf.Type, sub, func(p string) bool { return keep(sub) || keep(p) })
		if err != nil {
			return err
		}
		for _, f := range n.fields {
			if f.name == name {
				return fmt.Errorf("%s: member %q twice", t, name)
			}
		}
		n.fields = append(n.fields, fastField{name: name, index: idx, node: child, keep: keep(sub) || child.keeps()})
	}
	return nil
}

// fastPaths builds the fast paths by record type once, when a store is
// first read (not at package init: a process that reads no session, a
// hello, does not pay for it); a type whose schema failed to build has
// none (see TestFastSchemas).
var fastPaths = sync.OnceValues(buildFastTypes)

// fastTypes are the fast paths by record type.
func fastTypes() map[string]*fastType { t, _ := fastPaths(); return t }

// fastErrs are the errors of the types whose fast path failed to build.
func fastErrs() map[string]error { _, e := fastPaths(); return e }

func buildFastTypes() (map[string]*fastType, map[string]error) {
	types, errs := map[string]*fastType{}, map[string]error{}
	all := func(p string) bool { return p != "type" } // the type is known
	add := func(typ string, t reflect.Type, keep func(string) bool, decode func(*fastNode) func([]byte) (Record, bool)) {
		root, err := fastSchema(t, keep)
		if err != nil {
			errs[typ] = err
			return
		}
		types[typ] = &fastType{root: root, decode: decode(root)}
	}
	add(TypeMessage, reflect.TypeFor[envelope[Message]](), func(p string) bool {
		switch p {
		case "ts", "run_id", "origin", "message.role", "message.reasoning_effort", "message.media", "message.output_media":
			return true
		}
		return false
	}, fastAs[Message])
	add(TypeRunStart, reflect.TypeFor[envelope[RunStart]](), func(p string) bool { return p == "ts" || p == "run_id" }, fastAs[RunStart])
	add(TypeModelChange, reflect.TypeFor[envelope[ModelChange]](), all, fastAs[ModelChange])
	add(TypeUsage, reflect.TypeFor[envelope[Usage]](), all, fastAs[Usage])
	add(TypeReasoningChange, reflect.TypeFor[envelope[ReasoningChange]](), all, fastAs[ReasoningChange])
	add(TypeRunEnd, reflect.TypeFor[envelope[RunEnd]](), all, fastAs[RunEnd])
	add(TypeCheckout, reflect.TypeFor[envelope[Checkout]](), all, fastAs[Checkout])
	add(TypeNativeSteering, reflect.TypeFor[envelope[NativeSteering]](), all, fastAs[NativeSteering])
	add(TypeUsageUncertainty, reflect.TypeFor[envelope[uncertaintyBody]](), all, func(root *fastNode) func([]byte) (Record, bool) {
		return func(line []byte) (Record, bool) {
			var env envelope[uncertaintyBody]
			if !fastDecode(root, line, reflect.ValueOf(&env).Elem()) || env.TS.IsZero() {
				return Record{}, false
			}
			return Record{TS: env.TS, Body: env.Body.Record}, true
		}
	})
	return types, errs
}

// fastAs returns the fast decoder of T records with schema root.
func fastAs[T Body](root *fastNode) func([]byte) (Record, bool) {
	return func(line []byte) (Record, bool) {
		var env envelope[T]
		if !fastDecode(root, line, reflect.ValueOf(&env).Elem()) || env.TS.IsZero() {
			return Record{}, false
		}
		return Record{TS: env.TS, Body: env.Body}, true
	}
}

// commonString returns the shared string of a value many records hold
// (roles, statuses, events), so decoding it allocates nothing; ok is false
// for any other value. A switch, not a map built at package init.
func commonString(raw []byte) (string, bool) {
	switch string(raw) {
	case RoleUser:
		return RoleUser, true
	case RoleAssistant:
		return RoleAssistant, true
	case RoleTool:
		return RoleTool, true
	case RoleDeveloper:
		return RoleDeveloper, true
	case "completed":
		return "completed", true
	case "blocked":
		return "blocked", true
	case "error":
		return "error", true
	case "steering":
		return "steering", true
	case "follow_up":
		return "follow_up", true
	case "image":
		return "image", true
	case "audio":
		return "audio", true
	case NativeIntent:
		return NativeIntent, true
	case NativeAccepted:
		return NativeAccepted, true
	case NativeLinked:
		return NativeLinked, true
	case NativeSettled:
		return NativeSettled, true
	case NativeUnknown:
		return NativeUnknown, true
	case NativeOutcomeDelivered:
		return NativeOutcomeDelivered, true
	case NativeOutcomeFailed:
		return NativeOutcomeFailed, true
	}
	return "", false
}

// fastDecode decodes line, one object of schema root, into v; false when
// the line is not in the strict canonical subset.
func fastDecode(root *fastNode, line []byte, v reflect.Value) bool {
	if !plainLine(line) {
		return false
	}
	d := fastDecoder{b: line}
	return d.value(root, v) && d.p == len(line)
}

// fastDecoder reads one line.
type fastDecoder struct {
	b []byte
	p int
}

// value reads a value of node n into v, or only checks it when v is not
// valid.
func (d *fastDecoder) value(n *fastNode, v reflect.Value) bool {
	switch n.kind {
	case fastString:
		start, end, esc, ok := d.str()
		if !ok {
			return false
		}
		if v.IsValid() {
			if !esc {
				raw := d.b[start+1 : end-1]
				if c, ok := commonString(raw); ok {
					v.SetString(c) // no allocation for the usual roles, statuses, events
				} else {
					v.SetString(string(raw))
				}
				return true
			}
			u, err := jsontext.AppendUnquote(nil, d.b[start:end])
			if err != nil {
				return false
			}
			v.SetString(string(u))
		}
		return true
	case fastTime:
		start, end, esc, ok := d.str()
		if !ok || esc {
			return false
		}
		t, ok := parseCanonicalTime(d.b[start+1 : end-1])
		if ok && v.IsValid() {
			v.Set(reflect.ValueOf(t))
		}
		return ok
	case fastBool:
		switch {
		case d.lit("true"):
			if v.IsValid() {
				v.SetBool(true)
			}
		case d.lit("false"):
			if v.IsValid() {
				v.SetBool(false)
			}
		default:
			return false
		}
		return true
	case fastInt:
		raw, isInt := d.number()
		if !isInt {
			return false
		}
		x, err := strconv.ParseInt(string(raw), 10, n.bits)
		if err != nil {
			return false
		}
		if v.IsValid() {
			v.SetInt(x)
		}
		return true
	case fastFloat:
		raw, _ := d.number()
		if raw == nil {
			return false
		}
		x, err := strconv.ParseFloat(string(raw), n.bits)
		if err != nil {
			return false
		}
		if v.IsValid() {
			v.SetFloat(x)
		}
		return true
	case fastSlice:
		if !d.byte('[') {
			return false
		}
		if v.IsValid() {
			v.Set(reflect.MakeSlice(n.typ, 0, 0)) // [] is an empty slice, not nil
		}
		if d.byte(']') {
			return true
		}
		for {
			var e reflect.Value
			if v.IsValid() {
				v.Set(reflect.Append(v, reflect.Zero(n.elem.typ)))
				e = v.Index(v.Len() - 1)
			}
			if !d.value(n.elem, e) {
				return false
			}
			if d.byte(']') {
				return true
			}
			if !d.byte(',') {
				return false
			}
		}
	case fastStruct:
		if !d.byte('{') {
			return false
		}
		if d.byte('}') {
			return true
		}
		var seen uint64
		for {
			start, end, esc, ok := d.str()
			if !ok || esc || !d.byte(':') {
				return false
			}
			name := d.b[start+1 : end-1]
			j := 0
			for j < len(n.fields) && n.fields[j].name != string(name) {
				j++
			}
			if j == len(n.fields) || seen&(1<<j) != 0 {
				return false // unknown or repeated: the general path decides
			}
			seen |= 1 << j
			f := &n.fields[j]
			var fv reflect.Value
			if f.keep && v.IsValid() {
				fv = v.FieldByIndex(f.index)
			}
			if !d.value(f.node, fv) {
				return false
			}
			if d.byte('}') {
				return true
			}
			if !d.byte(',') {
				return false
			}
		}
	}
	return false
}

// byte consumes c when it is next.
func (d *fastDecoder) byte(c byte) bool {
	if d.p < len(d.b) && d.b[d.p] == c {
		d.p++
		return true
	}
	return false
}

// lit consumes the literal s when it is next.
func (d *fastDecoder) lit(s string) bool {
	if len(d.b)-d.p >= len(s) && string(d.b[d.p:d.p+len(s)]) == s {
		d.p += len(s)
		return true
	}
	return false
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// isInt reports an integer without fraction or exponent, and not "-0". raw
// is nil when no number is next.
func (d *fastDecoder) number() (raw []byte, isInt bool) {
	b, p := d.b, d.p
	digits := func() bool {
		q := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		return p > q
	}
	if p < len(b) && b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		digits()
	default:
		return nil, false
	}
	isInt = string(b[d.p:p]) != "-0"
	if p < len(b) && b[p] == '.' {
		p++
		if !digits() {
			return nil, false
		}
		isInt = false
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		if !digits() {
			return nil, false
		}
		isInt = false
	}
	raw, d.p = b[d.p:p], p
	return raw, isInt
}

// SWAR masks: a byte value in each of 8 lanes.
const (
	lanes20 = 0x2020202020202020
	lanes80 = 0x8080808080808080
)

// plainLine reports whether b is valid UTF-8 without control characters:
// a canonical line has none outside strings (no whitespace) and none raw
// inside them.
func plainLine(b []byte) bool {
	for i := 0; i < len(b); {
		// 8 bytes at a time while all are ASCII and none is a control
		// character (the high bit of x, or of a lane that borrowed
		// below 0x20).
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if (x|((x-lanes20)&^x))&lanes80 != 0 {
				break
			}
			i += 8
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
	return true
}

// str consumes a JSON string: start and end are the offsets of its quotes
// (end past the closing one), esc whether it holds an escape. It declines
// an escape other than \" \\ \/ \b \f \n \r \t and \uXXXX, and a \u escape
// of a surrogate (whose pairing the full decoder checks). Control
// characters and UTF-8 are checked for the whole line (plainLine).
func (d *fastDecoder) str() (start, end int, esc, ok bool) {
	b, p := d.b, d.p
	if p >= len(b) || b[p] != '"' {
		return 0, 0, false, false
	}
	start = p
	p++
	q := 0 // the next quote at or after p, once found
	for {
		if q < p {
			if q = bytes.IndexByte(b[p:], '"'); q < 0 {
				return 0, 0, false, false
			}
			q += p
		}
		bs := bytes.IndexByte(b[p:q], '\\')
		if bs < 0 {
			d.p = q + 1
			return start, d.p, esc, true
		}
		p += bs
		esc = true
		if p+1 >= len(b) {
			return 0, 0, false, false
		}
		switch b[p+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p += 2
		case 'u':
			if p+6 > len(b) {
				return 0, 0, false, false
			}
			r, err := strconv.ParseUint(string(b[p+2:p+6]), 16, 16)
			if err != nil || (r >= 0xD800 && r <= 0xDFFF) {
				return 0, 0, false, false
			}
			p += 6
		default:
			return 0, 0, false, false
		}
	}
}

// parseCanonicalTime parses a time in the form the encoder writes:
// YYYY-MM-DDTHH:MM:SS, up to 9 fraction digits, Z.
func parseCanonicalTime(s []byte) (time.Time, bool) {
	const layout = "0000-00-00T00:00:00"
	if len(s) < len(layout)+1 || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	for i := range len(layout) {
		if c := s[i]; layout[i] == '0' {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		} else if c != layout[i] {
			return time.Time{}, false
		}
	}
	if frac := s[len(layout) : len(s)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return time.Time{}, false
		}
		for _, c := range frac[1:] {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
