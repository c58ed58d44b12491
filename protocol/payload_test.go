package protocol_test

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"octet.dev/host/protocol"
)

// Every registry payload type is a Payload through its pointer (the form
// RunEvent.Data and PayloadFor carry), and not as a value.
func TestPayloadSealed(t *testing.T) {
	payload := reflect.TypeFor[protocol.Payload]()
	for _, e := range protocol.Events() {
		if e.Payload.Kind() != reflect.Struct {
			t.Errorf("%s: payload %v is not a struct type", e.Type, e.Payload)
			continue
		}
		if !reflect.PointerTo(e.Payload).Implements(payload) {
			t.Errorf("%s: *%v does not implement protocol.Payload", e.Type, e.Payload)
		}
		if e.Payload.Implements(payload) {
			t.Errorf("%s: %v implements protocol.Payload as a value", e.Type, e.Payload)
		}
		if p := protocol.PayloadFor(e.Type); reflect.TypeOf(p) != reflect.PointerTo(e.Payload) {
			t.Errorf("%s: PayloadFor gives %T", e.Type, p)
		}
	}
	if protocol.PayloadFor("no_such_event") != nil {
		t.Error("PayloadFor knows an unknown type")
	}
}

// A type embedding GoAPIEvent is a Payload, and the marker adds nothing to
// its JSON encoding.
func TestGoAPIEventMarker(t *testing.T) {
	type goOnly struct {
		protocol.GoAPIEvent `json:"-"`
		Step                int    `json:"step"`
		Text                string `json:"text"`
	}
	var p protocol.Payload = &goOnly{Step: 2, Text: "x"}
	ev := protocol.RunEvent{Type: "go_only", Data: p}
	// The NDJSON writer and the façade encode with v2, callers with v1.
	for name, marshal := range map[string]func(any) ([]byte, error){
		"v1": func(v any) ([]byte, error) { return json.Marshal(v) },
		"v2": func(v any) ([]byte, error) { return jsonv2.Marshal(v) },
	} {
		b, err := marshal(ev.Data)
		if err != nil {
			t.Fatal(name, err)
		}
		if got, want := string(b), `{"step":2,"text":"x"}`; got != want {
			t.Errorf("%s JSON %s, want %s", name, got, want)
		}
	}
}
