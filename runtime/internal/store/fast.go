package store

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
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
	unmarshalerTypes = [...]reflect.Type{
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
