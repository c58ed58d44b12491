package store

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/provider"
)

// notStored are the provider fields the record form leaves out on purpose.
var notStored = map[string]bool{
	"Message.NewTurn":           true, // derived from the run records
	"Message.NativeItems":       true, // built from a native checkpoint
	"Media.Data":                true, // the bytes live beside the session
	"ToolCall.ArgumentsDropped": true, // the call is answered in the same run
}

// fill sets every field of the struct v points to (recursively, one
// element per slice) to a value that is not zero and differs per field.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)) + string(rune('a'+*n/26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{byte(*n)})
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	}
}

// clearNotStored zeroes the notStored fields below v.
func clearNotStored(v reflect.Value) {
	switch v.Kind() {
	case reflect.Slice:
		for i := range v.Len() {
			clearNotStored(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if notStored[v.Type().Name()+"."+v.Type().Field(i).Name] {
				v.Field(i).SetZero()
			} else {
				clearNotStored(v.Field(i))
			}
		}
	}
}

// TestConvertCoversProvider converts provider values with every field set
// to the record form and back: every field must survive but the ones
// listed in notStored. A field added to a provider type fails it until a
// conversion maps it (and the format gains a member: see doc.go) or it is
// listed as never stored.
func TestConvertCoversProvider(t *testing.T) {
	var n int
	var m provider.Message
	fill(reflect.ValueOf(&m).Elem(), &n)
	want := m
	want.ReasoningBlocks = append([]provider.ReasoningBlock(nil), m.ReasoningBlocks...)
	want.Media = append([]provider.Media(nil), m.Media...)
	want.OutputMedia = append([]provider.Media(nil), m.OutputMedia...)
	want.ToolCalls = append([]provider.ToolCall(nil), m.ToolCalls...)
	clearNotStored(reflect.ValueOf(&want).Elem())
	v1 := NewMessageV1(m)
	if diff := cmp.Diff(want, v1.Provider()); diff != "" {
		t.Errorf("Message round trip (-want +got):\n%s", diff)
	}

	var u provider.Usage
	fill(reflect.ValueOf(&u).Elem(), &n)
	if got := NewUsageV1(u).Provider(); got != u {
		t.Errorf("Usage round trip: %+v, want %+v", got, u)
	}

	// The record form has no member the provider's type lacks.
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[MessageV1](), reflect.TypeFor[provider.Message]()},
		{reflect.TypeFor[ReasoningBlockV1](), reflect.TypeFor[provider.ReasoningBlock]()},
		{reflect.TypeFor[MediaV1](), reflect.TypeFor[provider.Media]()},
		{reflect.TypeFor[ToolCallV1](), reflect.TypeFor[provider.ToolCall]()},
		{reflect.TypeFor[UsageV1](), reflect.TypeFor[provider.Usage]()},
	} {
		rec, prov := pair[0], pair[1]
		for i := range rec.NumField() {
			if _, ok := prov.FieldByName(rec.Field(i).Name); !ok {
				t.Errorf("%s.%s has no provider field", rec.Name(), rec.Field(i).Name)
			}
		}
		stored := 0
		for i := range prov.NumField() {
			if !notStored[prov.Name()+"."+prov.Field(i).Name] {
				stored++
			}
		}
		if stored != rec.NumField() {
			t.Errorf("%s has %d fields, %s %d stored ones", rec.Name(), rec.NumField(), prov.Name(), stored)
		}
	}
}

// TestConvertKeepsEmpty: nil slices stay nil and empty ones empty, both
// ways, and the conversation's slices are capped (appending to one never
// writes into the next message's).
func TestConvertKeepsEmpty(t *testing.T) {
	m := MessageV1{Role: RoleAssistant, ToolCalls: []ToolCallV1{}}
	p := m.Provider()
	if p.ToolCalls == nil || len(p.ToolCalls) != 0 || p.Media != nil || p.ReasoningBlocks != nil {
		t.Errorf("Provider: %+v", p)
	}
	back := NewMessageV1(p)
	if back.ToolCalls == nil || back.Media != nil {
		t.Errorf("NewMessageV1: %+v", back)
	}

	var sl slabs
	a := MessageV1{Role: RoleAssistant, ToolCalls: []ToolCallV1{{ID: "a"}}}
	b := MessageV1{Role: RoleAssistant, ToolCalls: []ToolCallV1{{ID: "b"}}}
	sl.reserve(&a)
	sl.reserve(&b)
	sl.alloc()
	pa, pb := sl.message(&a), sl.message(&b)
	_ = append(pa.ToolCalls, provider.ToolCall{ID: "x"})
	if pb.ToolCalls[0].ID != "b" || cap(pa.ToolCalls) != 1 {
		t.Errorf("slab slices overlap: %+v %+v", pa.ToolCalls, pb.ToolCalls)
	}
}
